//! The real `talos` and `talosd` binaries: `talos run` and its sessions, `talos config`, the
//! interactive session in a pseudo-terminal, checkpoints, `talos doctor`, the daemon started on
//! demand, completions and man pages, paths and terminals, and what the packages promise. One test
//! binary, one module per subject (issue 30, item 5).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

mod binaries;
mod checkpoints;
mod config;
mod doctor;
mod generate;
mod interactive;
mod packaging;
mod paths;
mod reading;
mod sessions;

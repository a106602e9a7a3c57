//! talos-tests: the end-to-end harness (the daemon in-process on a real socket, and the real
//! binaries), the fake llama server, and repository invariants (`tests/tidy/`).
//!
//! This crate is test infrastructure: panicking on a broken fixture is the right failure, so
//! `unwrap`/`expect` are allowed here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod acp_bridge;
pub mod cli;
pub mod fake_llama;
pub mod harness;
pub mod load;
pub mod managed;
pub mod mcp_servers;
pub mod process;
pub mod pty;
pub mod real_llama;

//! Editors through `talos acp`: a client written on ACP's official SDK, and conformance with
//! ACP's own SDK and schema. One test binary, one module per subject (issue 30, item 5).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

mod acp;
mod acp_store;
mod conformance;
mod reading;

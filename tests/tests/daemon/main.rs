//! The daemon through its real socket against the fake model: the protocol, sessions and their
//! limits, reliability and faults, managed and connected model servers, keys and TLS, durability,
//! hostile sockets and homes, cancel, continue, restore and traces. One test binary, one module
//! per subject (issue 30, item 5).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

mod activation;
mod cancel;
mod continuation;
mod durability;
mod engines;
mod fake_llama_server;
mod faults;
mod hostile_home;
mod hostile_socket;
mod idle_sessions;
mod keys;
mod load;
mod lost_update;
mod managed;
mod models;
mod protocol;
mod reliability;
mod restore;
mod session_cap;
mod sessions_persist;
mod traces;
mod two_users;

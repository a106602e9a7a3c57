//! talosd: the Talos daemon, the IO shell around talos-core.
//!
//! It owns the socket server and its connections, the sessions, the model engine (HTTP to
//! llama-server), tool execution inside the workspace boundary, the checkpoint store and the
//! trace writer. Decisions are made by `talos-core`; this crate performs the effects.

pub mod activation;
pub mod beneath;
pub mod checkpoint;
pub mod clock;
pub mod commands;
pub mod config;
pub mod connection;
pub mod contain;
pub mod custom_commands;
pub mod dispatch;
pub mod doctor;
pub mod documents;
pub mod engine;
pub mod gc;
pub mod home;
pub mod hooks;
pub mod ids;
pub mod index;
pub mod instructions;
pub mod lifecycle;
pub mod limits;
pub mod logging;
pub mod man_page;
pub mod mcp;
pub mod models;
pub mod offload;
pub mod paths;
pub mod profiles;
pub mod read_tools;
pub mod reading;
pub mod recovery;
pub mod retention;
pub mod runner;
pub mod server;
pub mod session_store;
pub mod sessions;
pub mod socket;
pub mod store_gate;
pub mod supervisor;
pub mod to_proto;
pub mod traces;
pub mod turn;
// std::fs in webcheck: the headless browser's scratch folder in the temp dir and the browser
// probe, not workspace files (the verifier reads the workspace through turn/verify.rs).
#[allow(clippy::disallowed_methods)]
pub mod webcheck;
pub mod workspace;

pub use server::{Daemon, DaemonSettings};

use std::future::Future;
use std::sync::Arc;

/// Serves `listener` with the daemon's method table until `shutdown` resolves or a client
/// calls `daemon/shutdown`, after restoring the sessions a previous daemon persisted
/// (`lifecycle`); then cancels in-flight turns, waits for their traces, and returns.
/// The wiring lives here, at the crate root, so that neither the accept loop (`server`) nor a
/// connection (`connection`) depends on the method table (`dispatch`) that depends on them.
pub async fn run(
    daemon: Arc<Daemon>,
    listener: tokio::net::UnixListener,
    shutdown: impl Future<Output = ()>,
) {
    // Retention at start, before the first request is answered (and before the persisted
    // sessions are reopened, so a session past the age limit is not reopened), then hourly.
    if let Err(e) = gc::run_once(&daemon) {
        tracing::warn!(error = %e, "retention skipped at start");
    }
    offload::blocking(|| lifecycle::restore_at_start(&daemon));
    let handler = Arc::new(dispatch::Dispatch::new(daemon.clone()));
    let housekeeping = tokio::spawn(gc::periodic(daemon.clone()));
    let idle = tokio::spawn(release_idle_sessions(daemon.clone()));
    server::serve(daemon, listener, shutdown, handler).await;
    housekeeping.abort();
    idle.abort();
}

/// Every minute, sessions unused for [`sessions::IDLE_RELEASE_MS`] release their workspace
/// handles (issue 26): an open session costs no descriptor while it waits.
async fn release_idle_sessions(daemon: Arc<Daemon>) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        every.tick().await;
        let daemon = daemon.clone();
        offload::blocking(move || daemon.release_idle(sessions::IDLE_RELEASE_MS));
    }
}

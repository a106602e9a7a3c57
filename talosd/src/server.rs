//! The daemon: its shared state and the accept loop. `serve` takes its listener, its shutdown
//! signal and the handler every connection answers requests with, so tests inject all three
//! (`talosd::run` passes the method table, `dispatch::Dispatch`).

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::connection::Handler;
use crate::ids::SessionId;
use crate::models::Models;
use crate::paths::Home;
use crate::sessions::Session;

/// How long a stopping daemon waits for in-flight turns to write their traces.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything a daemon shares between connections.
#[derive(Debug)]
pub struct Daemon {
    pub config: Config,
    /// The configured permission rules, as the ladder matches them.
    pub rules: Vec<talos_core::rules::Rule>,
    /// Why turns are refused, when the configuration did not load.
    pub config_error: Option<String>,
    pub home: Home,
    pub socket_path: PathBuf,
    /// The configured models, each with its engine and its managed server.
    pub models: Models,
    /// The MCP servers (configured, and each session's editor's), connected on first use.
    pub mcp: crate::mcp::McpHub,
    pub sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    /// The most sessions open at once (`limits::current_session_cap`).
    pub max_sessions: usize,
    pub started: Instant,
    /// Cancelled when the daemon begins to stop; every turn's token is a child of it.
    pub stopping: CancellationToken,
    pub active_turns: AtomicUsize,
    /// Turns against the retention sweep, and the trace ids of running turns.
    pub retention: crate::store_gate::Gate,
    next_connection: AtomicU64,
    next_slot: AtomicU64,
}

/// What `run` needs besides the listener.
#[derive(Debug)]
pub struct DaemonSettings {
    pub config: Result<Config, crate::config::ConfigError>,
    pub home: Home,
    pub socket_path: PathBuf,
}

impl Daemon {
    pub fn new(settings: DaemonSettings) -> Arc<Daemon> {
        let (config, config_error) = match settings.config {
            Ok(config) => (config, None),
            Err(error) => (Config::default(), Some(error.to_string())),
        };
        let models = Models::new(&config, settings.home.logs().path());
        // An engine that could not be built refuses turns as a configuration error does.
        let config_error = config_error.or_else(|| models.problem());
        let rules = config.permissions.rules();
        let mcp = crate::mcp::McpHub::new(&config.mcp);
        Arc::new(Daemon {
            models,
            mcp,
            rules,
            config,
            config_error,
            home: settings.home,
            socket_path: settings.socket_path,
            sessions: Mutex::new(HashMap::new()),
            max_sessions: crate::limits::current_session_cap(),
            started: Instant::now(),
            stopping: CancellationToken::new(),
            active_turns: AtomicUsize::new(0),
            retention: crate::store_gate::Gate::default(),
            next_connection: AtomicU64::new(1),
            next_slot: AtomicU64::new(0),
        })
    }

    /// Writes a session's state after a turn, unless it was closed while the turn ran (a
    /// closed session is not brought back by a new daemon).
    pub fn persist(&self, session: &crate::sessions::SessionTurn) {
        if self.session(session.id.as_str()).is_none() {
            return;
        }
        let snapshot = session.snapshot();
        let store = crate::session_store::SessionStore::new(self.home.sessions());
        match crate::offload::blocking(|| store.save(&snapshot, crate::clock::now_ms())) {
            Ok(()) => session.set_persisted(true),
            Err(e) => {
                tracing::error!(session = %session.id, error = %e, "cannot persist the session")
            }
        }
    }

    pub fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().ok()?.get(id).cloned()
    }

    /// The slot number of a new session: sessions take them in turn, and each model's server
    /// maps the number onto its own `slots` ([`crate::models::ModelEntry::slot`]).
    pub fn next_slot(&self) -> u32 {
        u32::try_from(self.next_slot.fetch_add(1, Ordering::Relaxed) % u64::from(u32::MAX))
            .unwrap_or(0)
    }

    /// The name of the model sessions use until they select another.
    pub fn default_model(&self) -> &str {
        &self.models.default_entry().name
    }

    /// Releases the workspace handles of sessions unused for `idle_ms` and not running a turn
    /// (each is opened again by the session's next use); how many it released.
    pub fn release_idle(&self, idle_ms: u64) -> usize {
        let now = crate::clock::now_ms();
        let sessions: Vec<Arc<Session>> = self
            .sessions
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default();
        let released = sessions
            .iter()
            .filter(|s| s.release_if_idle(now, idle_ms))
            .count();
        if released > 0 {
            tracing::info!(released, "idle sessions released their workspace handles");
        }
        released
    }

    pub fn session_count(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    pub fn active_turns(&self) -> usize {
        self.active_turns.load(Ordering::Relaxed)
    }
}

/// Serves until `shutdown` resolves or a client calls `daemon/shutdown` (cancelling
/// `daemon.stopping`); then cancels in-flight turns, waits for their traces, and returns.
pub async fn serve<H: Handler>(
    daemon: Arc<Daemon>,
    listener: UnixListener,
    shutdown: impl Future<Output = ()>,
    handler: Arc<H>,
) {
    let connections = TaskTracker::new();
    if daemon.config_error.is_none() {
        daemon.models.start_default();
    }
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    match crate::socket::peer_allowed(&stream) {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!(peer = ?stream.peer_cred().ok(), "rejected connection from another user");
                            continue;
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot read peer credentials; connection rejected");
                            continue;
                        }
                    }
                    let id = daemon.next_connection.fetch_add(1, Ordering::Relaxed);
                    connections.spawn(crate::connection::serve(
                        handler.clone(),
                        stream,
                        id,
                        daemon.stopping.clone(),
                    ));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
            () = daemon.stopping.cancelled() => break,
        }
    }
    tracing::info!("stopping: cancelling in-flight turns");
    daemon.stopping.cancel();
    drop(listener);
    connections.close();
    if tokio::time::timeout(DRAIN_TIMEOUT, connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within {DRAIN_TIMEOUT:?}");
    }
    daemon.models.shutdown().await;
    daemon.mcp.shutdown().await;
}

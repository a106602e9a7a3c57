//! The daemon's models (issue 25, item 5): every entry of `models:` (or the one `model:`), each
//! with its engine and, when managed, the llama-server that runs it.
//!
//! A managed entry starts on first use; the default one starts with the daemon, as the one
//! model always did. At most `model.max_running` managed entries run at once: starting one
//! more first stops the idle one used longest ago, or waits until one becomes idle (a turn
//! holds a [`Lease`] on its model, so a server is never stopped under a running turn). Starts
//! happen one at a time. A server that failed stays failed, as the one model's did; one that
//! Talos stopped to make room starts again on its next use.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use talos_protocol::ModelStatusResult;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ModelConfig, ModelEntryConfig, ModelMode};
use crate::engine::Engine;
use crate::supervisor::{NotReady, State, Supervisor};

/// How often a start waiting for an idle server looks again, besides being woken.
const IDLE_POLL: Duration = Duration::from_millis(500);

/// The configured models.
#[derive(Debug)]
pub struct Models {
    entries: Vec<Arc<ModelEntry>>,
    max_running: usize,
    logs: PathBuf,
    /// Held while a managed entry is started, so starts happen one at a time.
    starting: tokio::sync::Mutex<()>,
    /// Woken when a lease ends.
    released: Arc<tokio::sync::Notify>,
    /// Counts uses, so "used longest ago" is an order, not a clock.
    uses: AtomicU64,
}

/// One model: its name, settings and engine, and its server while one runs.
#[derive(Debug)]
pub struct ModelEntry {
    pub name: String,
    pub config: ModelConfig,
    pub engine: Engine,
    server: Mutex<Option<Running>>,
    leases: AtomicUsize,
    last_use: AtomicU64,
}

#[derive(Debug)]
struct Running {
    supervisor: Arc<Supervisor>,
    task: tokio::task::JoinHandle<()>,
}

/// A turn's hold on its model: while any lease is held the model's server is not stopped to
/// make room for another.
#[derive(Debug)]
pub struct Lease {
    pub entry: Arc<ModelEntry>,
    released: Arc<tokio::sync::Notify>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.entry.leases.fetch_sub(1, Ordering::AcqRel);
        self.released.notify_waiters();
    }
}

impl ModelEntry {
    fn new(entry: ModelEntryConfig) -> ModelEntry {
        let url = match entry.model.mode {
            ModelMode::Managed => crate::engine::loopback_url(entry.model.port),
            ModelMode::ConnectOnly => entry.model.url.clone(),
        };
        ModelEntry {
            engine: Engine::new(&entry.model, &url),
            name: entry.name,
            config: entry.model,
            server: Mutex::new(None),
            leases: AtomicUsize::new(0),
            last_use: AtomicU64::new(0),
        }
    }

    pub fn is_managed(&self) -> bool {
        self.config.mode == ModelMode::Managed
    }

    /// The slot of a session's requests: its number among this server's slots.
    pub fn slot(&self, session_slot: u32) -> Option<u32> {
        self.is_managed()
            .then(|| session_slot % self.config.slots.max(1))
    }

    fn supervisor(&self) -> Option<Arc<Supervisor>> {
        let server = self.server.lock().ok()?;
        server.as_ref().map(|r| r.supervisor.clone())
    }

    /// Whether a server of this entry runs (or starts) now; a failed or stopped one does not.
    fn is_live(&self) -> bool {
        self.supervisor()
            .is_some_and(|s| !matches!(s.state(), State::Failed(_) | State::Stopped))
    }

    fn start(&self, logs: PathBuf) -> Arc<Supervisor> {
        let supervisor = Arc::new(Supervisor::new(self.config.clone(), logs));
        let running = supervisor.clone();
        let task = tokio::spawn(async move { running.run().await });
        tracing::info!(model = %self.name, port = self.config.port, "starting the model server");
        if let Ok(mut server) = self.server.lock() {
            *server = Some(Running {
                supervisor: supervisor.clone(),
                task,
            });
        }
        supervisor
    }

    /// Stops this entry's server, if one runs, and waits for it.
    async fn stop(&self) {
        let running = self.server.lock().ok().and_then(|mut s| s.take());
        if let Some(running) = running {
            tracing::info!(model = %self.name, "stopping the model server");
            running.supervisor.shutdown().await;
            let _ = tokio::time::timeout(Duration::from_secs(10), running.task).await;
        }
    }

    /// What `model/status` says about this entry.
    pub fn status(&self, default: bool) -> ModelStatusResult {
        let mut status = match self.supervisor() {
            Some(supervisor) => supervisor.status(),
            None => ModelStatusResult {
                mode: self.config.mode.as_str().into(),
                state: match self.config.mode {
                    ModelMode::Managed => "idle".into(),
                    ModelMode::ConnectOnly => "connect_only".into(),
                },
                url: self.engine.url.clone(),
                pid: None,
                port: self.is_managed().then_some(self.config.port),
                model: self.is_managed().then(|| self.config.path.clone()),
                restarts: 0,
                owned: false,
                last_error: None,
                name: String::new(),
                default: false,
                models: Vec::new(),
            },
        };
        status.name = self.name.clone();
        status.default = default;
        status
    }
}

impl Models {
    /// The model a session's turn uses: the one it chose, or the default one (also when the
    /// chosen one is no longer configured).
    pub fn of_session(&self, chosen: Option<&str>, session: &str) -> &Arc<ModelEntry> {
        let entry = chosen.and_then(|name| self.get(name));
        if entry.is_none()
            && let Some(name) = chosen
        {
            tracing::warn!(session = %session, model = %name, "the session's model is no longer configured; using the default");
        }
        entry.unwrap_or_else(|| self.default_entry())
    }

    pub fn new(config: &Config, logs: PathBuf) -> Models {
        Models {
            entries: config
                .model_entries()
                .into_iter()
                .map(|e| Arc::new(ModelEntry::new(e)))
                .collect(),
            max_running: usize::try_from(config.model.max_running.max(1)).unwrap_or(1),
            logs,
            starting: tokio::sync::Mutex::new(()),
            released: Arc::new(tokio::sync::Notify::new()),
            uses: AtomicU64::new(0),
        }
    }

    /// The model sessions use until they select another.
    pub fn default_entry(&self) -> &Arc<ModelEntry> {
        &self.entries[0]
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<ModelEntry>> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Every name, the default first.
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    /// Holds `entry` for a turn (see [`Lease`]).
    pub fn lease(&self, entry: &Arc<ModelEntry>) -> Lease {
        entry.leases.fetch_add(1, Ordering::AcqRel);
        let n = self.uses.fetch_add(1, Ordering::Relaxed);
        entry.last_use.store(n, Ordering::Relaxed);
        Lease {
            entry: entry.clone(),
            released: self.released.clone(),
        }
    }

    /// Starts the default model's server when it is managed (at daemon start).
    pub fn start_default(&self) {
        let entry = self.default_entry();
        if entry.is_managed() && entry.supervisor().is_none() {
            entry.start(self.logs.clone());
        }
    }

    /// Waits until the leased model can take requests: a managed entry is started when it does
    /// not run (making room first), then waited for while it loads; `cancel` (the turn's)
    /// ends the wait.
    pub async fn ready(&self, lease: &Lease, cancel: &CancellationToken) -> Result<(), NotReady> {
        tokio::select! {
            ready = self.ready_uncancelled(lease) => ready,
            () = cancel.cancelled() => Err(NotReady::Cancelled),
        }
    }

    async fn ready_uncancelled(&self, lease: &Lease) -> Result<(), NotReady> {
        let entry = &lease.entry;
        if !entry.is_managed() {
            return Ok(());
        }
        let supervisor = match entry.supervisor() {
            Some(supervisor) => supervisor,
            None => {
                let _one_at_a_time = self.starting.lock().await;
                match entry.supervisor() {
                    Some(supervisor) => supervisor,
                    None => {
                        self.make_room(entry).await;
                        entry.start(self.logs.clone())
                    }
                }
            }
        };
        supervisor.wait_ready().await
    }

    /// Stops idle servers used longest ago until one more may run; waits while all are busy.
    async fn make_room(&self, wanted: &Arc<ModelEntry>) {
        loop {
            let live: Vec<&Arc<ModelEntry>> = self
                .entries
                .iter()
                .filter(|e| !Arc::ptr_eq(e, wanted) && e.is_live())
                .collect();
            let uses: Vec<Use> = live
                .iter()
                .map(|e| Use {
                    leases: e.leases.load(Ordering::Acquire),
                    last_use: e.last_use.load(Ordering::Relaxed),
                })
                .collect();
            match room(&uses, self.max_running) {
                Room::Free => return,
                Room::Stop(i) => live[i].stop().await,
                Room::Wait => {
                    tracing::info!(model = %wanted.name, "waiting for a model server to become idle (model.max_running)");
                    let _ = tokio::time::timeout(IDLE_POLL, self.released.notified()).await;
                }
            }
        }
    }

    /// `model/status`: the default model, with every model listed.
    pub fn status(&self) -> ModelStatusResult {
        let mut all: Vec<ModelStatusResult> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| e.status(i == 0))
            .collect();
        let mut status = all[0].clone();
        status.models = std::mem::take(&mut all);
        status
    }

    /// Stops every server (daemon shutdown).
    pub async fn shutdown(&self) {
        for entry in &self.entries {
            entry.stop().await;
        }
    }
}

/// How a running server is used: by how many turns now, and when last (an order).
#[derive(Debug, Clone, Copy)]
struct Use {
    leases: usize,
    last_use: u64,
}

/// What starting one more server needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Room {
    /// Fewer than `max_running` run: start it.
    Free,
    /// Stop the `i`-th running server first: the idle one used longest ago.
    Stop(usize),
    /// Every running server is in use: wait for one to become idle.
    Wait,
}

fn room(running: &[Use], max_running: usize) -> Room {
    if running.len() < max_running {
        return Room::Free;
    }
    running
        .iter()
        .enumerate()
        .filter(|(_, u)| u.leases == 0)
        .min_by_key(|(_, u)| u.last_use)
        .map_or(Room::Wait, |(i, _)| Room::Stop(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_for_one_more_server_rows() {
        let idle = |last_use| Use {
            leases: 0,
            last_use,
        };
        let busy = |last_use| Use {
            leases: 1,
            last_use,
        };
        let rows: &[(&[Use], usize, Room)] = &[
            (&[], 1, Room::Free),
            (&[idle(3)], 2, Room::Free),
            (&[idle(3)], 1, Room::Stop(0)),
            (&[busy(1)], 1, Room::Wait),
            (&[idle(7), idle(2), busy(1)], 3, Room::Stop(1)),
            (&[busy(1), busy(2)], 2, Room::Wait),
            (&[busy(1), idle(9)], 2, Room::Stop(1)),
        ];
        for (running, max, want) in rows {
            assert_eq!(room(running, *max), *want, "{running:?} max {max}");
        }
    }
}

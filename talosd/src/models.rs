//! The daemon's models: every entry of `models:` (or the one `model:`), each with its engine
//! and, when managed, the llama-server that runs it.
//!
//! A managed entry starts on first use; the default one starts with the daemon, as the one
//! model always did. At most `model.max_running` managed servers run at once. Which server a
//! turn uses, starts or stops is decided by one pure rule,
//! [`talos_core::model_room::decide`], over a table held under one lock: the decision and its
//! marking (a new user, a start, a server set to stopping) happen before the lock is let go,
//! so a server is never stopped under a turn that became its user, and a turn that waits
//! holds nothing another turn waits for. A server that failed stays failed, as the one
//! model's did; one that Talos stopped to make room starts again on its next use.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use talos_core::model_room::{self, Action, Lock, Phase, Waiting};
use talos_protocol::ModelStatusResult;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ModelConfig, ModelEntryConfig, ModelMode};
use crate::engine::Engine;
use crate::supervisor::{NotReady, State, Supervisor};

/// How often a waiting turn looks at the table again, besides being woken.
const IDLE_POLL: Duration = Duration::from_millis(500);

/// How long stopping a server may take before it is given up on (the supervisor kills the
/// process group well within it).
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// The configured models.
#[derive(Debug)]
pub struct Models {
    entries: Vec<Arc<ModelEntry>>,
    max_running: usize,
    logs: PathBuf,
    /// Every key variable the configuration names (models' and MCP servers'): no managed
    /// server inherits one.
    key_variables: Vec<String>,
    table: Arc<Mutex<Table>>,
    /// Woken whenever the table changes (a user leaves, a stop ends, a waiting turn leaves).
    changed: Arc<tokio::sync::Notify>,
}

/// One model: its name, settings and engine.
#[derive(Debug)]
pub struct ModelEntry {
    pub name: String,
    pub config: ModelConfig,
    pub engine: Engine,
    /// Its place in [`Models`]' table.
    index: usize,
}

/// The servers, their users and the waiting turns: what the rule reads.
#[derive(Debug, Default)]
struct Table {
    slots: Vec<Slot>,
    /// Turns waiting for room (their ticket, model and passes), oldest first.
    waiting: Vec<(u64, Waiting)>,
    /// The ticket of the turn stopping a server to start its own.
    lock: Option<u64>,
    next_ticket: u64,
    /// Counts uses, so "used longest ago" is an order, not a clock.
    uses: u64,
    /// Set at daemon shutdown: nothing starts any more.
    closed: bool,
}

/// One model's server, while one runs.
#[derive(Debug, Default)]
struct Slot {
    server: Option<Arc<Supervisor>>,
    task: Option<tokio::task::JoinHandle<()>>,
    stopping: bool,
    users: usize,
    last_use: u64,
}

impl Slot {
    /// The server's phase for the rule; `None` when none runs (a stopped one counts as none).
    fn phase(&self) -> Option<Phase> {
        if self.stopping {
            return Some(Phase::Stopping);
        }
        match self.server.as_ref()?.state() {
            State::Failed(_) => Some(Phase::Failed),
            State::Stopped => None,
            State::Ready => Some(Phase::Ready),
            State::Starting | State::Loading | State::Restarting => Some(Phase::Loading),
        }
    }
}

/// A turn's hold on its model. Once [`Models::ready`] has returned, the turn is a user of the
/// model's server, which is then not stopped to make room for another until the lease ends.
#[derive(Debug)]
pub struct Lease {
    pub entry: Arc<ModelEntry>,
    ticket: u64,
    /// Whether the turn became a user of the server.
    user: Mutex<bool>,
    table: Arc<Mutex<Table>>,
    changed: Arc<tokio::sync::Notify>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let user = self.user.lock().map(|u| *u).unwrap_or(false);
        if let Ok(mut table) = self.table.lock() {
            table.waiting.retain(|(t, _)| *t != self.ticket);
            if user && let Some(slot) = table.slots.get_mut(self.entry.index) {
                slot.users = slot.users.saturating_sub(1);
            }
        }
        self.changed.notify_waiters();
    }
}

/// Takes a waiting turn out of the queue when its wait ends in any way (a cancel drops the
/// future), so a cancelled turn never blocks younger ones.
struct Queued<'a> {
    lease: &'a Lease,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        if let Ok(mut table) = self.lease.table.lock() {
            table.waiting.retain(|(t, _)| *t != self.lease.ticket);
            // A stop it began still holds its room as Stopping, so the lock may go with it.
            if table.lock == Some(self.lease.ticket) {
                table.lock = None;
            }
        }
        self.lease.changed.notify_waiters();
    }
}

/// What one look at the table told a turn to do.
enum Step {
    Ready(Arc<Supervisor>),
    /// The lease's model is not managed: nothing to wait for.
    Unmanaged,
    Stop(Arc<Supervisor>, Option<tokio::task::JoinHandle<()>>, usize),
    Wait,
    Closed,
}

impl ModelEntry {
    fn new(entry: ModelEntryConfig, index: usize) -> ModelEntry {
        let url = match entry.model.mode {
            ModelMode::Managed => crate::engine::loopback_url(entry.model.port),
            ModelMode::ConnectOnly => entry.model.url.clone(),
        };
        let engine = Engine::new(&entry.model, &url).unwrap_or_else(|e| {
            tracing::error!(model = %entry.name, error = %e, "the model's engine cannot be built; its turns are refused");
            Engine::unusable(&entry.model, &url, &e.to_string())
        });
        ModelEntry {
            engine,
            name: entry.name,
            config: entry.model,
            index,
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

    /// What `model/status` says about this entry, with `server` its server if one runs.
    fn status(&self, server: Option<&Arc<Supervisor>>, default: bool) -> ModelStatusResult {
        let mut status = match server {
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
        let entries: Vec<Arc<ModelEntry>> = config
            .model_entries()
            .into_iter()
            .enumerate()
            .map(|(i, e)| Arc::new(ModelEntry::new(e, i)))
            .collect();
        let table = Table {
            slots: entries.iter().map(|_| Slot::default()).collect(),
            ..Table::default()
        };
        let key_variables = entries
            .iter()
            .map(|e| e.config.api_key_env.clone())
            .chain(config.mcp.servers.values().map(|m| m.api_key_env.clone()))
            .filter(|name| !name.is_empty())
            .collect();
        Models {
            entries,
            max_running: usize::try_from(config.model.max_running.max(1)).unwrap_or(1),
            logs,
            key_variables,
            table: Arc::new(Mutex::new(table)),
            changed: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Why a model's engine could not be built (the first such model), if one could not.
    pub fn problem(&self) -> Option<String> {
        self.entries
            .iter()
            .find_map(|e| Some(format!("models.{}: {}", e.name, e.engine.problem()?)))
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

    fn table(&self) -> Option<MutexGuard<'_, Table>> {
        self.table.lock().ok()
    }

    /// Holds `entry` for a turn (see [`Lease`]).
    pub fn lease(&self, entry: &Arc<ModelEntry>) -> Lease {
        let ticket = self.table().map_or(0, |mut table| {
            table.next_ticket += 1;
            table.next_ticket
        });
        Lease {
            entry: entry.clone(),
            ticket,
            user: Mutex::new(false),
            table: self.table.clone(),
            changed: self.changed.clone(),
        }
    }

    /// Starts the default model's server when it is managed (at daemon start).
    pub fn start_default(&self) {
        let entry = self.default_entry();
        if let Some(mut table) = self.table()
            && entry.is_managed()
            && table.slots[entry.index].server.is_none()
        {
            self.start(&mut table, entry);
        }
    }

    /// Starts `entry`'s server into its slot of the table.
    fn start(&self, table: &mut Table, entry: &ModelEntry) -> Arc<Supervisor> {
        let supervisor =
            Supervisor::new(entry.config.clone(), self.logs.clone()).hiding(&self.key_variables);
        let supervisor = Arc::new(supervisor);
        let running = supervisor.clone();
        let task = tokio::spawn(async move { running.run().await });
        tracing::info!(model = %entry.name, port = entry.config.port, "starting the model server");
        let slot = &mut table.slots[entry.index];
        slot.server = Some(supervisor.clone());
        slot.task = Some(task);
        supervisor
    }

    /// Waits until the leased model can take requests: the turn becomes a user of its running
    /// server, or starts it (stopping an idle one first when `model.max_running` are running),
    /// or waits holding nothing; then waits while the server loads. `cancel` (the turn's) ends
    /// the wait.
    pub async fn ready(&self, lease: &Lease, cancel: &CancellationToken) -> Result<(), NotReady> {
        tokio::select! {
            ready = self.ready_uncancelled(lease) => ready,
            () = cancel.cancelled() => Err(NotReady::Cancelled),
        }
    }

    async fn ready_uncancelled(&self, lease: &Lease) -> Result<(), NotReady> {
        let _queued = Queued { lease };
        loop {
            let changed = self.changed.notified();
            match self.step(lease) {
                Step::Ready(supervisor) => return supervisor.wait_ready().await,
                Step::Unmanaged => return Ok(()),
                Step::Closed => return Err(NotReady::Stopped),
                Step::Stop(supervisor, task, model) => {
                    self.stop_detached(supervisor, task, model);
                    let _ = tokio::time::timeout(IDLE_POLL, changed).await;
                }
                Step::Wait => {
                    let _ = tokio::time::timeout(IDLE_POLL, changed).await;
                }
            }
        }
    }

    /// One look at the table: asks the rule, and marks its answer before letting go.
    fn step(&self, lease: &Lease) -> Step {
        let entry = &lease.entry;
        if !entry.is_managed() {
            return Step::Unmanaged;
        }
        let Some(mut table) = self.table() else {
            return Step::Closed;
        };
        let mut user = match lease.user.lock() {
            Ok(user) => user,
            Err(_) => return Step::Closed,
        };
        if *user && let Some(server) = table.slots[entry.index].server.clone() {
            return Step::Ready(server);
        }
        if table.closed {
            return Step::Closed;
        }
        let action = decide(&table, lease.ticket, entry.index, self.max_running);
        match action {
            Action::Use | Action::Start => {
                let mine = table.waiting.iter().position(|(t, _)| *t == lease.ticket);
                let older = mine.unwrap_or(table.waiting.len());
                for (_, waiting) in &mut table.waiting[..older] {
                    if waiting.model != entry.index {
                        waiting.passed += 1;
                    }
                }
                table.waiting.retain(|(t, _)| *t != lease.ticket);
                if table.lock == Some(lease.ticket) {
                    table.lock = None;
                }
                let server = match (&table.slots[entry.index].server, action) {
                    (Some(server), Action::Use) => server.clone(),
                    _ => self.start(&mut table, entry),
                };
                table.uses += 1;
                let uses = table.uses;
                let slot = &mut table.slots[entry.index];
                slot.users += 1;
                slot.last_use = uses;
                *user = true;
                Step::Ready(server)
            }
            Action::Evict(model) => {
                // The rule names only a server that runs; one that is gone needs no stop.
                let Some(server) = table.slots[model].server.clone() else {
                    return Step::Wait;
                };
                table.lock = Some(lease.ticket);
                let slot = &mut table.slots[model];
                slot.stopping = true;
                Step::Stop(server, slot.task.take(), model)
            }
            Action::Wait => {
                if !table.waiting.iter().any(|(t, _)| *t == lease.ticket) {
                    let waiting = Waiting {
                        model: entry.index,
                        passed: 0,
                    };
                    table.waiting.push((lease.ticket, waiting));
                    tracing::info!(model = %entry.name, "waiting for room to start the model server (model.max_running)");
                }
                Step::Wait
            }
        }
    }

    /// Stops a server in a task of its own, so that a turn cancelled meanwhile cannot leave it
    /// half stopped; the table is told when it has ended.
    fn stop_detached(
        &self,
        supervisor: Arc<Supervisor>,
        task: Option<tokio::task::JoinHandle<()>>,
        model: usize,
    ) {
        let table = self.table.clone();
        let changed = self.changed.clone();
        let name = self.entries[model].name.clone();
        tokio::spawn(async move {
            tracing::info!(model = %name, "stopping the model server to make room (model.max_running)");
            supervisor.shutdown().await;
            if let Some(task) = task {
                let _ = tokio::time::timeout(STOP_TIMEOUT, task).await;
            }
            if let Ok(mut table) = table.lock() {
                let slot = &mut table.slots[model];
                slot.server = None;
                slot.stopping = false;
                // The holder asks again with the lock its own; nobody else starts meanwhile.
            }
            changed.notify_waiters();
        });
    }

    /// `model/status`: the default model, with every model listed.
    pub fn status(&self) -> ModelStatusResult {
        let servers: Vec<Option<Arc<Supervisor>>> = match self.table() {
            Some(table) => table.slots.iter().map(|s| s.server.clone()).collect(),
            None => vec![None; self.entries.len()],
        };
        let mut all: Vec<ModelStatusResult> = self
            .entries
            .iter()
            .zip(&servers)
            .map(|(e, server)| e.status(server.as_ref(), e.index == 0))
            .collect();
        let mut status = all[0].clone();
        status.models = std::mem::take(&mut all);
        status
    }

    /// Stops every server (daemon shutdown); nothing starts afterwards.
    pub async fn shutdown(&self) {
        let running: Vec<(Arc<Supervisor>, Option<tokio::task::JoinHandle<()>>)> =
            match self.table() {
                Some(mut table) => {
                    table.closed = true;
                    table
                        .slots
                        .iter_mut()
                        .filter_map(|s| Some((s.server.take()?, s.task.take())))
                        .collect()
                }
                None => Vec::new(),
            };
        for (supervisor, task) in running {
            supervisor.shutdown().await;
            if let Some(task) = task {
                let _ = tokio::time::timeout(STOP_TIMEOUT, task).await;
            }
        }
        self.changed.notify_waiters();
    }
}

/// The rule's answer for the turn holding `ticket`, asking for the model at `wanted`.
fn decide(table: &Table, ticket: u64, wanted: usize, max_running: usize) -> Action {
    let servers: Vec<model_room::Server> = table
        .slots
        .iter()
        .enumerate()
        .filter_map(|(model, slot)| {
            Some(model_room::Server {
                model,
                phase: slot.phase()?,
                users: slot.users,
                last_use: slot.last_use,
            })
        })
        .collect();
    let older: Vec<Waiting> = table
        .waiting
        .iter()
        .take_while(|(t, _)| *t != ticket)
        .map(|(_, waiting)| *waiting)
        .collect();
    let lock = match table.lock {
        None => Lock::Free,
        Some(holder) if holder == ticket => Lock::Mine,
        Some(_) => Lock::Other,
    };
    model_room::decide(
        &model_room::Room {
            servers: &servers,
            max_running,
            older_waiting: &older,
            lock,
        },
        wanted,
    )
}

//! The managed llama-server: launched by the daemon on 127.0.0.1 only, refused when its port
//! already has a listener, proven to be the process Talos started (Linux `/proc`: the listening
//! socket's inode, the pid holding it, that pid's start time), waited for while the model loads,
//! restarted with bounded backoff after a crash, and stopped with the daemon.
//!
//! What the ownership probe does not cover: a hostile kernel (it trusts `/proc`), and the race
//! between the last check and a request (a process that takes the port over after the check is
//! not noticed until the server exits).
// std::fs here: llama-server's record and log under the home, and /proc, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use talos_protocol::ModelStatusResult;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::ModelConfig;
use crate::engine::{HealthProbe, port_has_listener};

/// Why the model server is not ready for a turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    /// The supervisor's reason for the failure.
    #[error("{0}")]
    Failed(String),
    #[error("the model server is stopped")]
    Stopped,
    #[error("the model server supervisor ended")]
    SupervisorEnded,
    #[error("the model server was not ready within {0} s")]
    Timeout(u64),
    #[error("the turn was cancelled while it waited for the model server")]
    Cancelled,
}

/// Why a process fact could not be read from `/proc`.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    ListProcesses(std::io::Error),
    #[error("malformed stat")]
    MalformedStat,
    #[error("no start time in /proc/{0}/stat")]
    NoStartTime(u32),
    #[error("no listening socket for 127.0.0.1:{0} in /proc/net/tcp")]
    NoListener(u16),
    #[error("no process holds socket inode {0}")]
    NoOwner(String),
    #[error("several processes hold socket inode {inode}: {pids:?}")]
    SeveralOwners { inode: String, pids: Vec<u32> },
}

pub const PORT_IN_USE: &str = "Another server is not restarted by Talos.";
/// The variable llama-server reads its `--api-key` from.
const LLAMA_KEY_VARIABLE: &str = "LLAMA_API_KEY";
/// Restarts in a row after which the supervisor gives up.
const MAX_RESTARTS: u32 = 5;
/// A server that stayed up this long resets the restart count.
const STABLE_AFTER: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Starting,
    Loading,
    Ready,
    Restarting,
    Failed(String),
    Stopped,
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Loading => "loading",
            State::Ready => "ready",
            State::Restarting => "restarting",
            State::Failed(_) => "failed",
            State::Stopped => "stopped",
        }
    }
}

#[derive(Debug)]
pub struct Supervisor {
    config: ModelConfig,
    /// Variables removed from llama-server's environment: the keys Talos holds.
    secrets: Vec<String>,
    logs: PathBuf,
    status: Mutex<Status>,
    state_tx: watch::Sender<State>,
    stop: CancellationToken,
    done: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Status {
    pid: Option<u32>,
    restarts: u32,
    owned: bool,
}

impl Supervisor {
    pub fn new(config: ModelConfig, logs: PathBuf) -> Supervisor {
        let (state_tx, _) = watch::channel(State::Starting);
        Supervisor {
            secrets: vec![LLAMA_KEY_VARIABLE.to_string(), config.api_key_env.clone()],
            config,
            logs,
            status: Mutex::new(Status::default()),
            state_tx,
            stop: CancellationToken::new(),
            done: tokio::sync::Notify::new(),
        }
    }

    /// Also keeps these variables (other models' and MCP servers' keys) out of its environment.
    pub fn hiding(mut self, names: &[String]) -> Supervisor {
        self.secrets.extend(names.iter().cloned());
        self
    }

    pub fn url(&self) -> String {
        crate::engine::loopback_url(self.config.port)
    }

    fn set(&self, state: State) {
        if let State::Failed(reason) = &state {
            tracing::error!(%reason, "model server failed");
        }
        self.state_tx.send_replace(state);
    }

    pub fn state(&self) -> State {
        self.state_tx.borrow().clone()
    }

    pub fn status(&self) -> ModelStatusResult {
        let state = self.state();
        let status = self
            .status
            .lock()
            .map(|s| (s.pid, s.restarts, s.owned))
            .unwrap_or_default();
        ModelStatusResult {
            mode: crate::config::ModelMode::Managed.as_str().into(),
            state: state.name().into(),
            url: self.url(),
            pid: status.0,
            port: Some(self.config.port),
            model: Some(self.config.path.clone()),
            restarts: status.1,
            owned: status.2,
            last_error: match state {
                State::Failed(reason) => Some(reason),
                State::Starting
                | State::Loading
                | State::Ready
                | State::Restarting
                | State::Stopped => None,
            },
            name: String::new(),
            default: false,
            models: Vec::new(),
        }
    }

    /// Waits until the server is ready, up to the start timeout; the error says why not.
    pub async fn wait_ready(&self) -> Result<(), NotReady> {
        let mut rx = self.state_tx.subscribe();
        let deadline = Duration::from_secs(self.config.start_timeout_secs);
        let wait = async {
            loop {
                match rx.borrow_and_update().clone() {
                    State::Ready => return Ok(()),
                    State::Failed(reason) => return Err(NotReady::Failed(reason)),
                    State::Stopped => return Err(NotReady::Stopped),
                    State::Starting | State::Loading | State::Restarting => {}
                }
                if rx.changed().await.is_err() {
                    return Err(NotReady::SupervisorEnded);
                }
            }
        };
        tokio::time::timeout(deadline, wait)
            .await
            .unwrap_or(Err(NotReady::Timeout(deadline.as_secs())))
    }

    /// Stops the server and waits for the supervisor to finish.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.done.notified()).await;
    }

    /// The supervision loop; run it as a task.
    pub async fn run(&self) {
        let mut failures_in_a_row = 0u32;
        loop {
            if port_has_listener(self.config.port) && !self.reclaim_orphan().await {
                self.set(State::Failed(format!(
                    "port {} already has a listener. {PORT_IN_USE}",
                    self.config.port
                )));
                break;
            }
            let started = Instant::now();
            match self.run_once().await {
                Ended::Stopped => {
                    self.set(State::Stopped);
                    break;
                }
                Ended::Fatal(reason) => {
                    self.set(State::Failed(reason));
                    break;
                }
                Ended::Exited(reason) => {
                    if started.elapsed() > STABLE_AFTER {
                        failures_in_a_row = 0;
                    }
                    failures_in_a_row += 1;
                    if let Ok(mut s) = self.status.lock() {
                        s.pid = None;
                        s.owned = false;
                    }
                    if failures_in_a_row > MAX_RESTARTS {
                        self.set(State::Failed(format!("the model server exited {failures_in_a_row} times in a row ({MAX_RESTARTS} restarts); giving up ({reason})")));
                        break;
                    }
                    tracing::warn!(%reason, attempt = failures_in_a_row, "model server exited; restarting");
                    if let Ok(mut s) = self.status.lock() {
                        s.restarts += 1;
                    }
                    self.set(State::Restarting);
                    let backoff = Duration::from_millis(250u64 << failures_in_a_row.min(5))
                        .min(Duration::from_secs(5));
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = self.stop.cancelled() => {
                            self.set(State::Stopped);
                            break;
                        }
                    }
                }
            }
        }
        self.done.notify_waiters();
        self.done.notify_one();
    }

    /// Where the pid and start time of the server this home launched are kept, so that a
    /// server left behind by a daemon that was killed can be recognised as ours.
    fn record_path(&self) -> PathBuf {
        let state = self.logs.parent().unwrap_or(&self.logs);
        launch_record(state, self.config.port)
    }

    fn record_launch(&self, pid: u32, started: u64) {
        let record = serde_json::json!({"pid": pid, "startTime": started, "port": self.config.port, "server": self.config.server});
        let path = self.record_path();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(path, record.to_string());
    }

    /// A listener on our port that is the very process this home launched before (same pid,
    /// same start time, recorded at launch) is an orphan of a killed daemon: it is stopped and
    /// the port reused. Any other listener is someone else's and is left alone.
    async fn reclaim_orphan(&self) -> bool {
        let Some(pid) = recorded_listener(&self.record_path(), self.config.port) else {
            return false;
        };
        tracing::warn!(
            pid,
            port = self.config.port,
            "stopping the llama-server an earlier talosd of this home left running"
        );
        if let Some(group) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
        }
        for _ in 0..100 {
            if !port_has_listener(self.config.port) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        crate::runner::kill_group(pid);
        tokio::time::sleep(Duration::from_millis(200)).await;
        !port_has_listener(self.config.port)
    }

    /// Starts llama-server in a process group of its own, its output to the log.
    fn launch(&self) -> std::io::Result<tokio::process::Child> {
        let c = &self.config;
        let (out, err) = self.log_outputs();
        let mut command = tokio::process::Command::new(&c.server);
        // The key variables stay with talosd: llama-server would take LLAMA_API_KEY as its
        // own key (refusing Talos's requests), and no secret belongs in its environment.
        for name in self.secrets.iter().filter(|n| !n.is_empty()) {
            command.env_remove(name);
        }
        command
            .args(server_args(c))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
    }

    async fn run_once(&self) -> Ended {
        let c = &self.config;
        self.set(State::Starting);
        let health = match HealthProbe::new(&self.url()) {
            Ok(health) => health,
            Err(reason) => return Ended::Fatal(reason),
        };
        let mut child = match self.launch() {
            Ok(child) => child,
            Err(e) => {
                return Ended::Fatal(format!("cannot start the model server {}: {e}", c.server));
            }
        };
        let pid = child.id().unwrap_or(0);
        let launched_at = start_time(pid);
        if let Ok(started) = &launched_at {
            self.record_launch(pid, *started);
        }
        if let Ok(mut s) = self.status.lock() {
            s.pid = Some(pid);
            s.owned = false;
        }
        tracing::info!(pid, port = c.port, model = %c.path, "model server launched");
        self.set(State::Loading);
        let deadline = Instant::now() + Duration::from_secs(c.start_timeout_secs);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Ended::Exited(format!("exited while loading ({status})"));
            }
            if self.stop.is_cancelled() {
                terminate(&mut child, pid).await;
                return Ended::Stopped;
            }
            if health.ready().await {
                break;
            }
            if Instant::now() > deadline {
                terminate(&mut child, pid).await;
                return Ended::Fatal(format!(
                    "the model server did not finish loading within {} s",
                    c.start_timeout_secs
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Prove the listener is ours before any request reaches it.
        if !listener_is_ours(c.port, pid, launched_at) {
            terminate(&mut child, pid).await;
            return Ended::Fatal(format!(
                "listener ownership check failed: 127.0.0.1:{} is not served by the process Talos started (pid {pid}); nothing is sent to it",
                c.port
            ));
        }
        if let Ok(mut s) = self.status.lock() {
            s.owned = true;
        }
        self.set(State::Ready);
        tokio::select! {
            status = child.wait() => Ended::Exited(status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string())),
            () = self.stop.cancelled() => {
                terminate(&mut child, pid).await;
                Ended::Stopped
            }
        }
    }

    /// The model server's stdout and stderr: `llama-server.log` in the logs folder, appended
    /// to (nowhere when it cannot be opened).
    fn log_outputs(&self) -> (Stdio, Stdio) {
        let log = std::fs::create_dir_all(&self.logs).and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.logs.join("llama-server.log"))
        });
        match log.and_then(|f| Ok((f.try_clone()?, f))) {
            Ok((a, b)) => (Stdio::from(a), Stdio::from(b)),
            Err(_) => (Stdio::null(), Stdio::null()),
        }
    }
}

/// The model server's arguments, from the `model:` configuration.
fn server_args(c: &ModelConfig) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "-m".into(),
        c.path.clone(),
        "--host".into(),
        "127.0.0.1".into(),
        "--port".into(),
        c.port.to_string(),
        "-c".into(),
        c.ctx.to_string(),
        "-t".into(),
        c.threads.to_string(),
        "--parallel".into(),
        c.slots.to_string(),
        "--jinja".into(),
    ];
    if !c.chat_template_file.is_empty() {
        args.extend(["--chat-template-file".into(), c.chat_template_file.clone()]);
    }
    args.push("--no-webui".into());
    if let Some(layers) = c.gpu_layers {
        args.extend(["-ngl".into(), layers.to_string()]);
    }
    // Checked when the configuration was read: none of them is one Talos sets itself.
    args.extend(c.server_args.iter().cloned());
    args
}

/// Whether the process listening on `port` is the one launched as `pid` at `launched_at`
/// (same pid, same start time); why not is logged.
fn listener_is_ours(port: u16, pid: u32, launched_at: Result<u64, ProcError>) -> bool {
    match (listener_pid(port), launched_at) {
        (Ok(owner), Ok(expected)) if owner == pid => start_time(owner).is_ok_and(|t| t == expected),
        (Ok(owner), Ok(_)) => {
            tracing::error!(owner, pid, "the listener belongs to another process");
            false
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "listener ownership could not be observed");
            false
        }
    }
}

enum Ended {
    Stopped,
    Fatal(String),
    Exited(String),
}

/// SIGTERM to the server's process group, then SIGKILL after 5 s.
async fn terminate(child: &mut tokio::process::Child, pid: u32) {
    if let Some(group) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::TERM);
    }
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        crate::runner::kill_group(pid);
        let _ = child.wait().await;
    }
    crate::runner::kill_group(pid);
}

/// The launch record of the llama-server a home's daemon started on `port`
/// (`<state>/run/llama-server-<port>.json`).
pub fn launch_record(state: &std::path::Path, port: u16) -> PathBuf {
    state.join("run").join(format!("llama-server-{port}.json"))
}

/// The pid listening on 127.0.0.1:`port` when it is the very process the record names (same
/// pid, same start time): the server a daemon of this home launched. `None` for any other
/// listener, no listener, or no readable record.
pub fn recorded_listener(record: &std::path::Path, port: u16) -> Option<u32> {
    let text = std::fs::read_to_string(record).ok()?;
    let record = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    let pid = record["pid"].as_u64().and_then(|p| u32::try_from(p).ok())?;
    let started = record["startTime"].as_u64()?;
    let ours = listener_pid(port).is_ok_and(|owner| owner == pid)
        && start_time(pid).is_ok_and(|t| t == started);
    ours.then_some(pid)
}

/// Runs `server --version` (bounded by `timeout`, killed after it) and returns its first
/// line: proof the binary is there and runs, for `talosd --doctor`.
pub fn server_version(server: &str, timeout: Duration) -> Result<String, String> {
    use std::io::Read;
    let spawn = || {
        std::process::Command::new(server)
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    // ETXTBSY: a binary just written may still be open in a child forked meanwhile.
    let mut spawned = spawn();
    for _ in 0..10 {
        match &spawned {
            Err(e) if e.raw_os_error() == Some(26) => {
                std::thread::sleep(Duration::from_millis(50));
                spawned = spawn();
            }
            _ => break,
        }
    }
    let mut child = spawned.map_err(|e| format!("cannot run {server}: {e}"))?;
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{server} --version did not finish within {} s",
                    timeout.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for {server}: {e}")),
        }
    };
    // The child has exited, so what it wrote is in the pipes. They are drained without
    // blocking: a process it left behind may still hold them open.
    let mut bytes = Vec::new();
    let mut drain = |pipe: &mut dyn Read| {
        let mut block = [0u8; 8192];
        while bytes.len() < 64 * 1024 {
            match pipe.read(&mut block) {
                Ok(0) | Err(_) => break,
                Ok(n) => bytes.extend_from_slice(&block[..n]),
            }
        }
    };
    if let Some(mut out) = child.stdout.take() {
        let _ = rustix::fs::fcntl_setfl(&out, rustix::fs::OFlags::NONBLOCK);
        drain(&mut out);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = rustix::fs::fcntl_setfl(&err, rustix::fs::OFlags::NONBLOCK);
        drain(&mut err);
    }
    let text = String::from_utf8_lossy(&bytes);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("version"))
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("")
        .to_string();
    if !status.success() {
        return Err(format!("{server} --version exited with {status}: {line}"));
    }
    if line.is_empty() {
        return Err(format!("{server} --version printed nothing"));
    }
    Ok(line)
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22).
pub fn start_time(pid: u32) -> Result<u64, ProcError> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(|source| ProcError::Read { path, source })?;
    let after = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or(ProcError::MalformedStat)?;
    after
        .split_whitespace()
        .nth(19)
        .and_then(|v| v.parse().ok())
        .ok_or(ProcError::NoStartTime(pid))
}

/// The pid that holds the socket listening on 127.0.0.1:`port`.
pub fn listener_pid(port: u16) -> Result<u32, ProcError> {
    let table = std::fs::read_to_string("/proc/net/tcp").map_err(|source| ProcError::Read {
        path: "/proc/net/tcp".into(),
        source,
    })?;
    let local = format!("0100007F:{port:04X}");
    let inode = table
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 9 && f[1] == local && f[3] == "0A")
        .map(|f| f[9].to_string())
        .ok_or(ProcError::NoListener(port))?;
    let needle = format!("socket:[{inode}]");
    let mut owners = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .map_err(ProcError::ListProcesses)?
        .flatten()
    {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.to_string_lossy() == needle))
        {
            owners.push(pid);
        }
    }
    match owners.as_slice() {
        [pid] => Ok(*pid),
        [] => Err(ProcError::NoOwner(inode)),
        many => Err(ProcError::SeveralOwners {
            inode,
            pids: many.to_vec(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_of_a_port_we_hold_is_this_process() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listener_pid(port).ok(), Some(std::process::id()));
        assert!(port_has_listener(port));
        assert!(start_time(std::process::id()).unwrap() > 0);
        drop(listener);
        assert!(listener_pid(port).is_err());
    }
}

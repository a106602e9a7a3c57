//! Managed-mode fixtures: a `config.yaml` that makes the daemon launch a llama-server, a fake
//! server's "model" file that carries its behaviour (see `src/bin/fake-llama-server.rs`), free
//! loopback ports, `model/status` polling with a deadline, and process checks through `/proc`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_protocol::ModelStatusResult;

use crate::harness::Client;

/// The `model:` section (and anything after it) of a managed-mode `config.yaml`.
#[derive(Debug, Clone)]
pub struct ManagedConfig {
    pub server: PathBuf,
    pub model: PathBuf,
    pub port: u16,
    pub ctx: u32,
    pub threads: u32,
    pub slots: u32,
    pub chat_template_file: Option<PathBuf>,
    pub start_timeout_secs: u64,
    /// More YAML appended as is (other top-level sections, or `model:` keys indented by two).
    pub extra: String,
}

/// A fake llama-server's files: the "model" (its behaviour as JSON), the pid files it writes
/// beside it, and the file where it records chat requests.
pub struct FakeServer {
    pub dir: tempfile::TempDir,
    pub model: PathBuf,
    pub record: PathBuf,
    pub port: u16,
}

/// What [`wait_for_status`] saw.
#[derive(Debug, Clone)]
pub struct StatusLog {
    /// The status that satisfied the condition.
    pub last: ModelStatusResult,
    /// Every distinct `state` seen, in order.
    pub states: Vec<String>,
}

impl ManagedConfig {
    /// `slots: 4`, `ctx: 16384` (4,096 tokens a slot), `threads: 2`, a 20 s start timeout, no
    /// template.
    pub fn new(server: &Path, model: &Path, port: u16) -> ManagedConfig {
        ManagedConfig {
            server: server.to_path_buf(),
            model: model.to_path_buf(),
            port,
            ctx: 16384,
            threads: 2,
            slots: 4,
            chat_template_file: None,
            start_timeout_secs: 20,
            extra: String::new(),
        }
    }

    pub fn to_yaml(&self) -> String {
        let quoted = |path: &Path| json!(path).to_string();
        let mut yaml = format!(
            "model:\n  mode: managed\n  server: {}\n  path: {}\n  port: {}\n  ctx: {}\n  threads: {}\n  slots: {}\n  start_timeout_secs: {}\n",
            quoted(&self.server),
            quoted(&self.model),
            self.port,
            self.ctx,
            self.threads,
            self.slots,
            self.start_timeout_secs
        );
        if let Some(template) = &self.chat_template_file {
            yaml.push_str(&format!("  chat_template_file: {}\n", quoted(template)));
        }
        yaml.push_str(&self.extra);
        yaml
    }
}

impl FakeServer {
    /// A fake on a free port whose behaviour is `behaviour` (a JSON object; `record` is set to
    /// a file in the fixture's directory unless given).
    pub fn new(behaviour: Value) -> FakeServer {
        FakeServer::on_port(behaviour, free_port())
    }

    pub fn on_port(mut behaviour: Value, port: u16) -> FakeServer {
        let dir = tempfile::Builder::new()
            .prefix("fls")
            .tempdir_in("/tmp")
            .unwrap();
        let model = dir.path().join("model.gguf");
        let record = dir.path().join("requests.jsonl");
        if behaviour.get("record").is_none() {
            behaviour["record"] = json!(record);
        }
        std::fs::write(&model, behaviour.to_string()).unwrap();
        FakeServer {
            dir,
            model,
            record,
            port,
        }
    }

    /// The managed config launching `server` (the fake binary) on this fixture.
    pub fn config(&self, server: &str) -> ManagedConfig {
        ManagedConfig::new(Path::new(server), &self.model, self.port)
    }

    /// The pid of the process that listens (written once it listens), if any did.
    pub fn listener_pid(&self) -> Option<u32> {
        std::fs::read_to_string(sibling(&self.model, "pid"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
    }

    /// Every fake process started on this model, in order (launchers, listeners, restarts).
    pub fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(sibling(&self.model, "pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Every chat request body the fake received, in order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// A loopback port nobody listens on right now (bound, read, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether `pid` is a live process: `/proc/<pid>` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may hold spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}

/// Waits up to `within` for every pid in `pids` to be gone; returns the survivors.
pub async fn wait_gone(pids: &[u32], within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    loop {
        let survivors: Vec<u32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
        if survivors.is_empty() || Instant::now() > deadline {
            return survivors;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A process's command line, from `/proc/<pid>/cmdline`.
pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|part| !part.is_empty())
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

/// The pids holding the socket that listens on 127.0.0.1:`port` (from `/proc/net/tcp` and
/// `/proc/*/fd`); empty when nothing listens or it cannot be seen.
pub fn listener_pids(port: u16) -> Vec<u32> {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local = format!("0100007F:{port:04X}");
    let Some(inode) = table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| fields.len() > 9 && fields[1] == local && fields[3] == "0A")
        .map(|fields| fields[9].to_string())
    else {
        return Vec::new();
    };
    let needle = format!("socket:[{inode}]");
    let mut owners = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let holds = std::fs::read_dir(entry.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.to_string_lossy() == needle));
        if holds {
            owners.push(pid);
        }
    }
    owners
}

/// The value following `flag` in `args`, if the flag is there.
pub fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// `model/status`.
pub async fn model_status(client: &mut Client) -> ModelStatusResult {
    client.request("model/status", json!({})).await
}

/// Polls `model/status` every 10 ms until `done` holds; panics with every state seen when it
/// does not within `within`.
pub async fn wait_for_status(
    client: &mut Client,
    within: Duration,
    mut done: impl FnMut(&ModelStatusResult) -> bool,
) -> StatusLog {
    let deadline = Instant::now() + within;
    let mut states: Vec<String> = Vec::new();
    loop {
        let status = model_status(client).await;
        let state = status.state.clone();
        if states.last() != Some(&state) {
            states.push(state);
        }
        if done(&status) {
            return StatusLog {
                last: status,
                states,
            };
        }
        assert!(
            Instant::now() < deadline,
            "model/status did not reach the expected state within {within:?}; states seen: {states:?}; last: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Polls until `state` is `wanted`.
pub async fn wait_for_state(client: &mut Client, wanted: &str, within: Duration) -> StatusLog {
    wait_for_status(client, within, |status| status.state == wanted).await
}

fn sibling(model: &Path, extension: &str) -> PathBuf {
    let mut name = model.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    PathBuf::from(name)
}

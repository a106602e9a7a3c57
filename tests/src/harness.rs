//! The end-to-end harness: a real daemon (`talosd::run`) on a real Unix socket under a
//! temporary `TALOS_HOME`, and a client that speaks only `talos-protocol` over that socket.
//! What the daemon sends is read back as protocol types (`TurnOutcome`, `TurnEventParams`,
//! `ApprovalRequestParams`, `TraceRecord`, ...), so tests assert on fields, not on raw JSON.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{
    ApprovalRequestParams, Message, SessionNewResult, TurnEventParams, TurnOutcome, methods,
    rpc::MessageKind,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A daemon serving on a socket inside its own temporary home.
pub struct TestDaemon {
    pub home: tempfile::TempDir,
    pub socket: PathBuf,
    pub daemon: Arc<talosd::Daemon>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl TestDaemon {
    /// Starts a daemon whose `config.yaml` is `config` (with [`offline`] applied).
    pub async fn start(config: &str) -> TestDaemon {
        TestDaemon::start_prepared(config, |_| {}).await
    }

    /// [`TestDaemon::start`], with `prepare` run on the home (config written, state folders
    /// created) before the daemon starts: for state a daemon finds at start.
    pub async fn start_prepared(config: &str, prepare: impl FnOnce(&Path)) -> TestDaemon {
        let config = offline(config);
        let config = config.as_str();
        let home = tempfile::Builder::new()
            .prefix("th")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::write(home.path().join("config.yaml"), config).unwrap();
        talosd::paths::Home::from_root(home.path())
            .prepare()
            .unwrap();
        prepare(home.path());
        TestDaemon::start_in(home).await
    }

    /// Stops this daemon and starts a new one on the same home (its `config.yaml` and state),
    /// as a person restarting `talosd` would.
    pub async fn restart(mut self) -> TestDaemon {
        self.shut_down().await;
        let home = self.home;
        TestDaemon::start_in(home).await
    }

    /// Starts a daemon on an existing home holding its `config.yaml`.
    async fn start_in(home: tempfile::TempDir) -> TestDaemon {
        // The containment shim is a real talosd: the one built beside the test binaries.
        if let Some(shim) = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent()?.parent().map(|dir| dir.join("e2e-talosd")))
            .filter(|p| p.exists())
        {
            talosd::contain::use_shim(shim.clone());
            // Document text is extracted by the same real talosd (issue 16).
            talosd::documents::use_program(shim);
        }
        let talos_home = talosd::paths::Home::from_root(home.path());
        talos_home.prepare().unwrap();
        let socket =
            talos_protocol::socket::default_socket_path(&talos_protocol::socket::SocketEnv {
                talos_home: Some(home.path().to_str().unwrap().to_string()),
                xdg_runtime_dir: None,
                temp_dir: std::env::temp_dir(),
                uid: 0,
            });
        let bound = talosd::socket::bind(&socket).unwrap();
        let config = talosd::config::Config::load(&talos_home.config_file);
        let daemon = talosd::Daemon::new(talosd::DaemonSettings {
            config,
            home: talos_home,
            socket_path: socket.clone(),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let run = talosd::run(daemon.clone(), bound.listener, async move {
            let _ = stopped.await;
        });
        let lock = bound.lock;
        let task = tokio::spawn(async move {
            run.await;
            drop(lock);
        });
        TestDaemon {
            home,
            socket,
            daemon,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// A config pointing at `url`, with native tool calling on or off.
    pub fn config_for(url: &str, native_calling: bool) -> String {
        format!(
            "model:\n  mode: connect_only\n  url: {url}\ntools:\n  native_calling: {native_calling}\napproval:\n  timeout_secs: 30\n"
        )
    }

    /// [`TestDaemon::config_for`] with the runtime's pre-read off (`turn.preread_max_bytes:
    /// 0`): for tests whose scripted model reads a small named file itself before changing it,
    /// to hold rules that apply when the runtime has not read the file (read-first answers,
    /// the ladder on the model's own read). The pre-read itself, on by default at every level,
    /// is held by `turns/constrain.rs` and `turns/preread.rs`.
    pub fn config_reading_first(url: &str, native_calling: bool) -> String {
        format!(
            "{}turn:\n  preread_max_bytes: 0\n",
            TestDaemon::config_for(url, native_calling)
        )
    }

    pub async fn client(&self) -> Client {
        Client::connect(&self.socket).await
    }

    /// Every trace written so far, read as the protocol's [`TraceRecord`].
    pub fn traces(&self) -> Vec<TraceRecord> {
        self.trace_texts()
            .iter()
            .map(|text| {
                serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("a trace is not a TraceRecord ({e}): {text}"))
            })
            .collect()
    }

    /// The trace files' text as written (for checks that must see every byte, such as leaks);
    /// turn logs (`.log`, which hold the words on purpose) are left out: see [`Self::turn_logs`].
    pub fn trace_texts(&self) -> Vec<String> {
        let mut out = Vec::new();
        let root = self.home.path().join("traces");
        let Ok(sessions) = std::fs::read_dir(&root) else {
            return out;
        };
        for session in sessions.flatten() {
            for file in std::fs::read_dir(session.path()).unwrap().flatten() {
                if file.path().extension().is_some_and(|e| e == "json") {
                    out.push(std::fs::read_to_string(file.path()).unwrap());
                }
            }
        }
        out
    }

    /// The turn logs written so far (`traces/<session>/NNNNNN-<traceId>.log`), by path.
    pub fn turn_logs(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let root = self.home.path().join("traces");
        for session in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for file in std::fs::read_dir(session.path()).unwrap().flatten() {
                if file.path().extension().is_some_and(|e| e == "log") {
                    out.push((file.path(), std::fs::read_to_string(file.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// The checkpoint object files stored so far.
    pub fn checkpoint_objects(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let root = self.home.path().join("checkpoints");
        for ws in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for object in std::fs::read_dir(ws.path().join("objects"))
                .into_iter()
                .flatten()
                .flatten()
            {
                out.push(object.path());
            }
        }
        out
    }

    /// Stops through the injected shutdown signal and waits for the daemon to finish.
    pub async fn stop(mut self) {
        self.shut_down().await;
    }

    async fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(20), task)
                .await
                .expect("daemon stops")
                .unwrap();
        }
    }
}

/// A config without a `model` section gets a `connect_only` model on a closed port: the
/// default (`managed`) would launch a real llama-server if one is installed.
pub fn offline(config: &str) -> String {
    if config.contains("model:") {
        config.to_string()
    } else {
        format!("model:\n  mode: connect_only\n  url: http://127.0.0.1:9\n{config}")
    }
}

/// A protocol client over the real socket.
pub struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
    /// How long a read waits for the daemon's next message before the test fails.
    pub read_timeout: Duration,
}

/// How a test answers a daemon-to-client request during a call.
pub enum Answer {
    /// Reply with this JSON-RPC result.
    Result(Value),
    /// Do not answer.
    Ignore,
    /// Close the connection right away.
    Disconnect,
}

impl Client {
    pub async fn connect(socket: &Path) -> Client {
        let stream = UnixStream::connect(socket).await.unwrap();
        let (read, write) = stream.into_split();
        Client {
            reader: BufReader::new(read),
            writer: write,
            next_id: 1,
            read_timeout: Duration::from_secs(30),
        }
    }

    pub async fn send_line(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// The next message from the daemon, or `None` at end of stream.
    pub async fn read(&mut self) -> Option<Message> {
        let mut line = String::new();
        let n = tokio::time::timeout(self.read_timeout, self.reader.read_line(&mut line))
            .await
            .expect("the daemon answers within the read timeout")
            .unwrap();
        (n > 0).then(|| serde_json::from_str(&line).unwrap())
    }

    /// Calls `method`; every other message is passed to `on_message`. Returns the response and
    /// every message seen before it, or `None` if the test disconnected.
    pub async fn call_with(
        &mut self,
        method: &str,
        params: Value,
        mut on_message: impl FnMut(&Message) -> Answer,
    ) -> Option<(Message, Vec<Message>)> {
        let id = self.next_id;
        self.next_id += 1;
        self.send_line(&Message::request(json!(id), method, params).to_line())
            .await;
        let mut seen = Vec::new();
        loop {
            let message = self.read().await?;
            if message.kind() == MessageKind::Response && message.id == Some(json!(id)) {
                return Some((message, seen));
            }
            match on_message(&message) {
                Answer::Result(result) => {
                    let id = message.id.clone().unwrap();
                    self.send_line(&Message::response(id, result).to_line())
                        .await;
                }
                Answer::Ignore => {}
                Answer::Disconnect => return None,
            }
            seen.push(message);
        }
    }

    /// Calls `method` and returns its result as `R`, panicking on an error response or on a
    /// result that is not an `R`.
    pub async fn request<R: DeserializeOwned>(&mut self, method: &str, params: Value) -> R {
        let result = self.call(method, params).await;
        decode(method, result)
    }

    /// Calls `method` and returns its raw result, panicking on an error response.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let (response, _) = self
            .call_with(method, params, |_| Answer::Ignore)
            .await
            .unwrap();
        assert!(
            response.error.is_none(),
            "{method} failed: {:?}",
            response.error
        );
        response.result.unwrap()
    }

    /// `turn/start` with every approval answered `decision`; the turn's outcome.
    pub async fn turn(
        &mut self,
        session: &str,
        prompt: &str,
        decision: &'static str,
    ) -> TurnOutcome {
        self.turn_with(session, prompt, approve_all(decision))
            .await
            .0
    }

    /// `turn/start` with every other message passed to `on_message`; the turn's outcome and
    /// every message seen before it.
    pub async fn turn_with(
        &mut self,
        session: &str,
        prompt: &str,
        on_message: impl FnMut(&Message) -> Answer,
    ) -> (TurnOutcome, Vec<Message>) {
        let params = json!({"sessionId": session, "prompt": prompt});
        let (response, seen) = self
            .call_with(methods::TURN_START, params, on_message)
            .await
            .unwrap();
        (outcome(&response), seen)
    }

    /// `initialize` + `session/new`; returns the session id.
    pub async fn open_session(&mut self, workspace: &Path, mode: &str) -> String {
        self.call("initialize", json!({"clientName": "e2e"})).await;
        let result: SessionNewResult = self
            .request("session/new", json!({"workspace": workspace, "mode": mode}))
            .await;
        result.session_id
    }
}

/// Answers every approval with `decision`, ignoring other messages.
pub fn approve_all(decision: &'static str) -> impl FnMut(&Message) -> Answer {
    move |m| {
        if m.method.as_deref() == Some("approval/request") {
            Answer::Result(json!({"decision": decision}))
        } else {
            Answer::Ignore
        }
    }
}

/// A JSON value the daemon sent, read as `R`; panics (naming `what`) when it is not one.
pub fn decode<R: DeserializeOwned>(what: &str, value: Value) -> R {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| {
        panic!(
            "{what}: not a {} ({e}): {value}",
            std::any::type_name::<R>()
        )
    })
}

/// The `turn/start` outcome a response carries, panicking on an error response.
pub fn outcome(response: &Message) -> TurnOutcome {
    assert!(
        response.error.is_none(),
        "turn failed: {:?}",
        response.error
    );
    decode("turn/start result", response.result.clone().unwrap())
}

/// The approval requests among `messages`.
pub fn approvals(messages: &[Message]) -> Vec<ApprovalRequestParams> {
    params_of(messages, methods::APPROVAL_REQUEST)
}

/// The `turn/event` params among `messages`.
pub fn events(messages: &[Message]) -> Vec<TurnEventParams> {
    params_of(messages, methods::TURN_EVENT)
}

/// The params of every `method` message among `messages`, read as `P`.
fn params_of<P: DeserializeOwned>(messages: &[Message], method: &str) -> Vec<P> {
    messages
        .iter()
        .filter(|m| m.method.as_deref() == Some(method))
        .map(|m| decode(method, m.params.clone().unwrap()))
        .collect()
}

/// A workspace with `settings.py` holding `TIMEOUT = 30`.
pub fn timeout_workspace() -> tempfile::TempDir {
    let ws = tempfile::Builder::new().prefix("ws").tempdir().unwrap();
    std::fs::write(ws.path().join("settings.py"), "TIMEOUT = 30\nRETRIES = 3\n").unwrap();
    ws
}

/// What one [`agent_turn`] left: the outcome, its trace and what the model was sent.
pub struct OneTurn {
    pub outcome: TurnOutcome,
    pub trace: TraceRecord,
    pub requests: Vec<Value>,
}

/// One agent-mode turn in `workspace` against a native-calling fake llama running `script`,
/// with every approval granted.
pub async fn agent_turn(
    workspace: &Path,
    script: crate::fake_llama::Script,
    prompt: &str,
) -> OneTurn {
    let llama = crate::fake_llama::FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(workspace, "agent").await;
    let outcome = client.turn(&session, prompt, "approve").await;
    let trace = daemon.traces().into_iter().next().expect("a trace");
    daemon.stop().await;
    OneTurn {
        outcome,
        trace,
        requests: llama.requests(),
    }
}

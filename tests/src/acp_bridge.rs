//! `talos acp` as a child process, driven line by line: the raw JSON-RPC an editor sends and
//! every message the bridge writes, for tests that check ACP's field values exactly.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{Value, json};

/// A Talos home in `/tmp` (short, for the socket path) whose `config.yaml` is `config` (with
/// [`crate::harness::offline`] applied).
pub fn home_with(config: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("ta")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        crate::harness::offline(config),
    )
    .unwrap();
    home
}

/// `talos stop` on `home` (the daemon a bridge started).
pub fn stop(talos: &str, home: &Path) {
    let _ = Command::new(talos)
        .arg("stop")
        .env("TALOS_HOME", home)
        .output();
}

/// A running `talos acp` with its own `TALOS_HOME`.
pub struct Bridge {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Every message read so far, in order.
    pub seen: Vec<Value>,
}

impl Bridge {
    /// Starts `talos acp` (the binary `talos`) with `TALOS_HOME=home`, starting `talosd` on
    /// demand.
    pub fn start(talos: &str, talosd: &str, home: &Path) -> Bridge {
        let mut child = Command::new(talos)
            .arg("acp")
            .env("TALOS_HOME", home)
            .env("TALOS_DAEMON", talosd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line).expect("every stdout line is JSON");
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Bridge {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message that `pick` accepts; the others are kept in `seen` too.
    pub fn until(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("talos acp answered within 30 s");
            self.seen.push(message.clone());
            if pick(&message) {
                return message;
            }
        }
    }

    /// A request and its response.
    pub fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until(|m| m["id"] == id && m.get("method").is_none())
    }

    /// Answers the editor-side request `request` (a `session/request_permission`) with
    /// `option_id`.
    pub fn answer_permission(&mut self, request: &Value, option_id: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "outcome": {"outcome": "selected", "optionId": option_id}
        }}));
    }

    /// The `session/update`s seen so far, as their `update` objects.
    pub fn updates(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }

    /// Closes stdin and waits for the bridge to end.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

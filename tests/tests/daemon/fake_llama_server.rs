//! The `fake-llama-server` binary on its own, without a daemon: it takes llama-server's command
//! line, reads its behaviour from the model file or the environment, and does what each
//! behaviour promises (loading, replies, usage, recording, crashing, exiting, a forked
//! listener), so that the managed-mode tests built on it test the daemon and not the fixture.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_tests::managed::{FakeServer, alive, listener_pids, wait_gone};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-llama-server");

/// A fake process, killed with its group when dropped.
struct Running {
    child: Child,
}

impl Running {
    /// Starts the fake with llama-server's usual flags plus `extra`, in its own process group.
    fn start(fake: &FakeServer, extra: &[&str]) -> Running {
        let child = Command::new(FAKE)
            .args(["-m", fake.model.to_str().unwrap(), "--host", "127.0.0.1"])
            .args(["--port", &fake.port.to_string(), "-c", "4096", "-t", "2"])
            .args(["--parallel", "3", "--jinja", "--no-webui"])
            .args(extra)
            .env_remove("FAKE_LLAMA_BEHAVIOUR")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        Running { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn kill_group(&self) {
        let group = format!("-{}", self.pid());
        let status = Command::new("kill")
            .args(["-TERM", "--", &group])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn exit_code_within(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the fake did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.pid())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request; returns the status and the body.
fn http(port: u16, method: &str, path: &str, body: &Value) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

/// Waits until `GET /health` answers at all; returns its status.
fn first_health(port: u16) -> u16 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return http(port, "GET", "/health", &Value::Null).0;
        }
        assert!(Instant::now() < deadline, "the fake never listened");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The JSON payloads of an SSE body, without `[DONE]`.
fn sse(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn chat(port: u16, messages: Value) -> Vec<Value> {
    let (status, body) = http(
        port,
        "POST",
        "/v1/chat/completions",
        &json!({"messages": messages, "stream": true, "id_slot": 2, "cache_prompt": true}),
    );
    assert_eq!(status, 200, "{body}");
    sse(&body)
}

#[test]
fn it_takes_llama_servers_command_line_loads_then_serves_and_writes_its_pid_files() {
    let fake = FakeServer::new(json!({"loading_ms": 400, "supports_tool_calls": false}));
    let running = Running::start(
        &fake,
        &["--chat-template-file", "/x.jinja", "--mystery", "7"],
    );
    assert_eq!(first_health(fake.port), 503, "loading first");
    let (status, body) = http(fake.port, "GET", "/health", &Value::Null);
    assert_eq!(
        (status, serde_json::from_str::<Value>(&body).unwrap()),
        (
            503,
            json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
        )
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while http(fake.port, "GET", "/health", &Value::Null).0 != 200 {
        assert!(Instant::now() < deadline, "never ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    let props: Value =
        serde_json::from_str(&http(fake.port, "GET", "/props", &Value::Null).1).unwrap();
    assert_eq!(props["total_slots"], 3);
    assert_eq!(props["chat_template_caps"]["supports_tool_calls"], false);
    assert_eq!(fake.listener_pid(), Some(running.pid()));
    assert_eq!(fake.pids(), vec![running.pid()]);
    assert_eq!(listener_pids(fake.port), vec![running.pid()]);
}

#[test]
fn it_replies_as_scripted_reports_usage_and_timings_and_records_every_request() {
    let fake = FakeServer::new(json!({
        "reply": {"tool_call": {"name": "talos.read_file", "arguments": {"path": "a.py"}}, "then": "It is short."},
        "usage": {"prompt_tokens": 120, "cached_tokens": 100, "completion_tokens": 9},
    }));
    let _running = Running::start(&fake, &[]);
    assert_eq!(first_health(fake.port), 200);
    let first = chat(fake.port, json!([{"role": "user", "content": "read a.py"}]));
    let arguments: String = first
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"path": "a.py"})
    );
    let usage = first.last().unwrap();
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129, "prompt_tokens_details": {"cached_tokens": 100}})
    );
    assert_eq!(usage["timings"]["cache_n"], 100);
    assert_eq!(usage["timings"]["prompt_n"], 20);
    let second = chat(
        fake.port,
        json!([{"role": "user", "content": "read a.py"}, {"role": "tool", "content": "x = 1"}]),
    );
    let text: String = second
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "It is short.");
    let recorded = fake.requests();
    assert_eq!(recorded.len(), 2);
    assert!(
        recorded
            .iter()
            .all(|r| r["id_slot"] == 2 && r["cache_prompt"] == true)
    );
}

#[test]
fn it_crashes_after_the_asked_number_of_chat_requests_and_can_exit_at_start() {
    let fake = FakeServer::new(json!({"crash_after_requests": 2}));
    let mut running = Running::start(&fake, &[]);
    assert_eq!(first_health(fake.port), 200);
    chat(fake.port, json!([{"role": "user", "content": "one"}]));
    assert!(
        running.child.try_wait().unwrap().is_none(),
        "one is not enough"
    );
    chat(fake.port, json!([{"role": "user", "content": "two"}]));
    assert_eq!(running.exit_code_within(Duration::from_secs(5)), Some(1));

    let fake = FakeServer::new(json!({"exit_immediately": true}));
    let mut running = Running::start(&fake, &[]);
    assert_eq!(running.exit_code_within(Duration::from_secs(5)), Some(2));
    assert_eq!(fake.pids(), vec![running.pid()]);
    assert_eq!(fake.listener_pid(), None, "it never listened");
}

#[test]
fn its_behaviour_comes_from_the_environment_unless_the_model_file_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("real.gguf");
    std::fs::write(&gguf, b"GGUF\x03\x00").unwrap();
    let status = Command::new(FAKE)
        .args(["-m", gguf.to_str().unwrap(), "--port", "1"])
        .env("FAKE_LLAMA_EXIT_IMMEDIATELY", "true")
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(
        status.code(),
        Some(2),
        "the variable applies to a real model file"
    );

    let fake = FakeServer::new(json!({"exit_immediately": false, "crash_after_requests": 1}));
    let mut running = {
        let mut command = Command::new(FAKE);
        command
            .args([
                "-m",
                fake.model.to_str().unwrap(),
                "--port",
                &fake.port.to_string(),
            ])
            .env("FAKE_LLAMA_BEHAVIOUR", r#"{"exit_immediately": true}"#)
            .stderr(Stdio::null())
            .process_group(0);
        Running {
            child: command.spawn().unwrap(),
        }
    };
    assert_eq!(first_health(fake.port), 200, "the model file wins");
    chat(fake.port, json!([{"role": "user", "content": "one"}]));
    assert_eq!(running.exit_code_within(Duration::from_secs(5)), Some(1));

    let status = Command::new(FAKE)
        .args(["-m", gguf.to_str().unwrap()])
        .env("FAKE_LLAMA_NO_SUCH_SWITCH", "1")
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "a misspelt switch is an error");
}

#[test]
fn with_fork_listener_another_process_listens_and_dies_with_the_process_group() {
    let fake = FakeServer::new(json!({"fork_listener": true}));
    let running = Running::start(&fake, &[]);
    assert_eq!(first_health(fake.port), 200);
    let pids = fake.pids();
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert_eq!(pids[0], running.pid());
    let listener = fake.listener_pid().unwrap();
    assert_ne!(listener, running.pid());
    assert_eq!(
        listener_pids(fake.port),
        vec![listener],
        "only the copy holds the socket"
    );
    running.kill_group();
    let survivors = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(wait_gone(&pids, Duration::from_secs(3)));
    assert!(survivors.is_empty(), "{survivors:?}");
}

#[test]
fn a_forked_listener_outlives_a_killed_parent_for_its_grace_period_only() {
    let fake = FakeServer::new(json!({"fork_listener": true, "orphan_grace_ms": 700}));
    let mut running = Running::start(&fake, &[]);
    assert_eq!(first_health(fake.port), 200);
    let listener = fake.listener_pid().unwrap();
    running.child.kill().unwrap();
    running.child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        alive(listener),
        "killing only the launcher leaves the listener"
    );
    let survivors = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(wait_gone(&[listener], Duration::from_secs(5)));
    assert!(survivors.is_empty(), "it exits after its grace period");
}

/// Proves a fake server whose launcher is gone (a daemon killed, or a test binary that ran a
/// daemon in-process and ended) exits on its own about a second later, so a test run leaves no
/// fake-llama-server behind; a test that needs an orphan asks for longer (`parent_grace_ms`).
#[test]
fn a_server_whose_launcher_is_gone_exits_on_its_own() {
    let fake = FakeServer::new(json!({}));
    // A shell launches the server in the background and exits at once: the server's parent
    // is gone as soon as it starts.
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{FAKE}' -m '{}' --host 127.0.0.1 --port {} </dev/null >/dev/null 2>&1 & echo $!",
            fake.model.display(),
            fake.port
        ))
        .env_remove("FAKE_LLAMA_BEHAVIOUR")
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&status.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(first_health(fake.port), 200);
    let survivors = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(wait_gone(&[pid], Duration::from_secs(10)));
    if !survivors.is_empty() {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert!(
        survivors.is_empty(),
        "the orphaned fake server is still running"
    );
}

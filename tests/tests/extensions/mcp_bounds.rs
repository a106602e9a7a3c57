//! Bounds on what an MCP server can make Talos read and write, against the project's hostile
//! server: a flood of log notifications leaves a log of bounded size (each cut, a few per
//! window, rmcp's own whole-notification logging off), and an HTTP answer that is too large is
//! refused at its cap while one whose body never ends is ended by the call's timeout, each
//! with a clear error.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use talosd::config::Config;
use talosd::mcp::{McpHub, Scope};
use tokio_util::sync::CancellationToken;

const HOSTILE: &str = env!("CARGO_BIN_EXE_hostile-mcp-server");

fn hub_of(yaml: &str) -> McpHub {
    let config = Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}"));
    McpHub::new(&config.mcp)
}

fn scope(dir: &Path) -> Scope {
    Scope {
        session_id: "s1".into(),
        workspace: dir.to_path_buf(),
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// The bytes a log subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Proves 100 notifications of 256 KiB (25 MiB) leave a log of a few KiB with the daemon's
/// own filter: rmcp's whole-notification lines are off, Talos's own are cut and rate-limited.
/// One thread runs the runtime, so the subscriber set here sees every task.
#[tokio::test(flavor = "current_thread")]
async fn a_notification_flood_leaves_a_bounded_log() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(talosd::logging::filter())
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let dir = tempfile::tempdir().unwrap();
    let hub = hub_of(&format!(
        "mcp:\n  servers:\n    bad:\n      command: [{HOSTILE}, stdio]\n      timeout_secs: 60\n"
    ));
    let s = scope(dir.path());
    let out = hub
        .call(
            &s,
            "bad",
            "flood",
            args(json!({"count": 100, "bytes": 256 * 1024})),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "flooded 100");
    hub.shutdown().await;
    let log = String::from_utf8_lossy(&captured.0.lock().unwrap()).to_string();
    let lines = log.lines().filter(|l| l.contains("mcp log: ")).count();
    eprintln!(
        "log after a 25 MiB flood: {} bytes, {lines} notification lines",
        log.len()
    );
    assert!(log.len() < 64 * 1024, "{} bytes of log", log.len());
    assert!(
        lines >= 1,
        "the server's log messages are still logged:\n{log}"
    );
    assert!(lines <= 20, "{lines} lines");
}

/// Proves an answer line that never ends (a byte every 50 ms, no newline) is ended by the
/// server's timeout with a clear error that says the connection was closed, and the next call
/// is answered by the server started again (before, every later call timed out behind the half
/// message).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_line_that_never_ends_is_ended_by_the_calls_limit() {
    let dir = tempfile::tempdir().unwrap();
    let hub = hub_of(&format!(
        "mcp:\n  servers:\n    bad:\n      command: [{HOSTILE}, stdio]\n      timeout_secs: 2\n"
    ));
    let s = scope(dir.path());
    let call = |tool: &'static str| {
        hub.call(
            &s,
            "bad",
            tool,
            args(json!({"text": "x"})),
            CancellationToken::new(),
        )
    };
    let trickle = call("trickle").await.unwrap_err();
    assert!(
        trickle.starts_with(
            "mcp.bad.trickle timed out after 2 s with a message from the server unfinished"
        ) && trickle.ends_with("the connection was closed"),
        "{trickle}"
    );
    // The half message would poison what follows: the server is started again.
    let echo = call("echo").await.unwrap();
    assert_eq!(echo.text, "Echo: x");
    hub.shutdown().await;
}

/// The hostile HTTP server, ended when dropped (also when the test fails).
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn http_server(dir: &Path, key: &str) -> HttpServer {
    let (port_file, auth_log) = (dir.join("port"), dir.join("auth.log"));
    let child = std::process::Command::new(HOSTILE)
        .args([
            "http",
            &port_file.display().to_string(),
            &auth_log.display().to_string(),
        ])
        .env("HOSTILE_EXPECTED_KEY", key)
        .spawn()
        .unwrap();
    let mut server = HttpServer {
        child,
        url: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let port = loop {
        if let Ok(port) = std::fs::read_to_string(&port_file) {
            break port;
        }
        assert!(Instant::now() < deadline, "the HTTP server did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    server.url = format!("http://127.0.0.1:{port}/mcp");
    server
}

/// Proves an HTTP answer of 50 MB is refused at the cap, and one whose body never ends is
/// ended by the server's timeout, each as a failed call with a clear error; the daemon goes on
/// (the next call works).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_bodies_are_capped_and_timed() {
    let dir = tempfile::tempdir().unwrap();
    // The key is read from an environment variable talosd has: HOME's value serves.
    let home = std::env::var("HOME").unwrap();
    let server = http_server(dir.path(), &home).await;
    let hub = hub_of(&format!(
        "mcp:\n  servers:\n    web:\n      url: {}\n      api_key_env: HOME\n      timeout_secs: 3\n",
        server.url
    ));
    let s = scope(dir.path());
    let call = |tool: &'static str| {
        hub.call(
            &s,
            "web",
            tool,
            args(json!({"text": "x"})),
            CancellationToken::new(),
        )
    };
    let huge = call("huge").await.unwrap_err();
    eprintln!("huge: {huge}");
    assert!(
        huge.starts_with("mcp.web.huge failed") && huge.contains("4194304 bytes"),
        "{huge}"
    );
    assert!(!huge.contains(&home), "{huge}");
    let started = Instant::now();
    let endless = call("endless").await.unwrap_err();
    eprintln!("endless: {endless} after {:?}", started.elapsed());
    assert!(
        endless.contains("mcp.web.endless timed out after 3 s"),
        "{endless}"
    );
    let echo = call("echo").await.unwrap();
    assert_eq!(echo.text, "Echo: x");
    hub.shutdown().await;
}

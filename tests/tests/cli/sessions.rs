//! `talos run` with the real CLI binary: Ctrl-C (SIGINT) while the model streams sends
//! `turn/cancel` on a second connection, the daemon ends the turn `CANCELLED` and writes its
//! trace, and the CLI prints that outcome and exits 1, the session staying open and idle; and a
//! second `talos run` after a daemon restart continues the workspace's session.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talos_protocol::{CompletionStatus, SessionListResult};
use talos_tests::fake_llama::{FakeLlama, Reply, after_tool_result, write_call};
use talos_tests::harness::TestDaemon;

const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_talos_run_cancels_the_turn_and_prints_the_cancelled_outcome() {
    let stall = Arc::new(|_: &Value| Reply::Stall("Let me think".into()));
    let llama = FakeLlama::start(true, stall).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let child = Command::new(TALOS)
        .args(["run", "--workspace"])
        .arg(ws.path())
        .arg("Add a heading to index.html")
        .env("TALOS_HOME", daemon.home.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    talos_tests::cli::wait_until_async(
        "!llama.requests().is_empty()",
        Duration::from_secs(10),
        || !llama.requests().is_empty(),
    )
    .await;
    assert_eq!(llama.requests().len(), 1, "the turn reached the model");
    let sent = Command::new("kill")
        .arg("-INT")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cancelling the turn"), "{stderr}");
    assert!(stderr.contains("CANCELLED"), "{stderr}");
    let traces = daemon.traces();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].outcome.status, CompletionStatus::Cancelled);
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let listed: SessionListResult = client.request("session/list", json!({})).await;
    assert_eq!(listed.sessions.len(), 1);
    assert!(!listed.sessions[0].busy, "the session stays, idle");
    daemon.stop().await;
}

fn talos_run(
    home: &std::path::Path,
    workspace: &std::path::Path,
    prompt: &str,
) -> std::process::Output {
    Command::new(TALOS)
        .args(["run", "--workspace"])
        .arg(workspace)
        .arg(prompt)
        .env("TALOS_HOME", home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_run_continues_the_workspaces_session_across_a_daemon_restart() {
    let script = Arc::new(|request: &Value| {
        if after_tool_result(request) {
            Reply::Text("I created notes.txt.".into())
        } else {
            write_call("notes.txt", "remember the milk\n")
        }
    });
    let llama = FakeLlama::start(true, script).await;
    // Writes are approved by policy, so the CLI needs no terminal to answer.
    let config = format!(
        "{}permissions:\n  rules:\n    - effect: allow\n      tools: [talos.write_file]\n      paths: [\"notes.txt\"]\n",
        TestDaemon::config_for(&llama.url, true)
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = tempfile::tempdir().unwrap();
    let home = daemon.home.path().to_path_buf();
    let ws_path = ws.path().to_path_buf();
    let first = tokio::task::spawn_blocking(move || {
        talos_run(&home, &ws_path, "Create notes.txt saying remember the milk")
    })
    .await
    .unwrap();
    let first_err = String::from_utf8_lossy(&first.stderr).to_string();
    assert_eq!(first.status.code(), Some(0), "{first_err}");
    let daemon = daemon.restart().await;
    let home = daemon.home.path().to_path_buf();
    let ws_path = ws.path().to_path_buf();
    let second =
        tokio::task::spawn_blocking(move || talos_run(&home, &ws_path, "Did you make the change?"))
            .await
            .unwrap();
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(
        stdout.contains("From Talos's records of the previous turn"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(stdout.contains("notes.txt"), "{stdout}");
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let listed: SessionListResult = client.request("session/list", json!({})).await;
    assert_eq!(listed.sessions.len(), 1, "one session, continued");
    assert_eq!(listed.sessions[0].turns, 2);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_the_approval_prompt_cancels_the_turn_and_writes_nothing() {
    use std::io::Read;
    let script = Arc::new(|request: &Value| {
        if after_tool_result(request) {
            Reply::Text("Done.".into())
        } else {
            write_call("index.html", "<h1>Hello</h1>\n")
        }
    });
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut child = Command::new(TALOS)
        .args(["run", "--workspace"])
        .arg(ws.path())
        .arg("Create index.html with the heading Hello")
        .env("TALOS_HOME", daemon.home.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Keep stdin open and unanswered: the prompt waits.
    let _stdin = child.stdin.take();
    let shown = Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let (shown, mut stderr) = (shown.clone(), child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                shown
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    talos_tests::cli::wait_until_async(
        "shown.lock().unwrap().contains(\"Allow?\")",
        Duration::from_secs(10),
        || shown.lock().unwrap().contains("Allow?"),
    )
    .await;
    assert!(
        shown.lock().unwrap().contains("Allow?"),
        "the prompt is shown"
    );
    let sent = Command::new("kill")
        .arg("-INT")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(sent.success());
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    reader.join().unwrap();
    let stderr = shown.lock().unwrap().clone();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("turn cancelled"), "{stderr}");
    assert!(
        !ws.path().join("index.html").exists(),
        "nothing was written"
    );
    // The daemon finished the turn on its own and wrote its trace.
    talos_tests::cli::wait_until_async(
        "!daemon.traces().is_empty()",
        Duration::from_secs(5),
        || !daemon.traces().is_empty(),
    )
    .await;
    let traces = daemon.traces();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].outcome.status, CompletionStatus::Cancelled);
    daemon.stop().await;
}

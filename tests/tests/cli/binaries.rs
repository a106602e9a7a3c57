//! The real binaries: `talos` starting `talosd` on demand and carrying a governed edit, the
//! approval prompt on the terminal, exit codes, and `talosd`'s socket security and signals.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_protocol::{
    ApprovalRequestParams, Classification, CompletionStatus, DaemonStatusResult, TurnEvent,
    TurnEventParams, TurnOutcome,
};
use talos_tests::cli::{talos, talos_async};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{Client, TestDaemon, decode, timeout_workspace};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit_model() -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    scripted(vec![
        read_call("settings.py"),
        Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                .into(),
        )]),
        Reply::Text("TIMEOUT is now 60.".into()),
    ])
}

fn home_with(config: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("tb")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        talos_tests::harness::offline(config),
    )
    .unwrap();
    home
}

fn socket_of(home: &Path) -> PathBuf {
    home.join("run").join("talosd.sock")
}

fn stop_daemon(home: &Path) {
    let out = talos(home, &["stop"], "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while socket_of(home).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !socket_of(home).exists(),
        "talosd removes its socket when it stops"
    );
}

#[test]
fn version_answers_without_touching_the_daemon() {
    let home = home_with("");
    let out = talos(home.path(), &["--version"], "");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("talos {}", env!("CARGO_PKG_VERSION"))
    );
    assert!(!home.path().join("run").exists());
}

#[test]
fn usage_and_connection_errors_exit_2() {
    let home = home_with("");
    assert_eq!(
        talos(home.path(), &["run", "--mode", "yolo", "hello"], "")
            .status
            .code(),
        Some(2)
    );
    let out = talos(home.path(), &["status"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("talosd is not running"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_run_starts_the_daemon_and_applies_an_approved_edit() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let args = vec![
        "run".into(),
        "--workspace".into(),
        ws.path().display().to_string(),
        EDIT_REQUEST.into(),
    ];
    let out = talos_async(home.path().to_path_buf(), args, "y\n").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains("Allow? [y=yes, a=yes for session, N=no]"),
        "{stderr}"
    );
    assert!(
        stderr.contains("-TIMEOUT = 30") && stderr.contains("+TIMEOUT = 60"),
        "the diff is shown: {stderr}"
    );
    // The work was done and verified: the runtime writes the summary, with no third model call.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("settings.py was changed and read back as approved."),
        "{stdout}"
    );
    assert_eq!(llama.requests().len(), 2);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );

    let run_dir = home.path().join("run");
    assert_eq!(
        std::fs::metadata(&run_dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        std::fs::metadata(socket_of(home.path()))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    for state in ["traces", "checkpoints", "logs"] {
        let mode = std::fs::metadata(home.path().join(state))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{state}");
    }
    let status = talos(home.path(), &["status", "--json"], "");
    assert_eq!(status.status.code(), Some(0));
    let status: DaemonStatusResult = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status.model.url, llama.url);
    stop_daemon(home.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_of_input_at_the_prompt_denies_and_exits_1() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let args = vec![
        "run".into(),
        "--workspace".into(),
        ws.path().display().to_string(),
        EDIT_REQUEST.into(),
    ];
    let out = talos_async(home.path().to_path_buf(), args, "").await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("BLOCKED"));
    stop_daemon(home.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_is_one_json_value_per_line() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let args = vec![
        "run".into(),
        "--json".into(),
        "--workspace".into(),
        ws.path().display().to_string(),
        EDIT_REQUEST.into(),
    ];
    let out = talos_async(home.path().to_path_buf(), args, "n\n").await;
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<JsonLine> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.iter().any(|l| matches!(l, JsonLine::Approval { .. })));
    assert!(matches!(
        lines.last().unwrap(),
        JsonLine::Outcome { outcome } if outcome.classification == Classification::BlockedByApproval
    ));
    assert!(lines.iter().any(|l| matches!(
        l,
        JsonLine::Event(TurnEventParams {
            event: TurnEvent::StreamStart { .. },
            ..
        })
    )));
    stop_daemon(home.path());
}

/// One line of `talos run --json`: an approval request, the outcome, or a turn event.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum JsonLine {
    Approval {
        #[serde(rename = "approvalRequest")]
        #[allow(dead_code)] // only its presence is checked
        approval_request: ApprovalRequestParams,
    },
    Outcome {
        outcome: TurnOutcome,
    },
    Event(TurnEventParams),
}

struct Foreground {
    child: Child,
}

impl Foreground {
    fn start(home: &Path) -> Foreground {
        let child = Command::new(TALOSD)
            .arg("--foreground")
            .env("TALOS_HOME", home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(socket_of(home)).is_err() {
            assert!(Instant::now() < deadline, "talosd did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Foreground { child }
    }

    fn signal(&self, signal: &str) {
        assert!(
            Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(self.child.id().to_string())
                .status()
                .unwrap()
                .success()
        );
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_cancels_the_in_flight_turn_writes_its_trace_and_removes_the_socket() {
    let llama = FakeLlama::start(true, Arc::new(|_: &Value| Reply::Hang)).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let mut daemon = Foreground::start(home.path());
    let mut client = Client::connect(&socket_of(home.path())).await;
    let session = client.open_session(ws.path(), "agent").await;
    client.send_line(&json!({"jsonrpc": "2.0", "id": 1, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}}).to_string()).await;
    while llama.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    daemon.signal("TERM");
    let outcome = loop {
        let m = client
            .read()
            .await
            .expect("the cancelled turn still answers");
        if m.id == Some(json!(1)) && m.method.is_none() {
            break decode::<TurnOutcome>("turn/start result", m.result.unwrap());
        }
    };
    assert_eq!(outcome.status, CompletionStatus::Cancelled);
    let status = tokio::task::spawn_blocking(move || daemon.child.wait().map(|s| (s, daemon)))
        .await
        .unwrap()
        .unwrap()
        .0;
    assert!(status.success(), "{status}");
    assert!(!socket_of(home.path()).exists());
    let traces: Vec<_> = std::fs::read_dir(home.path().join("traces"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(traces.len(), 1, "the cancelled turn's trace is written");
}

#[test]
fn one_daemon_per_socket_and_a_stale_socket_is_reclaimed_after_a_crash() {
    let home = home_with("");
    let first = Foreground::start(home.path());
    let second = Command::new(TALOSD)
        .arg("--foreground")
        .env("TALOS_HOME", home.path())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let message = String::from_utf8_lossy(&second.stderr);
    assert!(
        message.contains("another talosd holds")
            || message.contains("a live server already answers"),
        "{message}"
    );
    first.signal("KILL");
    drop(first);
    assert!(
        socket_of(home.path()).exists(),
        "a killed daemon leaves its socket behind"
    );
    let again = Foreground::start(home.path());
    again.signal("TERM");
}

#[test]
fn a_symlinked_runtime_directory_is_refused() {
    let home = home_with("");
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), home.path().join("run")).unwrap();
    let out = Command::new(TALOSD)
        .arg("--foreground")
        .env("TALOS_HOME", home.path())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is a symlink"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_dir(elsewhere.path())
            .unwrap()
            .next()
            .is_none(),
        "nothing was created through the link"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_run_continues_the_workspace_session_and_talos_grants_lists_and_revokes() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let turns = Arc::new(AtomicUsize::new(0));
    let counter = turns.clone();
    let model = Arc::new(move |request: &Value| {
        let step = talos_tests::fake_llama::tool_results(request);
        if step == 0 {
            // Read first: a full write may not replace a file not read this turn.
            talos_tests::fake_llama::read_call("notes.txt")
        } else if step == 1 {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            Reply::ToolCalls(vec![(
                "talos.write_file".into(),
                json!({"path": "notes.txt", "content": format!("note {n}\n")}).to_string(),
            )])
        } else {
            Reply::Text("Written.".into())
        }
    });
    let llama = FakeLlama::start(true, model).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let dir = ws.path().display().to_string();
    let run = |answer: &'static str| {
        talos_async(
            home.path().to_path_buf(),
            vec![
                "run".into(),
                "--workspace".into(),
                dir.clone(),
                "Write notes.txt".into(),
            ],
            answer,
        )
    };
    let first = run("a\n").await;
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(String::from_utf8_lossy(&first.stderr).contains("Allow?"));
    let second = run("").await;
    assert_eq!(
        second.status.code(),
        Some(0),
        "the remembered approval covers the second run: {}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(!String::from_utf8_lossy(&second.stderr).contains("Allow?"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "note 2\n"
    );
    let listed = talos(home.path(), &["grants", "--workspace", &dir], "");
    assert!(
        String::from_utf8_lossy(&listed.stdout)
            .contains("writes: file writes inside the workspace"),
        "{}",
        String::from_utf8_lossy(&listed.stdout)
    );
    let revoked = talos(
        home.path(),
        &["grants", "--workspace", &dir, "--revoke"],
        "",
    );
    assert!(String::from_utf8_lossy(&revoked.stdout).contains("revoked 1 grant(s)"));
    let third = run("").await;
    assert_eq!(
        third.status.code(),
        Some(1),
        "after revoking, the prompt is back and end of input denies"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        "note 2\n"
    );
    stop_daemon(home.path());
}

#[test]
fn talos_profiles_shows_trust_and_pins_only_with_an_explicit_yes() {
    let home = home_with("");
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".talos")).unwrap();
    std::fs::write(
        ws.path().join(".talos/profiles.yaml"),
        "profiles:\n  - id: hello\n    executable: /bin/echo\n    args: [\"hi\"]\n",
    )
    .unwrap();
    let dir = ws.path().display().to_string();
    let listed = talos(home.path(), &["profiles", "--workspace", &dir], "");
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains("cargo_test") && text.contains("gradle_test"),
        "{text}"
    );
    assert!(
        text.contains("declared, untrusted (never pinned)") && text.contains("ws:hello"),
        "{text}"
    );
    let refused = talos(
        home.path(),
        &["profiles", "trust", "--workspace", &dir],
        "y\n",
    );
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a non-interactive stdin needs --yes"
    );
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    let pinned = talos(
        home.path(),
        &["profiles", "trust", "--workspace", &dir, "--yes"],
        "",
    );
    assert_eq!(
        pinned.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&pinned.stderr)
    );
    assert!(
        String::from_utf8_lossy(&pinned.stderr).contains("executable: /bin/echo"),
        "the file is shown before pinning"
    );
    assert!(String::from_utf8_lossy(&pinned.stdout).contains("Pinned 1 workspace profile(s)"));
    let listed = talos(home.path(), &["profiles", "--workspace", &dir], "");
    assert!(String::from_utf8_lossy(&listed.stdout).contains(": trusted"));
    stop_daemon(home.path());
}

/// The task-success bench's own checks can fail and can pass: every task of both sets fails on
/// its untouched workspace and passes on a correct result, so "done" in its figures is earned.
#[test]
fn the_task_bench_checks_fail_untouched_and_pass_when_done() {
    let out = Command::new(env!("CARGO_BIN_EXE_talos-real-bench"))
        .args(["tasks", "--check"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("each fails untouched and passes when done"),
        "{stdout}"
    );
}

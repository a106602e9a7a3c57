//! `turn/cancel` through the socket: a turn cancelled from a second connection while the model
//! streams, while an approval waits and while a command runs ends `CANCELLED` with its trace
//! written, the model request aborted, the approval denied with source `cancelled`, nothing
//! written and the command's process tree gone; a cancel on the turn's own connection works too,
//! and a cancel after the turn ended is answered.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use talos_protocol::event::ApprovalSource;
use talos_protocol::{
    Classification, CompletionStatus, Decision, Message, TurnCancelResult, TurnEvent, TurnOutcome,
};
use talos_tests::fake_llama::{FakeLlama, Reply, scripted, write_call};
use talos_tests::harness::{Answer, Client, TestDaemon, events};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// A second connection that sends `turn/cancel` for `session` once told to.
async fn canceller(
    daemon: &TestDaemon,
    session: &str,
) -> (mpsc::UnboundedSender<()>, JoinHandle<TurnCancelResult>) {
    let (go, told) = mpsc::unbounded_channel::<()>();
    (go, canceller_told(daemon, session, told).await)
}

/// [`canceller`], told through a channel made beforehand.
async fn canceller_told(
    daemon: &TestDaemon,
    session: &str,
    mut told: mpsc::UnboundedReceiver<()>,
) -> JoinHandle<TurnCancelResult> {
    let mut other = daemon.client().await;
    other
        .call("initialize", json!({"clientName": "e2e-cancel"}))
        .await;
    let session = session.to_string();
    tokio::spawn(async move {
        told.recv().await;
        other
            .request("turn/cancel", json!({"sessionId": session}))
            .await
    })
}

/// Runs one turn on `client`; `trigger` says which message sends the cancel.
async fn cancelled_turn(
    client: &mut Client,
    session: &str,
    go: &mpsc::UnboundedSender<()>,
    trigger: impl Fn(&Message) -> bool,
) -> (TurnOutcome, Vec<Message>) {
    client
        .turn_with(session, "Add a heading to index.html", |m| {
            if trigger(m) {
                let _ = go.send(());
            }
            Answer::Ignore
        })
        .await
}

fn assert_cancelled(outcome: &TurnOutcome, daemon: &TestDaemon) {
    assert_eq!(outcome.status, CompletionStatus::Cancelled, "{outcome:?}");
    assert_eq!(outcome.classification, Classification::Cancelled);
    let traces = daemon.traces();
    assert_eq!(traces.len(), 1, "the trace is written");
    assert_eq!(traces[0].outcome.status, CompletionStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_the_model_stream_aborts_the_request_and_ends_cancelled() {
    // The model streams a first piece and stalls; the cancel is sent once the request is in.
    let (go, told) = mpsc::unbounded_channel::<()>();
    let script = std::sync::Arc::new(move |_: &Value| {
        let _ = go.send(());
        Reply::Stall("Let me think".into())
    });
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let cancel = canceller_told(&daemon, &session, told).await;
    let outcome = client
        .turn(&session, "Add a heading to index.html", "approve")
        .await;
    assert!(cancel.await.unwrap().cancelled, "a turn was running");
    assert_cancelled(&outcome, &daemon);
    assert_eq!(llama.requests().len(), 1, "no further model call");
    // The stalled reply ends only when the daemon hangs up on it.
    talos_tests::cli::wait_until_async(
        "llama.finished_replies() == 1",
        Duration::from_secs(5),
        || llama.finished_replies() == 1,
    )
    .await;
    assert_eq!(llama.finished_replies(), 1, "the model request was aborted");
    // The session is free again and takes the next turn.
    let listed: Value = client.call("session/list", json!({})).await;
    assert_eq!(listed["sessions"][0]["busy"], false);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_an_approval_denies_it_as_cancelled_and_writes_nothing() {
    let steps = vec![
        write_call("index.html", "<h1>Hello</h1>\n"),
        Reply::Text("I added the heading.".into()),
    ];
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (go, cancel) = canceller(&daemon, &session).await;
    let (outcome, seen) = cancelled_turn(&mut client, &session, &go, |m| {
        m.method.as_deref() == Some("approval/request")
    })
    .await;
    assert!(cancel.await.unwrap().cancelled);
    assert_cancelled(&outcome, &daemon);
    let resolved: Vec<(Decision, ApprovalSource)> = events(&seen)
        .into_iter()
        .filter_map(|e| match e.event {
            TurnEvent::ApprovalResolved {
                decision, source, ..
            } => Some((decision, source)),
            _ => None,
        })
        .collect();
    assert_eq!(resolved, vec![(Decision::Deny, ApprovalSource::Cancelled)]);
    assert!(
        !ws.path().join("index.html").exists(),
        "nothing was written"
    );
    assert!(
        outcome.files.iter().all(|f| !f.changed),
        "{:?}",
        outcome.files
    );
    assert_eq!(llama.requests().len(), 1, "no model call after the cancel");
    daemon.stop().await;
}

fn sleeper(ws: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = ws.join("sleeper.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsleep 60 &\necho $! > grandchild.pid\nwait\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(ws.join(".talos")).unwrap();
    std::fs::write(
        ws.join(".talos/profiles.yaml"),
        "profiles:\n  - id: sleeper\n    executable: ./sleeper.sh\n    timeout_ms: 60000\n",
    )
    .unwrap();
    ws.join("grandchild.pid")
}

/// The pid in `pid_file`, once the script wrote it.
async fn written_pid(pid_file: &Path) -> i32 {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(pid_file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the command never started");
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_a_command_kills_its_process_tree() {
    let steps = vec![
        Reply::ToolCalls(vec![(
            "talos.run_command".into(),
            json!({"profile": "ws:sleeper"}).to_string(),
        )]),
        Reply::Text("Done.".into()),
    ];
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let pid_file = sleeper(ws.path());
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let listed: Value = client
        .call("profile/list", json!({"workspace": ws.path()}))
        .await;
    let sha = listed["workspace"]["sha256"].as_str().unwrap().to_string();
    client
        .call(
            "profile/trust",
            json!({"workspace": ws.path(), "sha256": sha}),
        )
        .await;
    let (go, cancel) = canceller(&daemon, &session).await;
    let watcher = {
        let pid_file = pid_file.clone();
        tokio::spawn(async move {
            let pid = written_pid(&pid_file).await;
            assert!(alive(pid), "the command runs");
            let _ = go.send(());
            pid
        })
    };
    let (outcome, _) = client
        .turn_with(&session, "Run the command profile ws:sleeper", |m| {
            if m.method.as_deref() == Some("approval/request") {
                Answer::Result(json!({"decision": "approve"}))
            } else {
                Answer::Ignore
            }
        })
        .await;
    let pid = watcher.await.unwrap();
    assert!(cancel.await.unwrap().cancelled);
    assert_cancelled(&outcome, &daemon);
    assert!(
        daemon.traces()[0].commands[0].cancelled,
        "the trace says so"
    );
    talos_tests::cli::wait_until_async("!alive(pid)", Duration::from_secs(5), || !alive(pid)).await;
    assert!(!alive(pid), "the grandchild {pid} died with the tree");
    daemon.stop().await;
}

#[tokio::test]
async fn a_cancel_after_the_turn_ended_is_answered_and_an_unknown_session_is_an_error() {
    let llama = FakeLlama::start(true, scripted(vec![Reply::Text("Hello.".into())])).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client
        .turn(&session, "What is in this folder?", "deny")
        .await;
    assert_ne!(first.status, CompletionStatus::Cancelled);
    let late: TurnCancelResult = client
        .request("turn/cancel", json!({"sessionId": session}))
        .await;
    assert!(!late.cancelled, "no turn runs: answered, not an error");
    let (response, _) = client
        .call_with(
            "turn/cancel",
            json!({"sessionId": "ses-00000000000000000000000000000000"}),
            |_| Answer::Ignore,
        )
        .await
        .unwrap();
    assert_eq!(response.error.unwrap().code, -32001);
    // The cancel did not leak into the next turn.
    let next = client
        .turn(&session, "What is in this folder?", "deny")
        .await;
    assert_eq!(next.status, first.status);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_on_the_turns_own_connection_is_answered_beside_the_turn() {
    let stall = std::sync::Arc::new(|_: &Value| Reply::Stall("Let me think".into()));
    let llama = FakeLlama::start(true, stall).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    client.send_line(&json!({"jsonrpc": "2.0", "id": 100, "method": "turn/start", "params": {"sessionId": session, "prompt": "Add a heading to index.html"}}).to_string()).await;
    talos_tests::cli::wait_until_async(
        "!llama.requests().is_empty()",
        Duration::from_secs(10),
        || !llama.requests().is_empty(),
    )
    .await;
    client.send_line(&json!({"jsonrpc": "2.0", "id": 101, "method": "turn/cancel", "params": {"sessionId": session}}).to_string()).await;
    let (mut cancel, mut outcome) = (None, None);
    while cancel.is_none() || outcome.is_none() {
        let m = client.read().await.expect("both answers come");
        match m.id.as_ref().and_then(Value::as_u64) {
            Some(101) => cancel = m.result,
            Some(100) => outcome = m.result,
            _ => {}
        }
    }
    assert_eq!(cancel.unwrap()["cancelled"], true);
    let outcome: TurnOutcome = serde_json::from_value(outcome.unwrap()).unwrap();
    assert_cancelled(&outcome, &daemon);
    daemon.stop().await;
}

/// Proves a cancel that comes after a write landed says so (issue 26, defect 9): the model
/// writes index.html (approved), then stalls on the next file; the cancel ends the turn
/// CANCELLED, and the answer names the file written, that it was read back as approved, and
/// the undo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_after_a_write_names_the_write_and_the_undo() {
    let (go, told) = mpsc::unbounded_channel::<()>();
    let script = std::sync::Arc::new(move |request: &Value| {
        if request.to_string().contains("\"role\":\"tool\"") {
            let _ = go.send(());
            Reply::Stall("Now app.js".into())
        } else {
            write_call("index.html", "<h1>Hi</h1>\n")
        }
    });
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let cancel = canceller_told(&daemon, &session, told).await;
    let outcome = client
        .turn(&session, "Create index.html and app.js", "approve")
        .await;
    assert!(cancel.await.unwrap().cancelled);
    assert_cancelled(&outcome, &daemon);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("index.html")).unwrap(),
        "<h1>Hi</h1>\n"
    );
    for said in [
        "The cancel came after a change was written; it stays on disk: index.html (written and read back as approved).",
        "`talos undo` (or /undo) restores what this turn wrote.",
    ] {
        assert!(
            outcome.final_answer.contains(said),
            "{}",
            outcome.final_answer
        );
    }
    daemon.stop().await;
}

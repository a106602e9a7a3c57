//! Sessions that survive the daemon, through the socket: a restart between two turns of one
//! session, with the follow-ups ("did you make the change?", "yes") answered from the persisted
//! records; grants not restored; corrupt and foreign session files skipped and reported;
//! `session/resume`; `session/close` deleting the file.

use serde_json::{Value, json};
use std::sync::Arc;
use talos_protocol::{
    CompletionStatus, GrantsListResult, SessionInfo, SessionListResult, SessionResumeResult,
};

use talos_tests::fake_llama::{FakeLlama, Reply, Script, after_tool_result, last_user, write_call};
use talos_tests::harness::{Answer, Client, TestDaemon, approvals, approve_all};

const CHANGE: &str = "Create index.html with the heading Hello";
const OTHER: &str = "Create about.html with the heading About";

/// Writes the page the request names, then answers.
fn steps() -> Script {
    Arc::new(|request: &Value| {
        if after_tool_result(request) {
            Reply::Text("I created the page.".into())
        } else if last_user(request).contains("about.html") {
            write_call("about.html", "<h1>About</h1>\n")
        } else {
            write_call("index.html", "<h1>Hello</h1>\n")
        }
    })
}

fn workspace() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

async fn listed(client: &mut Client) -> Vec<SessionInfo> {
    let result: SessionListResult = client.request("session/list", json!({})).await;
    result.sessions
}

async fn initialized(daemon: &TestDaemon) -> Client {
    let mut client = daemon.client().await;
    client
        .call("initialize", json!({"clientName": "e2e"}))
        .await;
    client
}

/// The error code and message of a call that must fail.
async fn error_of(client: &mut Client, method: &str, params: Value) -> (i64, String) {
    let (response, _) = client
        .call_with(method, params, |_| Answer::Ignore)
        .await
        .unwrap();
    let error = response.error.expect("an error response");
    (error.code, error.message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_daemon_answers_the_follow_up_from_the_persisted_records() {
    let llama = FakeLlama::start(true, steps()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client.turn(&session, CHANGE, "approve").await;
    assert_eq!(first.status, CompletionStatus::Complete, "{first:?}");
    assert!(listed(&mut client).await[0].persisted);
    drop(client);
    let model_calls = llama.requests().len();

    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    let sessions = listed(&mut client).await;
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let restored = &sessions[0];
    assert_eq!(restored.session_id, session);
    assert_eq!((restored.turns, restored.persisted), (1, true));
    assert_eq!(
        restored.workspace,
        ws.path().canonicalize().unwrap().display().to_string()
    );
    let status = client
        .turn(&session, "Did you make the change?", "deny")
        .await;
    assert!(
        status.final_answer.contains(&format!(
            "From Talos's records of the previous turn (trace {})",
            first.trace_id
        )),
        "{}",
        status.final_answer
    );
    assert!(
        status.final_answer.contains("index.html"),
        "{}",
        status.final_answer
    );
    assert_eq!(
        llama.requests().len(),
        model_calls,
        "answered without the model"
    );
    let resumed: SessionResumeResult = client
        .request("session/resume", json!({"sessionId": session}))
        .await;
    assert!(!resumed.loaded, "already open: nothing read");
    assert_eq!(resumed.session.turns, 2);
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_after_a_restart_inherits_the_denied_change() {
    let llama = FakeLlama::start(true, steps()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let denied = client.turn(&session, CHANGE, "deny").await;
    assert_eq!(denied.status, CompletionStatus::Blocked, "{denied:?}");
    drop(client);

    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    let yes = client.turn(&session, "yes", "approve").await;
    assert_eq!(yes.status, CompletionStatus::Complete, "{yes:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("index.html")).unwrap(),
        "<h1>Hello</h1>\n"
    );
    let trace = daemon
        .traces()
        .into_iter()
        .max_by_key(|t| t.turn_number)
        .unwrap();
    assert_eq!(trace.turn_number, 2, "the turn count carried over");
    assert_eq!(
        trace.task_contract.classification_reason,
        "confirmation-follow-up-inherited"
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_are_not_restored_and_a_new_daemon_asks_again() {
    let llama = FakeLlama::start(true, steps()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (_, seen) = client
        .turn_with(&session, OTHER, approve_all("approveForSession"))
        .await;
    assert_eq!(approvals(&seen).len(), 1);
    let grants: GrantsListResult = client
        .request("grants/list", json!({"sessionId": session}))
        .await;
    assert_eq!(
        grants.grants.len(),
        1,
        "the grant is remembered before the restart"
    );
    drop(client);

    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    let grants: GrantsListResult = client
        .request("grants/list", json!({"sessionId": session}))
        .await;
    assert!(grants.grants.is_empty(), "grants are never persisted");
    let (outcome, seen) = client
        .turn_with(&session, CHANGE, approve_all("approve"))
        .await;
    assert_eq!(approvals(&seen).len(), 1, "a new daemon asks again");
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    let text = std::fs::read_to_string(daemon.home.path().join(format!("sessions/{session}.json")))
        .unwrap();
    assert!(
        !text.contains("grant") && !text.contains("remember"),
        "{text}"
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_and_foreign_session_files_are_skipped_and_reported() {
    let llama = FakeLlama::start(true, steps()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let gone = workspace();
    let mut client = daemon.client().await;
    let kept = client.open_session(ws.path(), "agent").await;
    client.turn(&kept, CHANGE, "deny").await;
    let lost = client.open_session(gone.path(), "agent").await;
    client.turn(&lost, CHANGE, "deny").await;
    drop(client);
    let sessions = daemon.home.path().join("sessions");
    let file = |id: &str| sessions.join(format!("{id}.json"));
    let good: Value = serde_json::from_str(&std::fs::read_to_string(file(&kept)).unwrap()).unwrap();
    let corrupt = "ses-11111111111111111111111111111111";
    std::fs::write(file(corrupt), "{\"kind\": \"talos-session\", \"schemaVer").unwrap();
    let foreign = "ses-22222222222222222222222222222222";
    let mut newer = good.clone();
    newer["sessionId"] = json!(foreign);
    newer["schemaVersion"] = json!(99);
    std::fs::write(file(foreign), newer.to_string()).unwrap();
    let granted = "ses-33333333333333333333333333333333";
    let mut smuggled = good.clone();
    smuggled["sessionId"] = json!(granted);
    smuggled["grants"] = json!({"rememberWrites": true});
    std::fs::write(file(granted), smuggled.to_string()).unwrap();
    let lost_path = gone.path().to_path_buf();
    drop(gone);
    assert!(!lost_path.exists());

    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    let ids: Vec<String> = listed(&mut client)
        .await
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert_eq!(
        ids,
        vec![kept.clone()],
        "only the sound session is restored"
    );
    // What the start logged: each skipped file with its reason (restoring again is idempotent).
    let report = talosd::lifecycle::restore_at_start(&daemon.daemon);
    assert_eq!(report.sessions.len(), 1);
    let reported: Vec<String> = report
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.path.display(), s.reason))
        .collect();
    assert_eq!(reported.len(), 4, "{reported:#?}");
    for (id, words) in [
        (corrupt, "not a session file"),
        (foreign, "schema version 99"),
        (granted, "unknown field `grants`"),
        (lost.as_str(), "cannot be opened"),
    ] {
        assert!(
            reported.iter().any(|r| r.contains(id) && r.contains(words)),
            "{id}: {words} not in {reported:#?}"
        );
    }
    for (id, reason) in [
        (corrupt, "not a session file"),
        (foreign, "schema version 99"),
        (granted, "unknown field `grants`"),
    ] {
        let (code, message) =
            error_of(&mut client, "session/resume", json!({"sessionId": id})).await;
        assert_eq!(code, -32001, "{message}");
        assert!(message.contains(reason), "{id}: {message}");
        let (code, _) = error_of(
            &mut client,
            "turn/start",
            json!({"sessionId": id, "prompt": "yes"}),
        )
        .await;
        assert_eq!(code, -32001, "a skipped file is never used");
    }
    let (code, message) = error_of(&mut client, "session/resume", json!({"sessionId": lost})).await;
    assert_eq!(code, -32006, "the workspace is gone: {message}");
    assert!(message.contains("cannot be opened"), "{message}");
    let (code, _) = error_of(
        &mut client,
        "session/resume",
        json!({"sessionId": "../../config"}),
    )
    .await;
    assert_eq!(code, -32001);

    // Closing deletes the file: the next daemon does not bring the session back.
    assert!(file(&kept).exists());
    client
        .call("session/close", json!({"sessionId": kept}))
        .await;
    assert!(!file(&kept).exists());
    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    assert!(listed(&mut client).await.is_empty());
    daemon.stop().await;
}

/// Proves a new daemon reopens only the 64 most recently saved sessions (each holds a handle on
/// its workspace); an older one stays on disk and `session/resume` reopens it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_newest_sessions_are_reopened_at_start_and_older_ones_resume() {
    let llama = FakeLlama::start(true, Arc::new(|_: &Value| Reply::Text("Hello.".into()))).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let mut client = initialized(&daemon).await;
    let mut ids = Vec::new();
    for _ in 0..66 {
        let id = client.open_session(ws.path(), "agent").await;
        let outcome = client.turn(&id, "hello there", "deny").await;
        assert_eq!(outcome.status, CompletionStatus::Complete);
        ids.push(id);
        // Distinct save times, so "newest" is well defined.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    drop(client);
    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    let open: Vec<String> = listed(&mut client)
        .await
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert_eq!(open.len(), 64, "{open:?}");
    assert!(!open.contains(&ids[0]) && !open.contains(&ids[1]));
    assert!(open.contains(&ids[65]) && open.contains(&ids[2]));
    let resumed: SessionResumeResult = client
        .request("session/resume", json!({"sessionId": ids[0]}))
        .await;
    assert!(resumed.loaded);
    assert_eq!(resumed.session.session_id, ids[0]);
    daemon.stop().await;
}

/// Sets a session file's modification time `days` back.
fn age_session_file(daemon: &TestDaemon, id: &str, days: u64) {
    let path = daemon
        .home
        .path()
        .join("sessions")
        .join(format!("{id}.json"));
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(old).unwrap();
}

/// Proves retention covers persisted sessions: a session not saved within
/// `retention.max_age_days` is kept while it is open in the daemon, removed by the sweep at the
/// next start (before sessions are reopened, so it is neither reopened nor resumable) and
/// counted in `daemon/gc`'s `sessions`; a recent one stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_age_limit_are_pruned_at_start_and_recent_ones_stay() {
    let llama = FakeLlama::start(true, Arc::new(|_: &Value| Reply::Text("Hello.".into()))).await;
    let config = format!(
        "{}retention:\n  max_age_days: 1\n",
        TestDaemon::config_for(&llama.url, true)
    );
    let daemon = TestDaemon::start(&config).await;
    let (ws_old, ws_new) = (workspace(), workspace());
    let mut client = initialized(&daemon).await;
    let old = client.open_session(ws_old.path(), "agent").await;
    let new = client.open_session(ws_new.path(), "agent").await;
    for id in [&old, &new] {
        let outcome = client.turn(id, "hello there", "deny").await;
        assert_eq!(outcome.status, CompletionStatus::Complete);
    }
    age_session_file(&daemon, &old, 3);
    let gc: Value = client.request("daemon/gc", json!({})).await;
    assert_eq!(gc["sessions"]["files"], 0, "an open session is kept: {gc}");
    assert!(
        daemon
            .home
            .path()
            .join(format!("sessions/{old}.json"))
            .exists()
    );
    drop(client);

    let daemon = daemon.restart().await;
    let mut client = initialized(&daemon).await;
    let open: Vec<String> = listed(&mut client)
        .await
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert!(open.contains(&new) && !open.contains(&old), "{open:?}");
    assert!(
        !daemon
            .home
            .path()
            .join(format!("sessions/{old}.json"))
            .exists()
    );
    assert!(
        daemon
            .home
            .path()
            .join(format!("sessions/{new}.json"))
            .exists()
    );
    let (code, message) = error_of(&mut client, "session/resume", json!({"sessionId": old})).await;
    assert_ne!(code, 0, "{message}");

    // A session not open now and past the limit is removed by `daemon/gc` too, and counted.
    let stray = "ses-0123456789abcdef0123456789abcdef";
    let sessions = daemon.home.path().join("sessions");
    std::fs::copy(
        sessions.join(format!("{new}.json")),
        sessions.join(format!("{stray}.json")),
    )
    .unwrap();
    age_session_file(&daemon, stray, 3);
    let gc: Value = client.request("daemon/gc", json!({})).await;
    assert_eq!(gc["sessions"]["files"], 1, "{gc}");
    assert!(!sessions.join(format!("{stray}.json")).exists());
    assert!(sessions.join(format!("{new}.json")).exists());
    daemon.stop().await;
}

//! `session/new` with `continueFrom`: a change of mode keeps the conversation. A change denied
//! in one session is carried out by "yes" in the session that continues it, which counts its
//! own turns from 1 and has none of the first session's grants; an unknown session and one on
//! another workspace are refused with their codes.

use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::{CompletionStatus, GrantsListResult, SessionNewResult};
use talos_tests::fake_llama::{FakeLlama, Reply, Script, after_tool_result, last_user, write_call};
use talos_tests::harness::{Answer, TestDaemon, approve_all};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_carries_the_conversation_but_not_the_grants() {
    let llama = FakeLlama::start(true, steps()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let first = client.open_session(ws.path(), "agent").await;
    let denied = client
        .turn(&first, "Create index.html with the heading Hello", "deny")
        .await;
    assert_eq!(denied.status, CompletionStatus::Blocked, "{denied:?}");

    let continued: SessionNewResult = client
        .request(
            "session/new",
            json!({"workspace": ws.path(), "mode": "agent", "continueFrom": first}),
        )
        .await;
    let second = continued.session_id;
    assert_ne!(second, first);
    let yes = client.turn(&second, "yes", "approve").await;
    assert_eq!(yes.status, CompletionStatus::Complete, "{yes:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("index.html")).unwrap(),
        "<h1>Hello</h1>\n"
    );
    let trace = daemon
        .traces()
        .into_iter()
        .find(|t| t.session_id == second)
        .unwrap();
    assert_eq!(trace.turn_number, 1, "the new session counts its own turns");
    assert_eq!(
        trace.task_contract.classification_reason,
        "confirmation-follow-up-inherited"
    );

    // What the first session approved "for the session" is not copied.
    let (_, _) = client
        .turn_with(
            &first,
            "Create about.html with the heading About",
            approve_all("approveForSession"),
        )
        .await;
    let granted: GrantsListResult = client
        .request("grants/list", json!({"sessionId": first}))
        .await;
    assert_eq!(granted.grants.len(), 1);
    let third: SessionNewResult = client
        .request(
            "session/new",
            json!({"workspace": ws.path(), "mode": "plan", "continueFrom": first}),
        )
        .await;
    let grants: GrantsListResult = client
        .request("grants/list", json!({"sessionId": third.session_id}))
        .await;
    assert!(grants.grants.is_empty(), "grants are never copied");

    // A fresh session on the same workspace remembers nothing: "yes" inherits no change.
    let fresh = client.open_session(ws.path(), "agent").await;
    let lone = client.turn(&fresh, "yes", "approve").await;
    assert_ne!(
        daemon
            .traces()
            .into_iter()
            .find(|t| t.session_id == fresh)
            .unwrap()
            .task_contract
            .classification_reason,
        "confirmation-follow-up-inherited",
        "{lone:?}"
    );
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuing_an_unknown_session_or_one_on_another_workspace_is_refused() {
    let llama = FakeLlama::start(true, steps()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let (ws, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut client = daemon.client().await;
    let first = client.open_session(ws.path(), "agent").await;
    let rows = [
        (
            json!({"workspace": ws.path(), "continueFrom": "ses-0123456789abcdef0123456789abcdef"}),
            -32001,
            "no session",
        ),
        (
            json!({"workspace": other.path(), "continueFrom": first}),
            -32006,
            "another workspace",
        ),
        (
            json!({"workspace": ws.path(), "continueFrom": 7}),
            -32602,
            "",
        ),
    ];
    for (params, code, needle) in rows {
        let (response, _) = client
            .call_with("session/new", params.clone(), |_| Answer::Ignore)
            .await
            .unwrap();
        let error = response
            .error
            .unwrap_or_else(|| panic!("{params}: accepted"));
        assert_eq!(error.code, code, "{params}: {}", error.message);
        assert!(
            error.message.contains(needle),
            "{params}: {}",
            error.message
        );
    }
    daemon.stop().await;
}

//! The `plan` and `call` turn events (issue 14): the documented order of an edit turn, a call
//! refused before it ran having only its end with the reason, a denied approval ending its call
//! `denied`, and the approval naming its call with the whole text of the change.

use serde_json::json;
use talos_protocol::event::TurnEvent;
use talos_protocol::{CallStatus, Message};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, approve_all, events, timeout_workspace};

const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit_call() -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"})
            .to_string(),
    )])
}

async fn run(steps: Vec<Reply>, decision: &'static str) -> (Vec<TurnEvent>, Vec<Message>) {
    let ws = timeout_workspace();
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (_, seen) = client
        .turn_with(&session, EDIT, approve_all(decision))
        .await;
    daemon.stop().await;
    let events = events(&seen).into_iter().map(|e| e.event).collect();
    (events, seen)
}

fn kind(event: &TurnEvent) -> String {
    let value = serde_json::to_value(event).unwrap();
    match event {
        TurnEvent::Call { status, .. } => format!(
            "call:{}",
            serde_json::to_value(status).unwrap().as_str().unwrap()
        ),
        _ => value["kind"].as_str().unwrap().to_string(),
    }
}

/// Proves the edit turn sends, in order, what docs/protocol.md shows: the instructions used
/// (none here), the plan, each
/// call's `running` then `completed`, the approval between the edit's two, then the answer.
#[tokio::test]
async fn an_edit_turn_sends_the_documented_order() {
    let (events, seen) = run(vec![read_call("settings.py"), edit_call()], "approve").await;
    let kinds: Vec<String> = events.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "instructions",
            "plan",
            "progress",
            "usage",
            "tool_progress",
            "call:running",
            "call:completed",
            "progress",
            "usage",
            "tool_progress",
            "call:running",
            "approval_requested",
            "approval_resolved",
            "ok",
            "call:completed",
            "stream_start",
            "stream_chunk",
            "stream_end",
            "outcome"
        ],
        "{events:#?}"
    );
    // The first progress of a call says how long a prompt the server is reading.
    let TurnEvent::Progress { prompt_tokens, .. } = &events[2] else {
        unreachable!()
    };
    assert!(prompt_tokens.is_some_and(|n| n > 0), "{:?}", events[2]);
    let TurnEvent::Plan { steps } = &events[1] else {
        unreachable!()
    };
    assert_eq!(steps[0].text, "Change settings.py (30 → 60)");
    assert_eq!(steps[0].target.as_deref(), Some("settings.py"));
    let ask = seen
        .iter()
        .find(|m| m.method.as_deref() == Some("approval/request"))
        .unwrap();
    let params = ask.params.clone().unwrap();
    assert_eq!(params["callId"], "call-2");
    assert_eq!(
        params["change"],
        json!({"path": "settings.py", "oldText": "TIMEOUT = 30\nRETRIES = 3\n", "newText": "TIMEOUT = 60\nRETRIES = 3\n"})
    );
}

/// Proves a call refused by a check has only its end, `rejected` with the reason, and a denied
/// approval ends its call `denied`.
#[tokio::test]
async fn refused_and_denied_calls_end_with_their_reason() {
    let malformed = Reply::ToolCalls(vec![("talos.read_file".into(), "{\"path\": ".into())]);
    let (events, _) = run(
        vec![malformed, read_call("settings.py"), edit_call()],
        "deny",
    )
    .await;
    let calls: Vec<(&str, CallStatus, Option<&str>)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Call {
                call_id,
                status,
                reason,
                ..
            } => Some((call_id.as_str(), *status, reason.as_deref())),
            _ => None,
        })
        .collect();
    let first: Vec<_> = calls.iter().filter(|c| c.0 == "call-1").collect();
    assert_eq!(
        first.len(),
        1,
        "a rejected call has only its end: {calls:?}"
    );
    assert_eq!(first[0].1, CallStatus::Rejected);
    assert!(first[0].2.is_some_and(|r| !r.is_empty()), "{calls:?}");
    let last = calls.last().unwrap();
    assert_eq!(last.1, CallStatus::Denied, "{calls:?}");
}

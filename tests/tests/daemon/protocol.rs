//! The protocol through the real socket: malformed lines, ownership of approvals, busy
//! sessions, configuration errors, shutdown with a turn in flight, and streaming without loss.

use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::{
    ApprovalRequestParams, ApprovalRespondResult, Classification, CompletionStatus,
    DaemonShutdownResult, DaemonStatusResult, SessionListResult, TurnEvent, TurnOutcome,
};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{
    Answer, Client, TestDaemon, approve_all, decode, events, timeout_workspace,
};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit_model() -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    scripted(vec![
        read_call("settings.py"),
        Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                .into(),
        )]),
        Reply::Text("Done.".into()),
    ])
}

async fn error_code(client: &mut Client, line: &str) -> (i64, Value) {
    client.send_line(line).await;
    let reply = client.read().await.unwrap();
    (reply.error.unwrap().code, reply.id.unwrap_or(Value::Null))
}

/// Proves the handshake survives version skew through the socket: an ACP-shaped and an
/// LSP-shaped `initialize` (with `clientInfo`, a date-string version and unknown fields) are
/// answered with the daemon's capabilities, while `session/new` with a misspelt `mode` is
/// refused with a message naming the fields it accepts, and no session is opened.
#[tokio::test]
async fn initialize_survives_version_skew_and_other_methods_stay_strict() {
    let daemon = TestDaemon::start("").await;
    let mut client = daemon.client().await;
    for params in [
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}},
               "clientInfo": {"name": "zed", "version": "0.190.0"}}),
        json!({"processId": 4242, "clientInfo": {"name": "neovim"}, "rootUri": null,
               "protocolVersion": "2025-06-18", "capabilities": {}}),
    ] {
        let result: talos_protocol::InitializeResult =
            client.request("initialize", params.clone()).await;
        assert_eq!(result.server_name, "talosd", "{params}");
        assert!(
            result
                .capabilities
                .methods
                .iter()
                .any(|m| m == "turn/cancel")
                && result
                    .capabilities
                    .methods
                    .iter()
                    .any(|m| m == "session/new"),
            "{:?}",
            result.capabilities
        );
        assert!(
            result
                .capabilities
                .features
                .iter()
                .any(|f| f == "turnCancel")
        );
    }
    let ws = tempfile::tempdir().unwrap();
    client
        .send_line(
            &json!({"jsonrpc": "2.0", "id": 5, "method": "session/new",
                    "params": {"workspace": ws.path(), "mdoe": "ask"}})
            .to_string(),
        )
        .await;
    let reply = client.read().await.unwrap();
    let error = reply.error.unwrap();
    assert_eq!(error.code, -32602);
    assert!(
        error.message.contains("unknown field `mdoe`") && error.message.contains("`mode`"),
        "{}",
        error.message
    );
    let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
    assert_eq!(status.sessions, 0, "a misspelt field opens nothing");
    daemon.stop().await;
}

#[tokio::test]
async fn bad_lines_get_json_rpc_errors_and_the_connection_stays_usable() {
    let daemon = TestDaemon::start("").await;
    let mut client = daemon.client().await;
    assert_eq!(
        error_code(&mut client, "this is not json").await,
        (-32700, Value::Null)
    );
    assert_eq!(
        error_code(&mut client, r#"{"jsonrpc":"2.0","id":7}"#).await,
        (-32600, json!(7))
    );
    assert_eq!(
        error_code(
            &mut client,
            r#"{"jsonrpc":"1.0","id":8,"method":"daemon/status"}"#
        )
        .await,
        (-32600, json!(8))
    );
    assert_eq!(
        error_code(
            &mut client,
            r#"{"jsonrpc":"2.0","id":9,"method":"no/such"}"#
        )
        .await,
        (-32601, json!(9))
    );
    assert_eq!(
        error_code(
            &mut client,
            r#"{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"workspace":5}}"#
        )
        .await,
        (-32602, json!(10))
    );
    assert_eq!(error_code(&mut client, r#"{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"workspace":"relative/dir"}}"#).await, (-32006, json!(11)));
    assert_eq!(error_code(&mut client, r#"{"jsonrpc":"2.0","id":12,"method":"turn/start","params":{"sessionId":"ses-x","prompt":"hi"}}"#).await, (-32001, json!(12)));
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"initialize\",\"params\":{{\"clientName\":\"{}\"}}}}",
        "x".repeat(17 << 20)
    );
    assert_eq!(
        error_code(&mut client, &huge).await.0,
        -32600,
        "a line over 16 MiB is refused"
    );
    let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
    assert_eq!(status.sessions, 0);
    assert_eq!(status.pid, std::process::id());
    daemon.stop().await;
}

#[tokio::test]
async fn only_the_connection_that_started_a_turn_can_answer_its_approval() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut owner = daemon.client().await;
    let mut intruder = daemon.client().await;
    let session = owner.open_session(ws.path(), "agent").await;
    owner.send_line(&json!({"jsonrpc": "2.0", "id": 1, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}}).to_string()).await;
    let request_id = loop {
        let m = owner.read().await.unwrap();
        if m.method.as_deref() == Some("approval/request") {
            break decode::<ApprovalRequestParams>("approval/request", m.params.unwrap())
                .request_id;
        }
    };
    let (response, _) = intruder
        .call_with(
            "approval/respond",
            json!({"requestId": request_id, "decision": "approve"}),
            |_| Answer::Ignore,
        )
        .await
        .unwrap();
    assert_eq!(response.error.unwrap().code, -32004);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
    // The owner may answer through the fallback method on its own connection.
    owner.send_line(&json!({"jsonrpc": "2.0", "id": 2, "method": "approval/respond", "params": {"requestId": request_id, "decision": "approve"}}).to_string()).await;
    let mut outcome = None;
    let mut accepted = None;
    while outcome.is_none() || accepted.is_none() {
        let m = owner.read().await.unwrap();
        match m.id {
            Some(ref id) if *id == json!(1) && m.method.is_none() => outcome = m.result,
            Some(ref id) if *id == json!(2) && m.method.is_none() => accepted = m.result,
            _ => {}
        }
    }
    let accepted: ApprovalRespondResult = decode("approval/respond result", accepted.unwrap());
    assert!(accepted.accepted);
    let outcome: TurnOutcome = decode("turn/start result", outcome.unwrap());
    assert_eq!(outcome.classification, Classification::CompletedVerified);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn a_second_turn_on_a_busy_session_is_refused() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    client.send_line(&json!({"jsonrpc": "2.0", "id": 1, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}}).to_string()).await;
    let approval = loop {
        let m = client.read().await.unwrap();
        if m.method.as_deref() == Some("approval/request") {
            break m;
        }
    };
    let mut other = daemon.client().await;
    let (busy, _) = other
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": "hello"}),
            |_| Answer::Ignore,
        )
        .await
        .unwrap();
    assert_eq!(busy.error.unwrap().code, -32003);
    let listed: SessionListResult = other.request("session/list", json!({})).await;
    assert!(listed.sessions[0].busy);
    client
        .send_line(
            &json!({"jsonrpc": "2.0", "id": approval.id, "result": {"decision": "deny"}})
                .to_string(),
        )
        .await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_bad_config_refuses_turns_with_a_message_naming_the_problem() {
    for (config, expected) in [
        (
            "model:\n  url: http://10.1.2.3:8080\n",
            "not a loopback address",
        ),
        ("model:\n  url: http://127.0.0.1:1\nmodle: 3\n", "line 3"),
    ] {
        let daemon = TestDaemon::start(config).await;
        let ws = timeout_workspace();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        let (response, _) = client
            .call_with(
                "turn/start",
                json!({"sessionId": session, "prompt": "hello"}),
                |_| Answer::Ignore,
            )
            .await
            .unwrap();
        let error = response.error.unwrap();
        assert_eq!(error.code, -32005);
        assert!(error.message.contains(expected), "{}", error.message);
        assert!(error.message.contains("talos stop"), "{}", error.message);
        let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
        assert!(status.config_error.unwrap().contains(expected));
        // Fixed on disk, the file is named as valid now, with the restart that takes it up.
        std::fs::write(
            daemon.home.path().join("config.yaml"),
            "model:\n  url: http://127.0.0.1:1\n",
        )
        .unwrap();
        let (response, _) = client
            .call_with(
                "turn/start",
                json!({"sessionId": session, "prompt": "hello"}),
                |_| Answer::Ignore,
            )
            .await
            .unwrap();
        let message = response.error.unwrap().message;
        assert!(
            message.contains("is valid now") && message.contains("Run `talos stop`"),
            "{message}"
        );
        daemon.stop().await;
    }
}

#[tokio::test]
async fn shutdown_cancels_an_in_flight_turn_and_still_writes_its_trace() {
    let llama = FakeLlama::start(true, Arc::new(|_: &Value| Reply::Hang)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    client.send_line(&json!({"jsonrpc": "2.0", "id": 1, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}}).to_string()).await;
    while llama.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let mut admin = daemon.client().await;
    let shutdown: DaemonShutdownResult = admin.request("daemon/shutdown", json!({})).await;
    assert!(shutdown.stopping);
    let outcome = loop {
        let m = client
            .read()
            .await
            .expect("the turn's response arrives before the connection closes");
        if m.id == Some(json!(1)) && m.method.is_none() {
            break decode::<TurnOutcome>("turn/start result", m.result.unwrap());
        }
    };
    assert_eq!(
        (outcome.status, outcome.classification),
        (CompletionStatus::Cancelled, Classification::Cancelled)
    );
    let trace = &daemon.traces()[0];
    assert_eq!(trace.outcome.status, CompletionStatus::Cancelled);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn thousands_of_streamed_chunks_arrive_in_order_and_none_is_dropped() {
    let text: String = (0..4000).map(|i| format!("{i:05} ")).collect();
    let reply = text.clone();
    let llama = FakeLlama::start(true, Arc::new(move |_: &Value| Reply::Text(reply.clone()))).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(
            &session,
            // A turn without obligations streams as the model writes (issue 12 holds the
            // answer only where the runtime may correct it).
            "hello there",
            approve_all("deny"),
        )
        .await;
    let events = events(&seen);
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    let streamed: String = events
        .iter()
        .filter_map(|e| match &e.event {
            TurnEvent::StreamChunk { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, text);
    assert!(seqs.len() > 1500, "{}", seqs.len());
    assert_eq!(outcome.classification, Classification::ReadOnlyAnswered);
    daemon.stop().await;
}

#[tokio::test]
async fn a_malformed_text_tool_call_fails_the_turn_without_echoing_the_json() {
    let llama = FakeLlama::start(false, Arc::new(|_: &Value| Reply::Text("```json\n{\"name\": \"talos.edit_file\", \"parameters\": {\"path\": \"settings.py\", \"old_string\": \"TIMEOUT = 30\",\n```".into()))).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(&session, EDIT_REQUEST, approve_all("approve"))
        .await;
    assert_eq!(outcome.classification, Classification::Failed);
    let answer = outcome.final_answer;
    assert!(
        answer.starts_with("[Truth check: the model produced an invalid tool-call payload"),
        "{answer}"
    );
    assert!(!answer.contains("old_string"));
    assert_eq!(daemon.traces()[0].model.tool_calling, "text");
    daemon.stop().await;
}

#[tokio::test]
async fn truncated_native_arguments_are_an_invalid_payload_not_a_crash() {
    let llama = FakeLlama::start(
        true,
        Arc::new(|_: &Value| {
            Reply::TruncatedToolCall(
                "talos.edit_file".into(),
                r#"{"path": "settings.py", "old_str"#.into(),
            )
        }),
    )
    .await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(&session, EDIT_REQUEST, approve_all("approve"))
        .await;
    assert_eq!(
        outcome.classification,
        Classification::Failed,
        "{outcome:?}"
    );
    let trace = &daemon.traces()[0];
    assert!(
        trace.tool_calls[0]
            .rejection
            .as_deref()
            .unwrap()
            .contains("cut off at the token limit")
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn a_model_server_error_is_a_traced_failure() {
    let llama = FakeLlama::start(
        true,
        Arc::new(|_: &Value| Reply::Error(500, "Failed to parse tool call".into())),
    )
    .await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(&session, EDIT_REQUEST, approve_all("approve"))
        .await;
    assert_eq!(outcome.classification, Classification::Failed);
    assert!(outcome.final_answer.contains("HTTP 500"), "{outcome:?}");
    assert!(
        daemon.traces()[0].model_calls[0]
            .error
            .as_deref()
            .unwrap()
            .contains("HTTP 500")
    );
    daemon.stop().await;
}

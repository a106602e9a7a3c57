//! End-to-end turns through the real socket against the fake llama server: each test asserts
//! the files on disk, the approvals asked and the trace.

use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::event::ApprovalSource;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{
    ApprovalRequestParams, Classification, CompletionStatus, Decision, TurnEvent, TurnOutcome,
};
use talos_tests::fake_llama::{
    FakeLlama, Reply, after_tool_result, offered_tools, read_call, scripted,
};
use talos_tests::harness::{
    Answer, TestDaemon, approvals, approve_all, decode, events, timeout_workspace,
};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const EDIT_ARGS: &str =
    r#"{"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"}"#;

/// A model that reads settings.py, proposes the TIMEOUT edit natively, then answers in text.
fn native_edit_model() -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    scripted(vec![
        read_call("settings.py"),
        Reply::ToolCalls(vec![("talos.edit_file".into(), EDIT_ARGS.into())]),
        Reply::Text("I have updated settings.py: TIMEOUT is now 60.".into()),
    ])
}

/// The same edit written as a fenced JSON call in the text (no read first: in ask mode the
/// surface refuses it before any other rule).
fn text_edit_model() -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    Arc::new(|request: &Value| {
        if after_tool_result(request) {
            Reply::Text("I have updated settings.py.".into())
        } else {
            Reply::Text(format!(
                "Editing now.\n```json\n{{\"name\": \"talos.edit_file\", \"parameters\": {EDIT_ARGS}}}\n```"
            ))
        }
    })
}

async fn setup(
    native: bool,
    model: Arc<dyn Fn(&Value) -> Reply + Send + Sync>,
) -> (FakeLlama, TestDaemon) {
    let llama = FakeLlama::start(native, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    (llama, daemon)
}

#[tokio::test]
async fn approved_timeout_edit_changes_the_file_stores_a_checkpoint_and_writes_a_trace() {
    let (llama, daemon) = setup(true, native_edit_model()).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, EDIT_REQUEST, approve_all("approve"))
        .await;

    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    assert_eq!(
        (outcome.status, outcome.classification),
        (
            CompletionStatus::Complete,
            Classification::CompletedVerified
        ),
        "{outcome:?}"
    );
    let asked = approvals(&seen);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "talos.edit_file");
    assert_eq!(
        asked[0].diff.as_ref().unwrap().text,
        "@@ -1,2 +1,2 @@\n-TIMEOUT = 30\n+TIMEOUT = 60\n RETRIES = 3\n"
    );
    assert!(
        asked[0]
            .details
            .iter()
            .any(|d| d == "target: settings.py (25 bytes, 2 lines)"),
        "{:?}",
        asked[0]
    );

    let objects = daemon.checkpoint_objects();
    assert_eq!(objects.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&objects[0]).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );

    let traces = daemon.traces();
    assert_eq!(traces.len(), 1);
    let trace = &traces[0];
    assert_eq!(trace.schema_version, 5);
    assert_eq!(trace.trace_id, outcome.trace_id);
    assert_eq!(trace.task_contract.task_type, "FILE_EDIT");
    assert_eq!(trace.task_contract.expected_targets, vec!["settings.py"]);
    assert_eq!(trace.model.tool_calling, "native");
    assert_eq!(trace.approvals[0].decision, Decision::Approve);
    assert_eq!(trace.checkpoints[0].status, "created");
    assert_eq!(trace.verification[0].status, "PASS");
    assert_eq!(
        trace.outcome.classification,
        Classification::CompletedVerified
    );
    let text = daemon.trace_texts().concat();
    assert!(
        !text.contains("TIMEOUT = 30") && !text.contains("TIMEOUT = 60"),
        "file contents never appear in a trace"
    );
    assert!(
        !text.contains(EDIT_REQUEST),
        "the prompt appears only as a digest"
    );
    assert!(trace.request.hash.starts_with("sha256:"));

    // Events are ordered with seq 1, 2, 3, ... and end with the outcome.
    let events = events(&seen);
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    assert!(matches!(
        events.last().unwrap().event,
        TurnEvent::Outcome { .. }
    ));
    // Read, edit: the runtime writes the summary once the edit is verified (no third call).
    assert_eq!(llama.requests().len(), 2);
    daemon.stop().await;
}

#[tokio::test]
async fn denied_edit_leaves_the_file_byte_identical() {
    let (_llama, daemon) = setup(true, native_edit_model()).await;
    let ws = timeout_workspace();
    let before = std::fs::read(ws.path().join("settings.py")).unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, EDIT_REQUEST, approve_all("deny"))
        .await;

    assert_eq!(
        std::fs::read(ws.path().join("settings.py")).unwrap(),
        before
    );
    assert_eq!(approvals(&seen).len(), 1);
    assert_eq!(
        (outcome.status, outcome.classification),
        (CompletionStatus::Blocked, Classification::BlockedByApproval)
    );
    assert!(
        outcome
            .final_answer
            .contains("settings.py: approval denied"),
        "{outcome:?}"
    );
    assert!(
        daemon.checkpoint_objects().is_empty(),
        "no checkpoint without approval"
    );
    let trace = &daemon.traces()[0];
    assert_eq!(trace.approvals[0].decision, Decision::Deny);
    assert_eq!(trace.outcome.approval_status, "DENIED");
    daemon.stop().await;
}

#[tokio::test]
async fn a_client_that_disconnects_mid_approval_denies_and_nothing_is_written() {
    let (_llama, daemon) = setup(true, native_edit_model()).await;
    let ws = timeout_workspace();
    let before = std::fs::read(ws.path().join("settings.py")).unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let gone = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": EDIT_REQUEST}),
            |m| {
                if m.method.as_deref() == Some("approval/request") {
                    Answer::Disconnect
                } else {
                    Answer::Ignore
                }
            },
        )
        .await;
    assert!(gone.is_none());
    drop(client);

    let trace = wait_for_trace(&daemon).await;
    assert_eq!(
        std::fs::read(ws.path().join("settings.py")).unwrap(),
        before
    );
    assert_eq!(trace.approvals[0].decision, Decision::Deny);
    assert_eq!(trace.approvals[0].source, ApprovalSource::Disconnect);
    assert_eq!(
        trace.outcome.classification,
        Classification::BlockedByApproval
    );
    assert!(daemon.checkpoint_objects().is_empty());
    daemon.stop().await;
}

async fn wait_for_trace(daemon: &TestDaemon) -> TraceRecord {
    for _ in 0..200 {
        if let Some(trace) = daemon.traces().into_iter().next() {
            return trace;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("no trace was written");
}

#[tokio::test]
async fn ask_mode_rejects_an_edit_before_approval_and_before_io_native_and_text() {
    for (native, model) in [(true, native_edit_model()), (false, text_edit_model())] {
        let llama = FakeLlama::start(native, model).await;
        let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
        let ws = timeout_workspace();
        let before = std::fs::read(ws.path().join("settings.py")).unwrap();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "ask").await;
        let (outcome, seen) = client
            .turn_with(&session, EDIT_REQUEST, approve_all("approve"))
            .await;

        assert!(
            approvals(&seen).is_empty(),
            "no approval is asked in ask mode (native={native})"
        );
        assert_eq!(
            std::fs::read(ws.path().join("settings.py")).unwrap(),
            before
        );
        assert!(daemon.checkpoint_objects().is_empty());
        assert_eq!(
            outcome.classification,
            Classification::BlockedByPolicy,
            "native={native}: {outcome:?}"
        );
        let first = &llama.requests()[0];
        if native {
            let offered = offered_tools(first);
            assert_eq!(
                offered,
                vec![
                    "talos.read_file",
                    "talos.list_dir",
                    "talos.grep",
                    "talos.search"
                ],
                "ask mode offers no write tools"
            );
        } else {
            assert!(
                first.get("tools").is_none(),
                "text mode sends no native tools"
            );
            let system = first["messages"][0]["content"].as_str().unwrap();
            assert!(
                system.contains("- talos.read_file:")
                    && !system.contains("- talos.edit_file:")
                    && !system.contains("- talos.write_file:")
            );
        }
        let trace = &daemon.traces()[0];
        assert!(!trace.task_contract.mutation_allowed);
        let edit = trace
            .tool_calls
            .iter()
            .find(|c| c.requested_name == "talos.edit_file")
            .unwrap();
        assert_eq!(edit.stage, "rejected");
        assert_eq!(edit.source, if native { "native" } else { "text" });
        assert!(edit.rejection.as_deref().unwrap().contains("Current-turn tool surface did not allow talos.edit_file. Allowed tools: talos.grep, talos.list_dir, talos.read_file, talos.search."));
        assert!(trace.approvals.is_empty());
        daemon.stop().await;
    }
}

#[tokio::test]
async fn a_write_outside_the_workspace_is_rejected_before_approval() {
    let model: Arc<dyn Fn(&Value) -> Reply + Send + Sync> = Arc::new(|request: &Value| {
        if after_tool_result(request) {
            Reply::Text("I wrote the file.".into())
        } else {
            Reply::ToolCalls(vec![(
                "talos.write_file".into(),
                r#"{"path": "../outside.txt", "content": "pwned"}"#.into(),
            )])
        }
    });
    let (_llama, daemon) = setup(true, model).await;
    let parent = tempfile::tempdir().unwrap();
    let ws = parent.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(&ws, "agent").await;
    let (outcome, seen) = client
        .turn_with(
            &session,
            "Write ../outside.txt with the word pwned",
            approve_all("approve"),
        )
        .await;

    assert!(approvals(&seen).is_empty());
    assert!(!parent.path().join("outside.txt").exists());
    assert_eq!(
        outcome.classification,
        Classification::BlockedByPolicy,
        "{outcome:?}"
    );
    assert!(
        outcome
            .final_answer
            .starts_with("[Truth check: no file was changed"),
        "{outcome:?}"
    );
    let trace = &daemon.traces()[0];
    assert_eq!(trace.permission_decisions[0].action, "deny");
    assert_eq!(
        trace.permission_decisions[0].reason_code,
        "WORKSPACE_ESCAPE"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn two_sessions_on_two_workspaces_run_at_the_same_time_without_crossing() {
    let (llama, daemon) = setup(true, native_edit_model()).await;
    let (ws_a, ws_b) = (timeout_workspace(), timeout_workspace());
    let mut a = daemon.client().await;
    let mut b = daemon.client().await;
    let session_a = a.open_session(ws_a.path(), "agent").await;
    let session_b = b.open_session(ws_b.path(), "agent").await;
    a.send_line(&json!({"jsonrpc": "2.0", "id": 100, "method": "turn/start", "params": {"sessionId": session_a, "prompt": EDIT_REQUEST}}).to_string()).await;
    b.send_line(&json!({"jsonrpc": "2.0", "id": 200, "method": "turn/start", "params": {"sessionId": session_b, "prompt": EDIT_REQUEST}}).to_string()).await;
    // Both turns reach their approval before either is answered: they run at the same time.
    let (asked_a_id, asked_a) = read_until_approval(&mut a).await;
    let (asked_b_id, asked_b) = read_until_approval(&mut b).await;
    assert_eq!(asked_a.session_id, session_a);
    assert_eq!(asked_b.session_id, session_b);
    assert_eq!(daemon.daemon.active_turns(), 2);
    a.send_line(
        &json!({"jsonrpc": "2.0", "id": asked_a_id, "result": {"decision": "approve"}}).to_string(),
    )
    .await;
    b.send_line(
        &json!({"jsonrpc": "2.0", "id": asked_b_id, "result": {"decision": "deny"}}).to_string(),
    )
    .await;
    let outcome_a = read_until_response(&mut a, 100).await;
    let outcome_b = read_until_response(&mut b, 200).await;
    assert_eq!(outcome_a.classification, Classification::CompletedVerified);
    assert_eq!(outcome_b.classification, Classification::BlockedByApproval);
    assert_eq!(
        std::fs::read_to_string(ws_a.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws_b.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
    let traces = daemon.traces();
    assert_eq!(traces.len(), 2);
    assert_ne!(traces[0].session_id, traces[1].session_id);
    // A: read, edit (summary from the runtime); B: read, edit, answer after the denial.
    assert_eq!(llama.requests().len(), 4);
    daemon.stop().await;
}

/// The next `approval/request` on `client`: its JSON-RPC id and its params.
async fn read_until_approval(
    client: &mut talos_tests::harness::Client,
) -> (Value, ApprovalRequestParams) {
    loop {
        let message = client.read().await.expect("connection open");
        if message.method.as_deref() == Some("approval/request") {
            let params = decode("approval/request", message.params.expect("params"));
            return (message.id.expect("an id"), params);
        }
    }
}

async fn read_until_response(client: &mut talos_tests::harness::Client, id: u64) -> TurnOutcome {
    loop {
        let message = client.read().await.expect("connection open");
        if message.method.is_none() && message.id == Some(json!(id)) {
            return decode("turn/start result", message.result.expect("a result"));
        }
    }
}

#[tokio::test]
async fn a_follow_up_inherits_the_previous_turns_targets_and_a_status_question_never_mutates() {
    let (_llama, daemon) = setup(true, native_edit_model()).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client.turn(&session, EDIT_REQUEST, "deny").await;
    assert_eq!(first.classification, Classification::BlockedByApproval);
    let (status, _) = client
        .turn_with(
            &session,
            "did you make the changes?",
            approve_all("approve"),
        )
        .await;
    assert_eq!(
        daemon
            .traces()
            .iter()
            .find(|t| t.turn_number == 2)
            .unwrap()
            .task_contract
            .task_type,
        "VERIFY_ONLY",
        "{status:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n",
        "a status question changes nothing"
    );
    let (retry, _) = client
        .turn_with(
            &session,
            "nothing changed, try one more time",
            approve_all("approve"),
        )
        .await;
    assert_eq!(
        retry.classification,
        Classification::CompletedVerified,
        "{retry:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    let traces = daemon.traces();
    let by_turn = |n: u64| traces.iter().find(|t| t.turn_number == n).unwrap().clone();
    assert!(!by_turn(2).task_contract.mutation_allowed);
    assert_eq!(
        by_turn(3).task_contract.classification_reason,
        "repair-follow-up-inherited"
    );
    assert_eq!(
        by_turn(3).task_contract.expected_targets,
        vec!["settings.py"]
    );
    assert!(
        by_turn(3)
            .turn_plan
            .active_task_context
            .unwrap()
            .contains("repair-follow-up-inherited")
    );
    daemon.stop().await;
}

#[tokio::test]
async fn an_exact_literal_request_writes_exactly_the_literal_whatever_the_model_proposed() {
    let model = scripted(vec![
        Reply::ToolCalls(vec![(
            "talos.write_file".into(),
            r#"{"path": "index.html", "content": "AFTER\n"}"#.into(),
        )]),
        Reply::Text("Done.".into()),
    ]);
    let (_llama, daemon) = setup(true, model).await;
    let ws = timeout_workspace();
    std::fs::write(ws.path().join("index.html"), "BEFORE").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(
            &session,
            "Overwrite index.html with exactly AFTER",
            approve_all("approve"),
        )
        .await;
    assert_eq!(
        std::fs::read(ws.path().join("index.html")).unwrap(),
        b"AFTER",
        "{outcome:?}"
    );
    assert!(
        approvals(&seen)[0]
            .diff
            .as_ref()
            .unwrap()
            .text
            .contains("+AFTER"),
        "the approval shows the corrected bytes"
    );
    let trace = &daemon.traces()[0];
    let warning = trace
        .warnings
        .iter()
        .find(|w| w.code == "EXACT_LITERAL_WRITE_CORRECTED")
        .map(|w| serde_json::to_string(w).unwrap())
        .unwrap();
    assert!(
        warning.contains("sha256:") && !warning.contains("AFTER"),
        "the correction is recorded by hashes: {warning}"
    );
    assert_eq!(outcome.classification, Classification::CompletedVerified);
    daemon.stop().await;
}

#[tokio::test]
async fn a_status_question_is_answered_from_the_records_not_the_model() {
    let (llama, daemon) = setup(true, native_edit_model()).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": EDIT_REQUEST}),
            approve_all("deny"),
        )
        .await
        .unwrap();
    let calls_before = llama.requests().len();
    let answer = client
        .turn(&session, "did you make the changes?", "approve")
        .await
        .final_answer;
    assert!(
        answer.starts_with("From Talos's records of the previous turn")
            && answer.contains("BLOCKED_BY_APPROVAL")
            && answer.contains("settings.py: approval denied"),
        "{answer}"
    );
    assert_eq!(llama.requests().len(), calls_before, "no model call");
    daemon.stop().await;
}

/// A question about a value the file assigns, answered without it, gets the line quoted from
/// Talos's own read, marked as not the model's; an answer that states it is left alone.
#[tokio::test]
async fn a_question_answered_without_the_files_value_gets_the_line_quoted() {
    for (reply, quoted) in [("The server listens.", true), ("It uses port 3000.", false)] {
        let (_llama, daemon) = setup(true, scripted(vec![Reply::Text(reply.into())])).await;
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("server.js"),
            "const port = 3000;\napp.listen(port);\n",
        )
        .unwrap();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        let outcome = client
            .turn(&session, "What port does server.js use?", "deny")
            .await;
        let note = "[From Talos's own read (not the model): server.js: `const port = 3000;`]";
        assert_eq!(
            outcome.final_answer.contains(note),
            quoted,
            "{}",
            outcome.final_answer
        );
        assert!(
            outcome.final_answer.starts_with(reply),
            "{}",
            outcome.final_answer
        );
        daemon.stop().await;
    }
}

/// The status answer is the runtime's own text from the records: no model spoke, so no model
/// guard judges it, and after a verified change it says what changed with no "Truth check".
#[tokio::test]
async fn a_status_answer_after_a_verified_change_is_not_judged_as_a_model_claim() {
    let (llama, daemon) = setup(true, native_edit_model()).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(
        first.classification,
        Classification::CompletedVerified,
        "{first:?}"
    );
    let calls_before = llama.requests().len();
    let answer = client
        .turn(&session, "did you make the changes?", "approve")
        .await
        .final_answer;
    assert!(
        answer.starts_with("From Talos's records of the previous turn")
            && answer.contains("COMPLETED_VERIFIED")
            && answer.contains("Changed:\n- settings.py")
            && !answer.contains("Truth check"),
        "{answer}"
    );
    assert_eq!(llama.requests().len(), calls_before, "no model call");
    daemon.stop().await;
}

#[tokio::test]
async fn a_model_that_says_it_cannot_touch_files_is_corrected() {
    let (_llama, daemon) = setup(
        true,
        scripted(vec![Reply::Text(
            "As an AI language model, I can't create files on your computer.".into(),
        )]),
    )
    .await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(
            &session,
            "Create notes.md with a todo list",
            approve_all("approve"),
        )
        .await;
    assert!(
        outcome
            .final_answer
            .starts_with("[Capability correction: Talos can create and edit files"),
        "{outcome:?}"
    );
    assert_ne!(outcome.status, CompletionStatus::Complete);
    daemon.stop().await;
}

#[tokio::test]
async fn the_runtime_states_static_web_problems_itself_whatever_the_model_says() {
    let model = scripted(vec![
        Reply::ToolCalls(vec![(
            "talos.read_file".into(),
            r#"{"path": "index.html"}"#.into(),
        )]),
        Reply::Text("Everything looks fine, no problems found.".into()),
    ]);
    let (_llama, daemon) = setup(true, model).await;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("index.html"), "<html><head><link rel=\"stylesheet\" href=\"styles.css\"></head><body><button id=\"go\">Go</button><p id=\"status\"></p></body></html>").unwrap();
    std::fs::write(ws.path().join("styles.css"), "#missing { color: red; }\n").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let (outcome, _) = client
        .turn_with(
            &session,
            "Inspect index.html and check whether clicking #go updates #status",
            approve_all("deny"),
        )
        .await;
    let answer = outcome.final_answer;
    assert!(
        answer.starts_with(
            "[Verification check: the model's verdict was removed because Talos's own checks found"
        ),
        "the clean verdict is replaced up front: {answer}"
    );
    assert!(
        !answer.contains("Everything looks fine"),
        "issue 12: the false sentence does not reach the person: {answer}"
    );
    assert!(
        answer.contains("Static web diagnostics (checked by Talos, not the model) found:"),
        "{answer}"
    );
    assert!(
        answer.contains("missing"),
        "the unmatched selector is named: {answer}"
    );
    assert!(
        answer.contains("not checked in a browser") || answer.contains("interaction"),
        "{answer}"
    );
    let trace = &daemon.traces()[0];
    assert!(trace.verification.iter().any(|v| v.status == "FAIL"));
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.code == "CLEAN_VERDICT_CONTRADICTED"),
        "{trace:?}"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn an_answer_never_echoes_the_lines_of_a_protected_file() {
    let model = scripted(vec![
        Reply::ToolCalls(vec![(
            "talos.read_file".into(),
            r#"{"path": ".env"}"#.into(),
        )]),
        Reply::Text("Your .env says API_KEY=sk-live-0123456789 and DEBUG=1.".into()),
    ]);
    let (_llama, daemon) = setup(true, model).await;
    let ws = timeout_workspace();
    std::fs::write(ws.path().join(".env"), "API_KEY=sk-live-0123456789\n").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, "What is in .env?", approve_all("approve"))
        .await;
    assert_eq!(approvals(&seen).len(), 1, "a protected read asks");
    let answer = outcome.final_answer;
    assert!(
        !answer.contains("sk-live-0123456789") && answer.contains("[protected content withheld]"),
        "{answer}"
    );
    daemon.stop().await;
}

#[tokio::test]
async fn fix_the_remaining_problems_is_planned_from_the_last_verifiers_findings() {
    let model = scripted(vec![
        Reply::ToolCalls(vec![("talos.write_file".into(), json!({"path": "index.html", "content": "<html><head><script src=\"app.js\"></script></head><body><p>hi</p></body></html>"}).to_string())]),
        Reply::Text("Done.".into()),
    ]);
    let (llama, daemon) = setup(true, model).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (first, _) = client
        .turn_with(
            &session,
            "Create index.html for a small web page",
            approve_all("approve"),
        )
        .await;
    assert_eq!(
        first.classification,
        Classification::Failed,
        "the verifier found the missing script: {first:?}"
    );
    assert!(first.final_answer.contains("app.js"), "{first:?}");
    let before = llama.requests().len();
    client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": "fix the remaining problems"}),
            approve_all("deny"),
        )
        .await
        .unwrap();
    let system = llama.requests()[before]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("the last verification found") && system.contains("app.js"),
        "{system}"
    );
    daemon.stop().await;
}

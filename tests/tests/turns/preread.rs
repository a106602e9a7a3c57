//! The default model's turn ends right (issue 24), through the real daemon against the fake
//! llama server: the runtime reads a small named target before the first model call at every
//! constraint level; a read of a file already read and unchanged is answered with where its
//! content is, never a second copy, and a second such ask stops the loop; a question whose
//! file is read is offered only the answer; on `strict` a request naming both values pins the
//! edit's new text; a change that does not make the requested replacement is not verified.

use serde_json::{Value, json};
use talos_protocol::{Classification, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, approve_all, timeout_workspace};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit(old: &str, new: &str) -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": "settings.py", "old_string": old, "new_string": new}).to_string(),
    )])
}

struct Ran {
    outcome: TurnOutcome,
    requests: Vec<Value>,
    trace: talos_protocol::trace::TraceRecord,
    settings: String,
}

/// One agent turn on a connect_only daemon at `constrain` (`off`, `names` or `strict`).
async fn run(constrain: &str, steps: Vec<Reply>, prompt: &str) -> Ran {
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let config = TestDaemon::config_for(&llama.url, true).replacen(
        "tools:",
        &format!("  constrain: {constrain}\ntools:"),
        1,
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(&session, prompt, approve_all("approve"))
        .await;
    let trace = daemon.traces().pop().unwrap();
    let settings = std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
    daemon.stop().await;
    Ran {
        outcome,
        requests: llama.requests(),
        trace,
        settings,
    }
}

fn warned(trace: &talos_protocol::trace::TraceRecord, code: &str) -> bool {
    trace.warnings.iter().any(|w| w.code == code)
}

#[tokio::test]
async fn a_small_target_is_read_by_the_runtime_at_every_level_and_one_call_edits_it() {
    for level in ["off", "names", "strict"] {
        let r = run(
            level,
            vec![edit("TIMEOUT = 30", "TIMEOUT = 60")],
            EDIT_REQUEST,
        )
        .await;
        assert_eq!(r.settings, "TIMEOUT = 60\nRETRIES = 3\n", "{level}");
        assert_eq!(
            r.outcome.classification,
            Classification::CompletedVerified,
            "{level}"
        );
        assert_eq!(
            r.requests.len(),
            1,
            "{level}: one model call for a one-line edit"
        );
        let first = r.requests[0]["messages"].to_string();
        assert!(first.contains("Talos read settings.py for you"), "{level}");
        assert_eq!(r.trace.tool_calls[0].source, "runtime", "{level}");
    }
}

#[tokio::test]
async fn a_repeated_read_is_not_sent_twice_and_a_second_one_stops_the_loop() {
    let r = run(
        "off",
        vec![
            read_call("settings.py"),
            read_call("settings.py"),
            edit("TIMEOUT = 30", "TIMEOUT = 60"),
        ],
        EDIT_REQUEST,
    )
    .await;
    assert_eq!(r.requests.len(), 2, "the second repeat ends the loop");
    let second = r.requests[1]["messages"].as_array().unwrap();
    let answer_to_read = second.last().unwrap()["content"].as_str().unwrap();
    assert!(
        answer_to_read.contains("settings.py was already read in this turn")
            && !answer_to_read.contains("TIMEOUT = 30"),
        "the location, not a second copy: {answer_to_read}"
    );
    assert!(warned(&r.trace, "REPEATED_READ"));
    assert!(
        r.outcome
            .final_answer
            .contains("the model asked again for settings.py, already read"),
        "{}",
        r.outcome.final_answer
    );
    assert_eq!(r.settings, "TIMEOUT = 30\nRETRIES = 3\n");
}

#[tokio::test]
async fn a_question_whose_file_is_read_is_offered_only_the_answer() {
    let r = run(
        "names",
        vec![Reply::Text(r#"{"answer": "TIMEOUT is 30."}"#.into())],
        "What is the value of TIMEOUT in settings.py?",
    )
    .await;
    let schema = &r.requests[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["required"], json!(["answer"]), "{schema}");
    assert!(schema.get("anyOf").is_none(), "{schema}");
    assert_eq!(r.outcome.final_answer, "TIMEOUT is 30.");
    assert_eq!(r.outcome.classification, Classification::ReadOnlyAnswered);
}

#[tokio::test]
async fn strict_pins_the_new_text_of_a_named_replacement() {
    let r = run(
        "strict",
        vec![edit("TIMEOUT = 30", "TIMEOUT = 60")],
        EDIT_REQUEST,
    )
    .await;
    let schema = r.requests[0]["response_format"]["json_schema"]["schema"].to_string();
    assert!(
        schema.contains(r#""new_string":{"const":"TIMEOUT = 60"}"#)
            && schema.contains(r#""old_string":{"const":"TIMEOUT = 30"}"#),
        "{schema}"
    );
    assert!(!schema.contains("talos.read_file"), "{schema}");
    assert!(warned(&r.trace, "CONSTRAINT_CHOSE_NEW_TEXT"));
}

#[tokio::test]
async fn a_change_that_does_not_make_the_requested_replacement_is_not_verified() {
    let r = run(
        "off",
        vec![
            edit("TIMEOUT = 30", "RETRIES = 30, TIMEOUT = 60"),
            Reply::Text("Done.".into()),
        ],
        EDIT_REQUEST,
    )
    .await;
    assert_eq!(r.settings, "RETRIES = 30, TIMEOUT = 60\nRETRIES = 3\n");
    assert_eq!(
        r.outcome.classification,
        Classification::CompletedUnverified
    );
    assert!(
        r.outcome
            .files
            .iter()
            .any(|f| f.detail.contains("does not have 30 replaced by 60")),
        "{:?}",
        r.outcome.files
    );
}

//! The turn fits the model (issue 23), through the real daemon against a fake model that
//! enforces a context size and answers exactly as llama-server does when it is exceeded: a
//! question about an 18 KB file gets a window that fits and ends with an answer; a server that
//! does not say its context is answered with one more request cut to its own numbers; a
//! second turn carries the first turn's request and committed answer; usage is reported.

use std::sync::Arc;

use serde_json::Value;
use talos_protocol::event::TurnEvent;
use talos_protocol::{Classification, CompletionStatus};
use talos_tests::fake_llama::{
    FakeLlama, FakeOptions, Reply, after_tool_result, last_user, prompt_tokens, read_call,
};
use talos_tests::harness::{TestDaemon, approve_all, events};

const QUESTION: &str = "Explain what big.py does.";

/// An ordinary Python file of about 18.7 KB (480 lines of 39 bytes).
fn big_py() -> String {
    (1..=480)
        .map(|n| format!("value_{n:03} = dispatch(request, {n:03}, 3)\n"))
        .collect()
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("big.py"), big_py()).unwrap();
    ws
}

/// Reads big.py, then answers from what it was shown.
fn explainer() -> talos_tests::fake_llama::Script {
    Arc::new(|request: &Value| {
        if after_tool_result(request) {
            Reply::Text("big.py defines request handlers that dispatch requests.".into())
        } else {
            read_call("big.py")
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_about_an_18_kb_file_on_a_4096_token_slot_ends_with_an_answer() {
    assert!(big_py().len() > 18_000, "{}", big_py().len());
    let options = FakeOptions {
        n_ctx: Some(4096),
        ..FakeOptions::default()
    };
    let llama = FakeLlama::start_with(options, explainer()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let (outcome, seen) = client
        .turn_with(&session, QUESTION, approve_all("deny"))
        .await;
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    assert_eq!(outcome.classification, Classification::ReadOnlyAnswered);
    let requests = llama.requests();
    assert_eq!(
        requests.len(),
        2,
        "one read, one answer: nothing was refused"
    );
    for request in &requests {
        assert!(prompt_tokens(request) < 4096, "{}", prompt_tokens(request));
    }
    let shown = requests[1]["messages"].to_string();
    assert!(
        shown.contains("[big.py: lines 1-")
            && shown.contains(" of 480 shown; read more with offset "),
        "the read is a window that says where to go on: {}",
        &shown[shown.len().saturating_sub(1500)..]
    );
    let usage: Vec<(u64, u64)> = events(&seen)
        .into_iter()
        .filter_map(|e| match e.event {
            TurnEvent::Usage {
                prompt_tokens,
                context_tokens,
                ..
            } => Some((prompt_tokens, context_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 2, "one usage event per model call");
    assert!(
        usage.iter().all(|(_, context)| *context == 4096),
        "{usage:?}"
    );
    let trace = daemon.traces().pop().unwrap();
    assert_eq!(trace.model_calls[1].context_tokens, Some(4096));
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_say_its_context_is_retried_once_within_its_numbers() {
    let options = FakeOptions {
        n_ctx: Some(3000),
        hide_n_ctx: true,
        ..FakeOptions::default()
    };
    let llama = FakeLlama::start_with(options, explainer()).await;
    // The daemon believes each request may use 8,192 tokens; the server holds 3,000.
    let config = TestDaemon::config_for(&llama.url, true).replacen(
        "tools:",
        "  ctx_per_request: 8192\ntools:",
        1,
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let (outcome, _) = client
        .turn_with(&session, QUESTION, approve_all("deny"))
        .await;
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    let requests = llama.requests();
    assert_eq!(
        requests.len(),
        3,
        "read, refused, retried within 3000 tokens"
    );
    assert!(prompt_tokens(&requests[1]) >= 3000);
    assert!(
        prompt_tokens(&requests[2]) < 3000,
        "{}",
        prompt_tokens(&requests[2])
    );
    let trace = daemon.traces().pop().unwrap();
    assert!(
        trace.warnings.iter().any(|w| w.code == "CONTEXT_EXCEEDED"),
        "{:?}",
        trace.warnings
    );
    assert!(trace.model_calls[1].error.is_some() && trace.model_calls[2].error.is_none());
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_turn_carries_the_first_turns_request_and_committed_answer() {
    let script: talos_tests::fake_llama::Script = Arc::new(|request: &Value| {
        if last_user(request).contains("RETRIES") {
            Reply::Text("RETRIES is 3 as well.".into())
        } else {
            Reply::Text("Hello! I am here.".into())
        }
    });
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let (first, _) = client
        .turn_with(&session, "Hello there", approve_all("deny"))
        .await;
    let (_, _) = client
        .turn_with(
            &session,
            "Now do the same for RETRIES.",
            approve_all("deny"),
        )
        .await;
    let requests = llama.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let texts: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(texts[1], ("user", "Hello there"));
    assert_eq!(texts[2], ("assistant", first.final_answer.as_str()));
    assert_eq!(
        texts.last().unwrap(),
        &("user", "Now do the same for RETRIES.")
    );
    // A new session starts clean.
    let fresh = client.open_session(ws.path(), "ask").await;
    client
        .turn_with(&fresh, "Hello there", approve_all("deny"))
        .await;
    let last = llama.requests().pop().unwrap();
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user"], "session/new starts clean");
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_lines_and_pins_never_reach_a_later_turn() {
    use talos_tests::fake_llama::call;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join(".env"),
        "API_KEY=sk-not-for-later-turns-123456\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("notes.md"), "PINNED-NOTE-CONTENT-4711\n").unwrap();
    let script: talos_tests::fake_llama::Script = Arc::new(|request: &Value| {
        let asked = last_user(request);
        if after_tool_result(request) {
            Reply::Text("The file says API_KEY=sk-not-for-later-turns-123456".into())
        } else if asked.contains(".env") {
            call(true, "talos.read_file", serde_json::json!({"path": ".env"}))
        } else if asked.contains("notes") {
            Reply::Text("Noted.".into())
        } else {
            Reply::Text("Hello again.".into())
        }
    });
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    client
        .turn_with(&session, "What does .env contain?", approve_all("approve"))
        .await;
    let pinned: Value = client
        .call(
            "turn/start",
            serde_json::json!({"sessionId": session, "prompt": "Read my notes", "pins": ["notes.md"]}),
        )
        .await;
    assert_eq!(pinned["finalAnswer"], "Noted.", "{pinned}");
    client
        .turn_with(&session, "Hello there", approve_all("deny"))
        .await;
    let requests = llama.requests();
    let pin_request = requests[2]["messages"].to_string();
    assert!(
        pin_request.contains("PINNED-NOTE-CONTENT-4711"),
        "the pin reached its own turn"
    );
    let last = requests.last().unwrap()["messages"].to_string();
    assert!(
        last.contains("What does .env contain?"),
        "the earlier request is carried"
    );
    assert!(!last.contains("sk-not-for-later-turns"), "{last}");
    assert!(!last.contains("PINNED-NOTE-CONTENT-4711"), "{last}");
    daemon.stop().await;
}

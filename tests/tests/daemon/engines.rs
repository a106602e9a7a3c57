//! Engines beyond llama.cpp (issue 25, item 2), through the real daemon: an OpenAI-compatible
//! server without `/props` (vLLM's `/v1/models` shape) is found by `model.engine: auto`, gets
//! native tools, the model it serves as `model`, its `max_model_len` as the context, the
//! `names` constraint rather than `strict`, and none of llama.cpp's fields (`id_slot`,
//! `cache_prompt`); `model.native_tools: off` describes the tools as text; a llama.cpp server
//! keeps its fields.

use serde_json::{Value, json};
use talos_protocol::CompletionStatus;
use talos_tests::fake_llama::{FakeLlama, FakeOptions, OPENAI_MODEL, Reply, scripted};
use talos_tests::harness::{TestDaemon, approve_all, timeout_workspace};

const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit() -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"})
            .to_string(),
    )])
}

/// One approved edit turn against a fake with `options`; the chat requests it received.
async fn run(options: FakeOptions, extra_model: &str) -> (Vec<Value>, talos_protocol::TurnOutcome) {
    let llama = FakeLlama::start_with(options, scripted(vec![edit()])).await;
    let config = TestDaemon::config_for(&llama.url, true).replacen(
        "tools:",
        &format!("  constrain: strict\n{extra_model}tools:"),
        1,
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(&session, EDIT, approve_all("approve"))
        .await;
    daemon.stop().await;
    (llama.requests(), outcome)
}

fn openai() -> FakeOptions {
    FakeOptions {
        openai: true,
        n_ctx: Some(32768),
        ..FakeOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_compatible_server_is_found_and_spoken_to_as_one() {
    let (requests, outcome) = run(openai(), "").await;
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    let body = &requests[0];
    assert_eq!(body["model"], OPENAI_MODEL, "the served model is named");
    assert!(
        body.get("id_slot").is_none() && body.get("cache_prompt").is_none(),
        "{body}"
    );
    assert!(
        body["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "native tools: {body}"
    );
    let schema = body["response_format"]["json_schema"]["schema"].to_string();
    assert!(
        !schema.contains(r#""old_string":{"const""#) && !schema.contains(r#""old_string":{"enum""#),
        "names, not strict: {schema}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_tools_off_describes_the_tools_as_text() {
    let (requests, _) = run(openai(), "  native_tools: off\n").await;
    assert!(requests[0].get("tools").is_none(), "{}", requests[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_llama_cpp_server_keeps_its_slot_cache_and_strict_schema() {
    let (requests, outcome) = run(FakeOptions::default(), "").await;
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    let body = &requests[0];
    assert_eq!(body["cache_prompt"], true, "{body}");
    assert_eq!(body["model"], "local");
    let schema = body["response_format"]["json_schema"]["schema"].to_string();
    assert!(
        schema.contains(r#""new_string":{"const":"TIMEOUT = 60"}"#),
        "{schema}"
    );
}

/// Proves the trace says which model an OpenAI-compatible server was asked for when
/// `model.name` is not set (the first of `/v1/models`), and says nothing of the kind for
/// llama.cpp.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_names_the_model_picked_on_an_openai_server() {
    for (options, want) in [
        (openai(), Some(OPENAI_MODEL.to_string())),
        (FakeOptions::default(), None),
    ] {
        let llama = FakeLlama::start_with(options, scripted(vec![edit()])).await;
        let config = TestDaemon::config_for(&llama.url, true);
        let daemon = TestDaemon::start(&config).await;
        let ws = timeout_workspace();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        client
            .turn_with(&session, EDIT, approve_all("approve"))
            .await;
        let traces = daemon.traces();
        daemon.stop().await;
        assert_eq!(traces.len(), 1);
        assert_eq!(traces[0].model.served, want, "{:?}", traces[0].model);
    }
}

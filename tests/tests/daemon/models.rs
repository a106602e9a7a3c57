//! Several models in one daemon (issue 25, item 5): `models:` with `model.default`,
//! `model/select` in a session, the trace naming each turn's model and engine, managed entries
//! started on first use one at a time (the idle one stopped first, its process gone), and
//! `model/status` listing them all. The managed servers are `fake-llama-server` processes; the
//! `talos run --model` test drives the real CLI binary against two in-process fakes.

use std::time::Duration;

use serde_json::json;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{ModelSelectResult, ModelStatusResult, SessionListResult, TurnOutcome};
use talos_tests::cli::talos;
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{Client, TestDaemon, timeout_workspace};
use talos_tests::managed::{FakeServer, alive, model_status, wait_for_status, wait_gone};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-llama-server");
const QUESTION: &str = "What does settings.py configure?";
const START: Duration = Duration::from_secs(20);

/// One managed entry of `models:` on `fake`.
fn entry(name: &str, fake: &FakeServer) -> String {
    format!(
        "  {name}:\n    server: {}\n    path: {}\n    port: {}\n    ctx: 8192\n    threads: 1\n    slots: 2\n    start_timeout_secs: 20\n",
        json!(FAKE),
        json!(fake.model),
        fake.port
    )
}

fn entry_of<'a>(status: &'a ModelStatusResult, name: &str) -> &'a ModelStatusResult {
    status
        .models
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{name} listed in {status:?}"))
}

async fn question(client: &mut Client, session: &str) -> TurnOutcome {
    client.turn(session, QUESTION, "deny").await
}

fn last_trace(daemon: &TestDaemon) -> TraceRecord {
    let traces = daemon.traces();
    traces
        .into_iter()
        .max_by_key(|t| t.started_at_ms)
        .expect("a trace")
}

async fn select(client: &mut Client, session: &str, name: &str) -> ModelSelectResult {
    client
        .request("model/select", json!({"sessionId": session, "name": name}))
        .await
}

/// Proves a session switches models between turns: each turn goes to its model's server and
/// its trace names it; the second managed model starts on first use after the idle default
/// was stopped (one at a time), and the default starts again when chosen again.
#[tokio::test]
async fn a_session_switches_models_and_each_trace_names_its_model() {
    let small = FakeServer::new(json!({"reply": "It configures TIMEOUT and RETRIES (small)."}));
    let big = FakeServer::new(json!({"reply": "It configures TIMEOUT and RETRIES (big)."}));
    let config = format!(
        "model:\n  default: small\nmodels:\n{}{}",
        entry("small", &small),
        entry("big", &big)
    );
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;

    // The default starts with the daemon; the other waits for its first use.
    let status = wait_for_status(&mut client, START, |s| s.state == "ready")
        .await
        .last;
    assert_eq!((status.name.as_str(), status.default), ("small", true));
    assert_eq!(status.models.len(), 2, "{status:?}");
    assert_eq!(status.models[0].name, "small", "the default first");
    let idle = entry_of(&status, "big");
    assert_eq!((idle.state.as_str(), idle.default), ("idle", false));
    assert_eq!(idle.port, Some(big.port));
    assert!(big.pids().is_empty(), "big is not started before its use");

    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "agent").await;
    let first = question(&mut client, &session).await;
    assert!(first.final_answer.contains("(small)"), "{first:?}");
    let trace = last_trace(&daemon);
    assert_eq!(trace.model.name, "small");
    assert_eq!(trace.model.backend, "llama.cpp");
    assert_eq!(trace.model.url, format!("http://127.0.0.1:{}", small.port));
    let small_pid = small.listener_pid().expect("small listens");

    let chosen = select(&mut client, &session, "big").await;
    assert_eq!(
        (chosen.name.as_str(), chosen.previous.as_str()),
        ("big", "small")
    );
    let listed: SessionListResult = client.request("session/list", json!({})).await;
    assert_eq!(listed.sessions[0].model, "big");

    let second = question(&mut client, &session).await;
    assert!(second.final_answer.contains("(big)"), "{second:?}");
    assert_eq!(last_trace(&daemon).model.name, "big");
    assert_eq!(big.requests().len(), 1, "the second turn went to big");
    assert!(
        wait_gone(&[small_pid], Duration::from_secs(8))
            .await
            .is_empty(),
        "the idle default was stopped before big started (model.max_running 1)"
    );
    let status = model_status(&mut client).await;
    assert_eq!(entry_of(&status, "big").state, "ready", "{status:?}");
    assert_eq!(entry_of(&status, "small").state, "idle", "{status:?}");

    select(&mut client, &session, "small").await;
    let third = question(&mut client, &session).await;
    assert!(third.final_answer.contains("(small)"), "{third:?}");
    assert_eq!(last_trace(&daemon).model.name, "small");
    assert_eq!(
        small.pids().len(),
        2,
        "small started again: {:?}",
        small.pids()
    );

    let big_pid = big.listener_pid().unwrap();
    daemon.stop().await;
    let survivors = wait_gone(&[big_pid], Duration::from_secs(8)).await;
    assert!(survivors.is_empty(), "every server stops with the daemon");
    assert!(!small.listener_pid().is_some_and(alive));
}

/// Proves a model name that is not configured is refused with the names that are, and the
/// session keeps its model; a session that continues another keeps the other's choice.
#[tokio::test]
async fn an_unknown_model_is_refused_naming_the_configured_ones() {
    let a = FakeLlama::start(true, scripted(vec![Reply::Text("from a".into())])).await;
    let b = FakeLlama::start(true, scripted(vec![Reply::Text("from b".into())])).await;
    let config = format!(
        "model:\n  default: a\nmodels:\n  a:\n    mode: connect_only\n    url: {}\n  b:\n    mode: connect_only\n    url: {}\n",
        a.url, b.url
    );
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;
    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "agent").await;
    let (response, _) = client
        .call_with(
            "model/select",
            json!({"sessionId": session, "name": "gpt-9"}),
            |_| talos_tests::harness::Answer::Ignore,
        )
        .await
        .unwrap();
    let error = response.error.expect("refused");
    assert!(
        error.message.contains("no model `gpt-9`; configured: a, b"),
        "{error:?}"
    );
    let outcome = question(&mut client, &session).await;
    assert!(outcome.final_answer.contains("from a"), "{outcome:?}");
    assert_eq!(b.requests().len(), 0);

    select(&mut client, &session, "b").await;
    let continued: talos_protocol::SessionNewResult = client
        .request(
            "session/new",
            json!({"workspace": ws.path(), "mode": "ask", "continueFrom": session}),
        )
        .await;
    let listed: SessionListResult = client.request("session/list", json!({})).await;
    let model = |id: &str| {
        listed
            .sessions
            .iter()
            .find(|s| s.session_id == id)
            .map(|s| s.model.clone())
    };
    assert_eq!(model(&continued.session_id).as_deref(), Some("b"));
    let outcome = question(&mut client, &continued.session_id).await;
    assert!(outcome.final_answer.contains("from b"), "{outcome:?}");
    let status = model_status(&mut client).await;
    let states: Vec<(&str, &str)> = status
        .models
        .iter()
        .map(|m| (m.name.as_str(), m.state.as_str()))
        .collect();
    assert_eq!(states, [("a", "connect_only"), ("b", "connect_only")]);
}

/// Proves `talos run --model NAME` runs the turn on that model, and `talos model status` lists
/// the models with the default marked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_run_model_uses_the_named_model() {
    let a = FakeLlama::start(true, scripted(vec![Reply::Text("from a".into())])).await;
    let b = FakeLlama::start(true, scripted(vec![Reply::Text("from b".into())])).await;
    let home = tempfile::Builder::new()
        .prefix("tm")
        .tempdir_in("/tmp")
        .unwrap();
    let config = format!(
        "model:\n  default: a\nmodels:\n  a:\n    mode: connect_only\n    url: {}\n  b:\n    mode: connect_only\n    url: {}\n",
        a.url, b.url
    );
    std::fs::write(home.path().join("config.yaml"), config).unwrap();
    let ws = timeout_workspace();
    let run = |args: Vec<String>, home: std::path::PathBuf| {
        tokio::task::spawn_blocking(move || talos(&home, &args, ""))
    };
    let args = vec![
        "run".to_string(),
        "--workspace".into(),
        ws.path().display().to_string(),
        "--model".into(),
        "b".into(),
        QUESTION.into(),
    ];
    let out = run(args, home.path().to_path_buf()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("from b"), "{stdout}");
    assert_eq!(a.requests().len(), 0);

    let status = run(
        vec!["model".into(), "status".into()],
        home.path().to_path_buf(),
    )
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("name:"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("* a ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("  b ")), "{text}");

    let bad = run(
        vec![
            "run".into(),
            "--workspace".into(),
            ws.path().display().to_string(),
            "--model".into(),
            "nope".into(),
            QUESTION.into(),
        ],
        home.path().to_path_buf(),
    )
    .await
    .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("no model `nope`; configured: a, b"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let _ = run(vec!["stop".into()], home.path().to_path_buf()).await;
}

/// Proves a turn waiting for its model's server to load ends at once when cancelled: the wait
/// is the turn's, not the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_waiting_for_its_model_to_load_ends_when_cancelled() {
    let slow = FakeServer::new(json!({"loading_ms": 15000, "reply": "late"}));
    let config = format!("model:\n  default: slow\nmodels:\n{}", entry("slow", &slow));
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;
    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "ask").await;
    let mut other = daemon.client().await;
    other.call("initialize", json!({"clientName": "e2e"})).await;
    let id = session.clone();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let _: serde_json::Value = other.request("turn/cancel", json!({"sessionId": id})).await;
    });
    let started = std::time::Instant::now();
    let outcome = question(&mut client, &session).await;
    cancel.await.unwrap();
    assert_eq!(
        outcome.status,
        talos_protocol::CompletionStatus::Cancelled,
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "ended {:?} after the start, not when the server loaded",
        started.elapsed()
    );
}

/// Proves several managed models with `model.max_running: 1` never deadlock under load: 20
/// sessions, each switching between two models across three turns at once, all finish, each
/// turn answered by the model its session chose (no server stopped under a turn). Each start
/// takes a while (`loading_ms`), so turns pile up on a start while others hold the running
/// model. Bounded: a deadlock fails the test instead of hanging it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_switching_models_with_max_running_one_all_finish() {
    const SESSIONS: usize = 20;
    const TURNS: usize = 6;
    let x = FakeServer::new(
        json!({"loading_ms": 300, "stop_ms": 700, "reply": "It configures TIMEOUT and RETRIES (x)."}),
    );
    let y = FakeServer::new(
        json!({"loading_ms": 300, "stop_ms": 700, "reply": "It configures TIMEOUT and RETRIES (y)."}),
    );
    let config = format!(
        "model:\n  default: x\n  max_running: 1\nmodels:\n{}{}",
        entry("x", &x),
        entry("y", &y)
    );
    let daemon = TestDaemon::start(&config).await;
    let mut sessions = Vec::new();
    for i in 0..SESSIONS {
        let mut client = daemon.client().await;
        let ws = timeout_workspace();
        let session = client.open_session(ws.path(), "ask").await;
        sessions.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            for turn in 0..TURNS {
                // A mix, so that both models' turns arrive while a server stops.
                let name = if (i * 31 + turn * 17 + i * turn * 7) % 4 < 2 {
                    "x"
                } else {
                    "y"
                };
                select(&mut client, &session, name).await;
                let outcome = question(&mut client, &session).await;
                answers.push((name, outcome));
            }
            drop(ws);
            answers
        }));
    }
    let all = tokio::time::timeout(Duration::from_secs(120), futures_join_all(sessions)).await;
    let Ok(all) = all else {
        let status = model_status(&mut daemon.client().await).await;
        daemon.stop().await;
        panic!("turns still hung after 120 s (a deadlock); status {status:?}");
    };
    for (name, outcome) in all.into_iter().flatten() {
        assert!(
            outcome.final_answer.contains(&format!("({name})")),
            "{name}: {outcome:?}"
        );
    }
    let pids: Vec<u32> = x.pids().into_iter().chain(y.pids()).collect();
    daemon.stop().await;
    assert!(wait_gone(&pids, Duration::from_secs(8)).await.is_empty());
}

/// Every session's answers, in order (a panicked task fails the test).
async fn futures_join_all<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

/// Proves `turn/cancel` reaches a turn whose `/tokenize` answer never ends at once: the count
/// is the turn's to end, not the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_reaches_a_turn_whose_tokenize_never_ends() {
    let options = talos_tests::fake_llama::FakeOptions {
        endless_tokenize: true,
        ..Default::default()
    };
    let fake = FakeLlama::start_with(options, scripted(vec![Reply::Text("never".into())])).await;
    let config = format!("model:\n  mode: connect_only\n  url: {}\n", fake.url);
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;
    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "ask").await;
    let mut other = daemon.client().await;
    other.call("initialize", json!({"clientName": "e2e"})).await;
    let id = session.clone();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let _: serde_json::Value = other.request("turn/cancel", json!({"sessionId": id})).await;
    });
    let started = std::time::Instant::now();
    let outcome = question(&mut client, &session).await;
    cancel.await.unwrap();
    assert_eq!(
        outcome.status,
        talos_protocol::CompletionStatus::Cancelled,
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "ended {:?} after the start, not at the cancel",
        started.elapsed()
    );
    assert!(fake.requests().is_empty(), "no chat request was sent");
}

/// Proves a model answer whose body never ends fails the turn once
/// `model.request_timeout_secs` has passed (bytes keep coming, so no read times out), and the
/// daemon keeps serving: the next request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_never_ends_fails_the_turn_and_the_daemon_serves_on() {
    let fake = FakeLlama::start(true, scripted(vec![Reply::Endless])).await;
    let config = format!(
        "model:\n  mode: connect_only\n  url: {}\n  request_timeout_secs: 2\n",
        fake.url
    );
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;
    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "ask").await;
    let outcome = question(&mut client, &session).await;
    assert_ne!(
        outcome.status,
        talos_protocol::CompletionStatus::Complete,
        "{outcome:?}"
    );
    let status = model_status(&mut client).await;
    assert_eq!(status.state, "connect_only", "{status:?}");
}

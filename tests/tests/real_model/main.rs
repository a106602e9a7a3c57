//! Managed mode with the real llama-server and the real small model that
//! `packaging/get-llama.sh` installs: the daemon launches and owns the server, and real turns go
//! through the whole pipeline. These run only when `TALOS_REAL_MODEL=1` and say so otherwise.
//! They assert shape (a trace, token counts, a known outcome, an untouched file), never the
//! tiny model's choices.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic
#![allow(clippy::print_stdout)] // a skipped test says so, and a run shows what the model did

mod extensions;

use std::time::Duration;

use talos_protocol::TurnOutcome;
use talos_protocol::trace::TraceRecord;
use talos_tests::harness::{Client, TestDaemon, approve_all, timeout_workspace};
use talos_tests::managed::{ManagedConfig, alive, cmdline, free_port, wait_for_state, wait_gone};
use talos_tests::real_llama::{RealParts, SKIPPED, enabled, threads};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const QUESTION: &str = "What does settings.py configure?";
const TOOL_STAGES: [&str; 5] = ["rejected", "denied", "executed", "failed", "cancelled"];

/// One real llama-server at a time: two on two cores starve each other's turns.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The real parts, or `None` (after printing why) when these tests are not asked for.
fn parts() -> Option<RealParts> {
    if !enabled() {
        println!("{SKIPPED}");
        return None;
    }
    Some(RealParts::find().unwrap_or_else(|missing| panic!("TALOS_REAL_MODEL=1 but {missing}")))
}

/// Starts a daemon managing the real server and waits until it is ready and owned.
async fn start(parts: &RealParts) -> (TestDaemon, Client, u32) {
    start_with(parts, "").await
}

/// [`start`] with more of `config.yaml` after the managed model's settings.
async fn start_with(parts: &RealParts, more: &str) -> (TestDaemon, Client, u32) {
    let mut config = ManagedConfig::new(&parts.server, &parts.model, free_port());
    config.ctx = 8192;
    config.slots = 2;
    config.threads = threads();
    config.chat_template_file = Some(parts.template.clone());
    config.start_timeout_secs = 120;
    config.extra = format!(
        "  max_tokens: 128\nturn:\n  max_model_calls: 3\napproval:\n  timeout_secs: 30\n{more}"
    );
    let daemon = TestDaemon::start(&config.to_yaml()).await;
    let mut client = daemon.client().await;
    // A real model on two cores can think for a while between two messages.
    client.read_timeout = Duration::from_secs(240);
    let ready = wait_for_state(&mut client, "ready", Duration::from_secs(150))
        .await
        .last;
    assert!(ready.owned, "{ready:?}");
    let pid = ready.pid.unwrap();
    assert!(alive(pid));
    let args = cmdline(pid);
    assert_eq!(args[0], parts.server.to_str().unwrap(), "{args:?}");
    (daemon, client, pid)
}

async fn turn(client: &mut Client, session: &str, prompt: &str) -> TurnOutcome {
    client
        .turn_with(session, prompt, approve_all("deny"))
        .await
        .0
}

/// The trace of the turn whose outcome is `outcome`.
fn trace_of(daemon: &TestDaemon, outcome: &TurnOutcome) -> TraceRecord {
    daemon
        .traces()
        .into_iter()
        .find(|t| t.trace_id == outcome.trace_id)
        .unwrap_or_else(|| panic!("no trace for {outcome:?}"))
}

async fn stop(daemon: TestDaemon, pid: u32) {
    daemon.stop().await;
    let survivors = wait_gone(&[pid], Duration::from_secs(8)).await;
    assert!(
        survivors.is_empty(),
        "llama-server {pid} outlives the daemon"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(talos_real_model),
    ignore = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)"
)]
async fn a_real_server_launched_by_the_daemon_carries_a_denied_edit_through_the_pipeline() {
    let Some(parts) = parts() else { return };
    let _one = ONE_AT_A_TIME.lock().await;
    let (daemon, mut client, pid) = start(&parts).await;
    let ws = timeout_workspace();
    let before = std::fs::read(ws.path().join("settings.py")).unwrap();
    let session = client.open_session(ws.path(), "agent").await;
    let outcome = turn(&mut client, &session, EDIT_REQUEST).await;

    assert_eq!(
        std::fs::read(ws.path().join("settings.py")).unwrap(),
        before,
        "approvals were denied: nothing is written"
    );
    let record = trace_of(&daemon, &outcome);
    assert_eq!(record.schema_version, 5);
    assert!(
        ["native", "text"].contains(&record.model.tool_calling.as_str()),
        "{}",
        record.model.tool_calling
    );
    assert!(!record.model_calls.is_empty());
    assert!(
        record.model_calls[0].prompt_tokens.is_some_and(|n| n > 0),
        "{:?}",
        record.model_calls[0]
    );
    for call in &record.tool_calls {
        assert!(TOOL_STAGES.contains(&call.stage.as_str()), "{call:?}");
        if call.stage == "rejected" {
            assert!(call.rejection.is_some(), "a rejection says why: {call:?}");
        } else {
            let decision = record
                .permission_decisions
                .iter()
                .find(|p| p.call_id == call.call_id)
                .unwrap_or_else(|| panic!("no permission decision for {call:?}"));
            assert!(
                ["allow", "ask", "deny"].contains(&decision.action.as_str()),
                "{decision:?}"
            );
        }
    }
    assert!(
        record
            .approvals
            .iter()
            .all(|a| a.decision == talos_protocol::Decision::Deny)
    );
    println!(
        "real edit turn: {:?} / {:?}, tool calling {}, {} model calls, tool calls {:?}",
        outcome.status,
        outcome.classification,
        record.model.tool_calling,
        record.model_calls.len(),
        record
            .tool_calls
            .iter()
            .map(|c| format!("{} -> {}", c.requested_name, c.stage))
            .collect::<Vec<_>>()
    );
    stop(daemon, pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(talos_real_model),
    ignore = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)"
)]
async fn a_second_turn_in_a_session_reuses_the_cached_prompt_prefix_in_its_slot() {
    let Some(parts) = parts() else { return };
    let _one = ONE_AT_A_TIME.lock().await;
    let (daemon, mut client, pid) = start(&parts).await;
    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "ask").await;
    let first = turn(&mut client, &session, QUESTION).await;
    let second = turn(&mut client, &session, QUESTION).await;
    let calls = |outcome: &TurnOutcome| trace_of(&daemon, outcome).model_calls;
    let (first_calls, second_calls) = (calls(&first), calls(&second));
    assert!(first_calls[0].prompt_tokens.unwrap() > 0);
    let cached = second_calls[0].cached_tokens;
    assert!(
        cached.is_some_and(|n| n > 0),
        "turn 2 starts from turn 1's prefix: {second_calls:?}"
    );
    println!(
        "cache: turn 1 prompt {:?} cached {:?}; turn 2 prompt {:?} cached {:?}",
        first_calls[0].prompt_tokens,
        first_calls[0].cached_tokens,
        second_calls[0].prompt_tokens,
        second_calls[0].cached_tokens
    );
    stop(daemon, pid).await;
}

/// An ordinary Python file of about 18.5 KB: functions with docstrings and bodies.
fn big_py() -> String {
    let mut text = String::from(
        "\"\"\"Request handlers for the billing service.\"\"\"\n\nimport json\nimport time\n\nRETRIES = 3\nTIMEOUT = 30\n\n",
    );
    let mut n = 0;
    while text.len() < 18_500 {
        n += 1;
        text.push_str(&format!(
            "def handle_{n:03}(request):\n    \"\"\"Handle request kind {n}: parse it, retry on failure, return JSON.\"\"\"\n    for attempt in range(RETRIES):\n        try:\n            body = json.loads(request.body)\n            return json.dumps({{\"kind\": {n}, \"ok\": True, \"body\": body}})\n        except ValueError:\n            time.sleep(attempt)\n    return json.dumps({{\"kind\": {n}, \"ok\": False}})\n\n\n"
        ));
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(talos_real_model),
    ignore = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)"
)]
async fn a_question_about_an_18_kb_file_on_a_4096_token_slot_ends_with_an_answer() {
    let Some(parts) = parts() else { return };
    let _one = ONE_AT_A_TIME.lock().await;
    let (daemon, mut client, pid) = start(&parts).await;
    let ws = tempfile::tempdir().unwrap();
    let text = big_py();
    std::fs::write(ws.path().join("big.py"), &text).unwrap();
    let session = client.open_session(ws.path(), "ask").await;
    let outcome = turn(&mut client, &session, "Explain what big.py does.").await;
    let trace = trace_of(&daemon, &outcome);
    println!(
        "18 KB question ({} bytes): {:?} {:?}; model calls (prompt, context, cut): {:?}; answer: {:?}",
        text.len(),
        outcome.status,
        outcome.classification,
        trace
            .model_calls
            .iter()
            .map(|c| (
                c.prompt_tokens,
                c.context_tokens,
                c.cut.len(),
                c.error.clone()
            ))
            .collect::<Vec<_>>(),
        outcome.final_answer
    );
    assert_ne!(
        outcome.status,
        talos_protocol::CompletionStatus::Failed,
        "{outcome:?}"
    );
    assert!(!trace.model_calls.is_empty());
    for call in &trace.model_calls {
        assert_eq!(call.context_tokens, Some(4096), "{call:?}");
        if call.error.is_none() {
            assert!(call.prompt_tokens.unwrap() < 4096, "{call:?}");
        }
    }
    assert!(!outcome.final_answer.is_empty());
    stop(daemon, pid).await;
}

/// A real llama-server started with `--api-key` on loopback (connect_only), the key in a
/// private file: a turn completes with the key, and a wrong key is one clear refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(talos_real_model),
    ignore = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)"
)]
async fn a_real_server_with_an_api_key_answers_with_the_key_and_refuses_a_wrong_one() {
    use std::os::unix::fs::PermissionsExt;
    let Some(parts) = parts() else { return };
    let _one = ONE_AT_A_TIME.lock().await;
    let key = "sk-real-llama-test-4711";
    let port = free_port();
    let mut server = std::process::Command::new(&parts.server)
        .args(["-m", parts.model.to_str().unwrap(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "-c", "4096", "--jinja"])
        .args(["-t", &threads().to_string(), "--api-key", key])
        .arg("--chat-template-file")
        .arg(&parts.template)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let health = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        // /health is public in llama-server: it answers 200 once the model is loaded.
        let ok = std::net::TcpStream::connect(&health).is_ok_and(|mut s| {
            use std::io::{Read, Write};
            let _ = s.write_all(b"GET /health HTTP/1.0\r\n\r\n");
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            answer.starts_with("HTTP/1.1 200")
        });
        if ok {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "llama-server did not load"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let secrets = tempfile::tempdir().unwrap();
    for (given, works) in [(key, true), ("sk-wrong", false)] {
        let file = secrets.path().join("key");
        std::fs::write(&file, given).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let config = format!(
            "model:\n  mode: connect_only\n  url: {url}\n  api_key_file: {}\n  max_tokens: 64\nturn:\n  max_model_calls: 2\napproval:\n  timeout_secs: 30\n",
            file.display()
        );
        let daemon = TestDaemon::start(&config).await;
        let mut client = daemon.client().await;
        client.read_timeout = Duration::from_secs(240);
        let ws = timeout_workspace();
        let session = client.open_session(ws.path(), "ask").await;
        let outcome = turn(&mut client, &session, QUESTION).await;
        println!(
            "api key {given}: {:?} {}",
            outcome.classification, outcome.final_answer
        );
        if works {
            assert_ne!(
                outcome.status,
                talos_protocol::CompletionStatus::Failed,
                "{outcome:?}"
            );
            let trace = trace_of(&daemon, &outcome);
            assert!(
                trace.model_calls.iter().all(|c| c.error.is_none()),
                "{trace:?}"
            );
        } else {
            assert!(
                outcome.final_answer.contains("HTTP 401: Invalid API Key")
                    && outcome.final_answer.contains("model.api_key_file"),
                "{}",
                outcome.final_answer
            );
        }
        daemon.stop().await;
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// Two named models on the real server (issue 25, item 5): the session's turn goes to the
/// default, `model/select` moves it to the second, which starts on first use after the idle
/// default is stopped (`model.max_running: 1`); each trace names its model and the engine the
/// probe found. Prints how long the switched turn took, its server start included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(talos_real_model),
    ignore = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)"
)]
async fn a_session_switches_between_two_real_managed_models() {
    let Some(parts) = parts() else { return };
    let _one = ONE_AT_A_TIME.lock().await;
    let entry = |name: &str, port: u16| {
        format!(
            "  {name}:\n    server: {:?}\n    path: {:?}\n    chat_template_file: {:?}\n    port: {port}\n    ctx: 8192\n    slots: 2\n    threads: {}\n    start_timeout_secs: 120\n    max_tokens: 64\n",
            parts.server,
            parts.model,
            parts.template,
            threads()
        )
    };
    let config = format!(
        "model:\n  default: small\nmodels:\n{}{}turn:\n  max_model_calls: 2\napproval:\n  timeout_secs: 30\n",
        entry("small", free_port()),
        entry("second", free_port())
    );
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;
    client.read_timeout = Duration::from_secs(240);
    let ready = wait_for_state(&mut client, "ready", Duration::from_secs(150))
        .await
        .last;
    let small_pid = ready.pid.unwrap();
    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "ask").await;
    let first = turn(&mut client, &session, QUESTION).await;
    let trace = trace_of(&daemon, &first);
    assert_eq!(
        (trace.model.name.as_str(), trace.model.backend.as_str()),
        ("small", "llama.cpp")
    );

    let _: serde_json::Value = client
        .request(
            "model/select",
            serde_json::json!({"sessionId": session, "name": "second"}),
        )
        .await;
    let started = std::time::Instant::now();
    let second = turn(&mut client, &session, QUESTION).await;
    let took = started.elapsed();
    let trace = trace_of(&daemon, &second);
    assert_eq!(trace.model.name, "second", "{trace:?}");
    assert!(
        trace.model_calls.iter().all(|c| c.error.is_none()),
        "{trace:?}"
    );
    assert!(
        wait_gone(&[small_pid], Duration::from_secs(8))
            .await
            .is_empty(),
        "the idle default was stopped first"
    );
    let status: talos_protocol::ModelStatusResult =
        client.request("model/status", serde_json::json!({})).await;
    let second_pid = status
        .models
        .iter()
        .find(|m| m.name == "second")
        .and_then(|m| m.pid)
        .expect("second runs");
    println!(
        "switched turn on a cold second model: {} ms ({:?}); first turn {:?}",
        took.as_millis(),
        second.classification,
        first.classification
    );
    stop(daemon, second_pid).await;
}

//! Managed mode end to end: the daemon launches `fake-llama-server` (a separate process speaking
//! llama-server's command line and API), proves it owns the listener, waits while it loads,
//! restarts it after a crash and stops it with the daemon. Each test asserts `model/status`,
//! the message a person sees, and the processes themselves through `/proc`.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_protocol::{Classification, CompletionStatus, Message, ModelStatusResult, TurnOutcome};
use talos_tests::harness::{Client, TestDaemon, approvals, approve_all, timeout_workspace};
use talos_tests::managed::{
    FakeServer, alive, cmdline, flag_value, model_status, wait_for_state, wait_for_status,
    wait_gone,
};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-llama-server");
const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const QUESTION: &str = "What does settings.py configure?";
const REFUSED: &str = "Another server is not restarted by Talos.";
/// Long enough for a start on a loaded machine; every wait ends as soon as its state arrives.
const START: Duration = Duration::from_secs(20);
/// SIGTERM, then SIGKILL after 5 s, plus slack.
const STOPPED: Duration = Duration::from_secs(8);

/// Reads settings.py, proposes the TIMEOUT edit natively, then answers in text.
fn edit_reply() -> Value {
    json!([
        {"tool_call": {"name": "talos.read_file", "arguments": {"path": "settings.py"}}},
        {"tool_call": {"name": "talos.edit_file", "arguments": {
            "path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"}}},
        "TIMEOUT is now 60."
    ])
}

async fn turn(
    client: &mut Client,
    session: &str,
    prompt: &str,
    decision: &'static str,
) -> (TurnOutcome, Vec<Message>) {
    client
        .turn_with(session, prompt, approve_all(decision))
        .await
}

async fn assert_all_gone(fake: &FakeServer, what: &str) {
    let pids = fake.pids();
    let survivors = wait_gone(&pids, STOPPED).await;
    assert!(
        survivors.is_empty(),
        "{what}: fake llama-server processes {survivors:?} of {pids:?} survive"
    );
}

#[tokio::test]
async fn the_daemon_launches_the_server_owns_it_carries_an_edit_and_stops_it() {
    let fake = FakeServer::new(json!({"reply": edit_reply()}));
    let template = fake.dir.path().join("template.jinja");
    std::fs::write(&template, "{{ messages }}").unwrap();
    let mut config = fake.config(FAKE);
    config.chat_template_file = Some(template.clone());
    // Launch options people use on real hardware are passed through (issue 25).
    config.extra =
        "  gpu_layers: 12\n  server_args: [--flash-attn, \"on\", --rpc, \"127.0.0.1:50052\"]\n"
            .into();
    let daemon = TestDaemon::start(&config.to_yaml()).await;
    let mut client = daemon.client().await;

    let ready = wait_for_state(&mut client, "ready", START).await.last;
    let pid = fake.listener_pid().expect("the fake listens");
    let expected = ModelStatusResult {
        mode: "managed".into(),
        state: "ready".into(),
        url: format!("http://127.0.0.1:{}", fake.port),
        pid: Some(pid),
        port: Some(fake.port),
        model: Some(fake.model.to_str().unwrap().to_string()),
        restarts: 0,
        owned: true,
        last_error: None,
        name: "default".into(),
        default: true,
        models: Vec::new(),
    };
    // The one model, at the top and as the only entry of the list.
    assert_eq!(ready.models, vec![expected.clone()]);
    assert_eq!(
        ModelStatusResult {
            models: Vec::new(),
            ..ready
        },
        expected
    );
    assert!(alive(pid));
    let args = cmdline(pid);
    for (flag, value) in [
        ("-m", fake.model.to_str().unwrap()),
        ("--host", "127.0.0.1"),
        ("--port", &fake.port.to_string()),
        ("-c", "16384"),
        ("-t", "2"),
        ("--parallel", "4"),
        ("--chat-template-file", template.to_str().unwrap()),
        ("-ngl", "12"),
        ("--flash-attn", "on"),
        ("--rpc", "127.0.0.1:50052"),
    ] {
        assert_eq!(flag_value(&args, flag), Some(value), "{flag} in {args:?}");
    }
    for flag in ["--jinja", "--no-webui"] {
        assert!(args.iter().any(|a| a == flag), "{flag} in {args:?}");
    }

    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = turn(&mut client, &session, EDIT_REQUEST, "approve").await;
    assert_eq!(
        outcome.classification,
        Classification::CompletedVerified,
        "{outcome:?}"
    );
    assert_eq!(approvals(&seen).len(), 1);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    // Read and edit; the verified change needs no third call (issue 12).
    assert_eq!(fake.requests().len(), 2);

    daemon.stop().await;
    assert_all_gone(&fake, "after the daemon stopped").await;
    assert_eq!(fake.pids(), vec![pid], "one launch, no restart");
}

#[tokio::test]
async fn a_port_already_in_use_is_refused_and_the_other_server_is_left_alone() {
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let fake = FakeServer::on_port(json!({}), port);
    let daemon = TestDaemon::start(&fake.config(FAKE).to_yaml()).await;
    let mut client = daemon.client().await;

    let failed = wait_for_state(&mut client, "failed", START).await.last;
    assert!(!failed.owned, "{failed:?}");
    assert!(
        failed.last_error.as_deref().unwrap().contains(REFUSED),
        "{failed:?}"
    );

    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = turn(&mut client, &session, QUESTION, "deny").await;
    assert_eq!(outcome.status, CompletionStatus::Failed, "{outcome:?}");
    assert!(outcome.final_answer.contains(REFUSED), "{outcome:?}");
    assert!(fake.pids().is_empty(), "nothing was launched");

    daemon.stop().await;
    // The other server still accepts and reads: nothing closed or killed it. Connections the
    // daemon made to probe the port may be queued first.
    let mut dialled = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    dialled.write_all(b"ping").unwrap();
    let reached = (0..8).any(|_| {
        let (mut accepted, _) = other.accept().unwrap();
        accepted
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut got = [0u8; 4];
        accepted.read_exact(&mut got).is_ok() && &got == b"ping"
    });
    assert!(reached, "the other server still takes connections");
}

#[tokio::test]
async fn a_listener_held_by_another_process_fails_closed_and_both_processes_are_killed() {
    let fake = FakeServer::new(json!({"fork_listener": true}));
    let daemon = TestDaemon::start(&fake.config(FAKE).to_yaml()).await;
    let mut client = daemon.client().await;

    let failed = wait_for_state(&mut client, "failed", START).await.last;
    assert!(!failed.owned, "{failed:?}");
    assert!(
        failed
            .last_error
            .as_deref()
            .unwrap()
            .contains("listener ownership"),
        "{failed:?}"
    );
    let pids = fake.pids();
    assert_eq!(
        pids.len(),
        2,
        "the launched process and the listener it forked: {pids:?}"
    );
    assert_eq!(fake.listener_pid(), Some(pids[1]));
    let survivors = wait_gone(&pids, STOPPED).await;
    assert!(
        survivors.is_empty(),
        "neither the launched process nor its forked listener survives: {survivors:?}"
    );
    // Failing closed is final: no restart, and turns are refused.
    let status = model_status(&mut client).await;
    assert_eq!(status.state, "failed", "{status:?}");
    assert_eq!(fake.pids().len(), 2, "no relaunch");
    assert!(fake.requests().is_empty(), "no chat reached the impostor");
    daemon.stop().await;
}

#[tokio::test]
async fn a_turn_started_while_the_model_loads_waits_and_then_succeeds() {
    let fake =
        FakeServer::new(json!({"loading_ms": 1500, "reply": "It sets TIMEOUT and RETRIES."}));
    let daemon = TestDaemon::start(&fake.config(FAKE).to_yaml()).await;
    let mut watcher = daemon.client().await;
    let loading = wait_for_state(&mut watcher, "loading", START).await.last;
    assert!(!loading.owned, "not proven while loading: {loading:?}");

    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let started = Instant::now();
    let (outcome, _) = turn(&mut client, &session, QUESTION, "deny").await;
    assert_eq!(
        outcome.classification,
        Classification::ReadOnlyAnswered,
        "{outcome:?}: the runtime read settings.py before the first model call, so the answer rests on a read"
    );
    assert!(
        started.elapsed() > Duration::from_millis(300),
        "the turn waited for the load ({:?})",
        started.elapsed()
    );
    let ready = model_status(&mut watcher).await;
    assert_eq!((ready.state.as_str(), ready.owned), ("ready", true));
    // The runtime read settings.py itself, so the answer needs no re-prompt (issues 12, 24).
    assert_eq!(fake.requests().len(), 1);
    daemon.stop().await;
    assert_all_gone(&fake, "after the daemon stopped").await;
}

#[tokio::test]
async fn a_server_that_never_finishes_loading_fails_the_start_after_its_timeout() {
    let fake = FakeServer::new(json!({"loading_ms": 600_000}));
    let mut config = fake.config(FAKE);
    config.start_timeout_secs = 1;
    let daemon = TestDaemon::start(&config.to_yaml()).await;
    let mut client = daemon.client().await;
    let log = wait_for_state(&mut client, "failed", Duration::from_secs(60)).await;
    assert!(
        log.states.iter().any(|s| s == "loading"),
        "{:?}",
        log.states
    );
    assert!(log.last.last_error.is_some(), "{:?}", log.last);
    assert_all_gone(&fake, "after the start failed").await;
    daemon.stop().await;
}

#[tokio::test]
async fn a_crashed_server_is_restarted_with_a_new_pid_and_serves_the_next_turn() {
    // One request: the runtime read settings.py, so the answer needs no re-prompt (issue 24).
    let fake = FakeServer::new(json!({"crash_after_requests": 1, "reply": "It sets TIMEOUT."}));
    let daemon = TestDaemon::start(&fake.config(FAKE).to_yaml()).await;
    let mut client = daemon.client().await;
    let first = wait_for_state(&mut client, "ready", START).await.last;
    let first_pid = first.pid.unwrap();

    let ws = timeout_workspace();
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = turn(&mut client, &session, QUESTION, "deny").await;
    assert_eq!(
        outcome.classification,
        Classification::ReadOnlyAnswered,
        "{outcome:?}: the runtime read settings.py before the first model call, so the answer rests on a read"
    );

    let log = wait_for_status(&mut client, Duration::from_secs(30), |s| {
        s.state == "ready" && s.pid.is_some_and(|pid| pid != first_pid)
    })
    .await;
    assert!(
        log.states.iter().any(|s| s == "restarting"),
        "{:?}",
        log.states
    );
    assert!(log.last.restarts >= 1, "{:?}", log.last);
    assert!(log.last.owned);
    assert!(!alive(first_pid));

    let (again, _) = turn(&mut client, &session, QUESTION, "deny").await;
    assert_eq!(
        again.classification,
        Classification::ReadOnlyAnswered,
        "{again:?}"
    );
    daemon.stop().await;
    assert_all_gone(&fake, "after the daemon stopped").await;
}

#[tokio::test]
async fn a_server_that_always_exits_is_retried_a_bounded_number_of_times_then_fails() {
    let fake = FakeServer::new(json!({"exit_immediately": true}));
    let daemon = TestDaemon::start(&fake.config(FAKE).to_yaml()).await;
    let mut client = daemon.client().await;
    let log = wait_for_state(&mut client, "failed", Duration::from_secs(90)).await;
    assert!(
        log.states.iter().any(|s| s == "restarting"),
        "{:?}",
        log.states
    );
    assert_eq!(log.last.restarts, 5, "{:?}", log.last);
    assert!(log.last.last_error.is_some(), "{:?}", log.last);
    let launches = fake.pids().len();
    assert_eq!(launches, 6, "the first launch and 5 restarts");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.pids().len(), launches, "no launch after giving up");
    daemon.stop().await;
}

#[tokio::test]
async fn each_session_keeps_its_own_slot_with_prompt_caching_and_cached_tokens_reach_the_trace() {
    let fake = FakeServer::new(json!({
        "reply": "It sets TIMEOUT.",
        "usage": {"prompt_tokens": 120, "cached_tokens": 100, "completion_tokens": 9},
    }));
    let daemon = TestDaemon::start(&fake.config(FAKE).to_yaml()).await;
    let mut client = daemon.client().await;
    wait_for_state(&mut client, "ready", START).await;
    let ws = timeout_workspace();
    let first = client.open_session(ws.path(), "agent").await;
    let second = client.open_session(ws.path(), "agent").await;
    for session in [&first, &second, &first] {
        let (outcome, _) = turn(&mut client, session, QUESTION, "deny").await;
        assert_eq!(
            outcome.classification,
            Classification::ReadOnlyAnswered,
            "{outcome:?}: the runtime read settings.py before the first model call, so the answer rests on a read"
        );
    }

    // Each turn: one request, the runtime having read settings.py itself (issue 24).
    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    let slots: Vec<u64> = requests
        .iter()
        .map(|r| r["id_slot"].as_u64().expect("id_slot"))
        .collect();
    assert!(slots.iter().all(|slot| *slot < 4), "{slots:?}");
    assert_ne!(slots[0], slots[1], "two sessions, two slots");
    assert_eq!(slots[0], slots[2], "a session keeps its slot");
    assert!(
        requests.iter().all(|r| r["cache_prompt"] == true),
        "{requests:?}"
    );

    let traces = daemon.traces();
    assert_eq!(traces.len(), 3);
    for trace in &traces {
        let call = &trace.model_calls[0];
        assert_eq!(
            (
                call.prompt_tokens,
                call.completion_tokens,
                call.cached_tokens
            ),
            (Some(120), Some(9), Some(100)),
            "{call:?}"
        );
    }
    client.call("daemon/shutdown", json!({})).await;
    daemon.stop().await;
    assert_all_gone(&fake, "after daemon/shutdown").await;
}

/// The real `talosd` binary in the foreground.
struct Foreground {
    child: Child,
}

impl Drop for Foreground {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_to_the_real_daemon_stops_the_server_it_launched() {
    let fake = FakeServer::new(json!({}));
    let home = tempfile::Builder::new()
        .prefix("tm")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(home.path().join("config.yaml"), fake.config(FAKE).to_yaml()).unwrap();
    let socket = home.path().join("run").join("talosd.sock");
    let mut daemon = Foreground {
        child: Command::new(TALOSD)
            .arg("--foreground")
            .env("TALOS_HOME", home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    };
    wait_for_socket(&socket).await;
    let mut client = Client::connect(&socket).await;
    let ready = wait_for_state(&mut client, "ready", START).await.last;
    let pid = ready.pid.unwrap();
    assert!(alive(pid));

    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(daemon.child.id().to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + STOPPED + Duration::from_secs(5);
    while daemon.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "talosd exits on SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_all_gone(&fake, "after SIGTERM to talosd").await;
}

async fn wait_for_socket(socket: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(socket).is_err() {
        assert!(Instant::now() < deadline, "talosd did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_left_by_a_killed_daemon_of_the_same_home_is_reclaimed_and_no_one_elses_is() {
    let fake = FakeServer::new(json!({"parent_grace_ms": 60_000}));
    let home = tempfile::Builder::new()
        .prefix("tm")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(home.path().join("config.yaml"), fake.config(FAKE).to_yaml()).unwrap();
    let socket = home.path().join("run").join("talosd.sock");
    let start = || Foreground {
        child: Command::new(TALOSD)
            .arg("--foreground")
            .env("TALOS_HOME", home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    };
    let mut first = start();
    wait_for_socket(&socket).await;
    let mut client = Client::connect(&socket).await;
    let orphan = wait_for_state(&mut client, "ready", START).await.last;
    let orphan = orphan.pid.unwrap();
    // SIGKILL: the daemon cannot stop its server, which keeps the port.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert!(alive(orphan), "the orphan outlives a SIGKILLed daemon");
    let mut second = start();
    wait_for_socket(&socket).await;
    let mut client = Client::connect(&socket).await;
    let ready = wait_for_state(&mut client, "ready", START).await.last;
    assert_ne!(ready.pid, Some(orphan), "a new server was launched");
    assert!(!alive(orphan), "the orphan this home launched was stopped");
    // SIGTERM, so the second daemon stops its server too (a SIGKILL would leave it).
    let stopped = Command::new("kill")
        .arg("-TERM")
        .arg(second.child.id().to_string())
        .status()
        .unwrap();
    assert!(stopped.success());
    let _ = second.child.wait();
    assert_all_gone(&fake, "after SIGTERM to the second talosd").await;
}

/// Proves the managed llama-server does not inherit the API key variables of talosd's
/// environment: `LLAMA_API_KEY` (llama-server would take it as its own key) and the variables
/// `api_key_env` names, its own and another model's; the launched process's
/// `/proc/PID/environ` holds none of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managed_server_does_not_inherit_the_api_key_variables() {
    let fake = FakeServer::new(json!({}));
    let home = tempfile::Builder::new()
        .prefix("tm")
        .tempdir_in("/tmp")
        .unwrap();
    let config = format!(
        "model:\n  default: a\nmodels:\n  a:\n    server: {}\n    path: {}\n    port: {}\n    threads: 1\n    api_key_env: TALOS_TEST_MODEL_KEY\n  b:\n    mode: connect_only\n    url: https://127.0.0.1:9\n    api_key_env: TALOS_TEST_OTHER_KEY\n",
        json!(FAKE),
        json!(fake.model),
        fake.port
    );
    std::fs::write(home.path().join("config.yaml"), config).unwrap();
    let socket = home.path().join("run").join("talosd.sock");
    let mut daemon = Foreground {
        child: Command::new(TALOSD)
            .arg("--foreground")
            .env("TALOS_HOME", home.path())
            .env("LLAMA_API_KEY", "llama-secret-4711")
            .env("TALOS_TEST_MODEL_KEY", "talos-secret-4712")
            .env("TALOS_TEST_OTHER_KEY", "other-secret-4713")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    };
    wait_for_socket(&socket).await;
    let mut client = Client::connect(&socket).await;
    let ready = wait_for_state(&mut client, "ready", START).await.last;
    let pid = ready.pid.unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(environ.contains("TALOS_HOME="), "the environment was read");
    for secret in [
        "LLAMA_API_KEY",
        "llama-secret",
        "TALOS_TEST_MODEL_KEY",
        "talos-secret",
        "TALOS_TEST_OTHER_KEY",
        "other-secret",
    ] {
        assert!(!environ.contains(secret), "{secret} reached llama-server");
    }
    let stopped = Command::new("kill")
        .arg("-TERM")
        .arg(daemon.child.id().to_string())
        .status()
        .unwrap();
    assert!(stopped.success());
    let _ = daemon.child.wait();
    assert_all_gone(&fake, "after SIGTERM to talosd").await;
}

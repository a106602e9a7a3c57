//! The load case of issue 11, through the real socket against the fake model: many sessions on
//! one connection and on many connections, every turn an edit whose approval the client answers
//! at once. Every turn's events are checked as the protocol promises them (`seq` from 1, no gap
//! or repeat, the `outcome` event last and equal to the response), the daemon's traces are
//! counted against the turns that ran (one each, naming its turn), and every workspace file ends
//! with the last edit's content exactly once. The driver and its checks are
//! `talos_tests::load`, shared with `talos-bench load`, which runs the big numbers.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_protocol::{Classification, TurnOutcome};
use talos_tests::fake_llama::FakeLlama;
use talos_tests::harness::{TestDaemon, decode, timeout_workspace};
use talos_tests::load::{self, LoadShape};

/// Runs `shape` on a fresh daemon and fails with every broken promise: a turn's events, its
/// response, its trace, or a workspace file.
async fn check(shape: LoadShape) {
    let llama = FakeLlama::start(true, load::edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let dirs: Vec<_> = (0..shape.sessions()).map(|_| timeout_workspace()).collect();
    let workspaces: Vec<PathBuf> = dirs.iter().map(|d| d.path().to_path_buf()).collect();
    let started = Instant::now();
    let run = tokio::time::timeout(
        Duration::from_secs(120),
        load::run(&daemon.socket, shape, &workspaces, Duration::from_secs(60)),
    )
    .await
    .expect("every turn of the load finishes");
    let mut violations = run.violations.clone();
    violations.extend(load::check_traces(daemon.home.path(), &run.turns));
    violations.extend(load::check_workspaces(&workspaces, shape.turns_per_session));
    eprintln!(
        "{shape:?}: {} turns in {:.2?} (p50 {:.1?}, p99 {:.1?}), {} violations",
        run.turns.len(),
        started.elapsed(),
        run.percentile(50),
        run.percentile(99),
        violations.len()
    );
    assert!(
        violations.is_empty(),
        "{} broken promises under {shape:?}, the first ones:\n{}",
        violations.len(),
        violations[..violations.len().min(20)].join("\n")
    );
    daemon.stop().await;
}

/// Proves 48 sessions on one connection, two edit turns each with approvals answered at once,
/// keep every promise: each event's seq, the outcome, one trace per turn, the files' content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_on_one_connection_keep_every_turns_promises() {
    check(LoadShape {
        connections: 1,
        sessions_per_connection: 48,
        turns_per_session: 2,
    })
    .await;
}

/// Proves 16 connections with 3 sessions each, two edit turns per session with approvals
/// answered at once, keep every promise: each event's seq, the outcome, one trace per turn,
/// the files' content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_connections_with_sessions_each_keep_every_turns_promises() {
    check(LoadShape {
        connections: 16,
        sessions_per_connection: 3,
        turns_per_session: 2,
    })
    .await;
}

/// Proves a client can answer the approvals of the turns that hold a connection's 64 request
/// slots even when more than the 1,024 queued requests wait behind them: 64 edit turns, then
/// 1,100 `daemon/status` requests, then the answers; every turn completes approved (not denied
/// by the approval timeout) and every request gets a response, a result or an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_read_behind_a_full_request_queue() {
    const TURNS: usize = 64;
    const QUEUED: usize = 1_100;
    let llama = FakeLlama::start(true, load::edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let dirs: Vec<_> = (0..TURNS).map(|_| timeout_workspace()).collect();
    let mut sessions = Vec::new();
    for ws in &dirs {
        sessions.push(client.open_session(ws.path(), "agent").await);
    }
    let mut lines = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        let params = json!({"sessionId": session, "prompt": load::edit_request(1)});
        lines.push(
            json!({"jsonrpc": "2.0", "id": 10_000 + i, "method": "turn/start", "params": params})
                .to_string(),
        );
    }
    for i in 0..QUEUED {
        lines.push(
            json!({"jsonrpc": "2.0", "id": 20_000 + i, "method": "daemon/status"}).to_string(),
        );
    }
    client.send_line(&lines.join("\n")).await;
    let run = async {
        let (mut outcomes, mut answered) = (Vec::new(), 0);
        while outcomes.len() < TURNS || answered < QUEUED {
            let m = client
                .read()
                .await
                .expect("the daemon keeps the connection open");
            match (m.method.as_deref(), m.id.as_ref().and_then(Value::as_u64)) {
                (Some("approval/request"), Some(id)) => {
                    let answer =
                        json!({"jsonrpc": "2.0", "id": id, "result": {"decision": "approve"}});
                    client.send_line(&answer.to_string()).await;
                }
                (None, Some(id)) if id >= 20_000 => answered += 1,
                (None, Some(_)) => {
                    outcomes.push(decode::<TurnOutcome>("turn/start", m.result.unwrap()))
                }
                _ => {}
            }
        }
        outcomes
    };
    // Well under the 30 s approval timeout: an answer that is read is acted on at once.
    let outcomes = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the approvals' answers are read although 1,100 requests wait for a slot");
    let classes: Vec<_> = outcomes.iter().map(|o| o.classification).collect();
    assert!(
        classes
            .iter()
            .all(|c| *c == Classification::CompletedVerified),
        "{classes:?}"
    );
    daemon.stop().await;
}

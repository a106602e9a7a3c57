//! Reliability through the real socket (issue 11's first two defects): many turns on one
//! connection whose approvals are answered at once all finish (answers never wait behind the
//! connection's request limit), and the first answer to an approval is final.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talos_protocol::{Classification, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, tool_results};
use talos_tests::harness::{TestDaemon, decode, timeout_workspace};

/// A model that reads, edits and answers, by how many tool results the request carries, so
/// any number of turns can run against it at once.
fn edit_model() -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    Arc::new(|request: &Value| match tool_results(request) {
        0 => read_call("settings.py"),
        1 => Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                .into(),
        )]),
        _ => Reply::Text("Done.".into()),
    })
}

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

/// Proves 72 turns on one connection (more than its 64 request slots), each waiting on an
/// approval the client answers at once, all complete, and `daemon/status` answers meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_turns_on_one_connection_with_approvals_answered_at_once_all_complete() {
    const TURNS: usize = 72;
    let llama = FakeLlama::start(true, edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let workspaces: Vec<_> = (0..TURNS).map(|_| timeout_workspace()).collect();
    let mut sessions = Vec::new();
    for ws in &workspaces {
        sessions.push(client.open_session(ws.path(), "agent").await);
    }
    for (i, session) in sessions.iter().enumerate() {
        let line = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}});
        client.send_line(&line.to_string()).await;
    }
    client
        .send_line(&json!({"jsonrpc": "2.0", "id": 5, "method": "daemon/status"}).to_string())
        .await;
    let run = async {
        let (mut outcomes, mut status) = (Vec::new(), false);
        while outcomes.len() < TURNS || !status {
            let m = client
                .read()
                .await
                .expect("the daemon keeps the connection open");
            match (m.method.as_deref(), m.id.as_ref()) {
                (Some("approval/request"), Some(id)) => {
                    let answer =
                        json!({"jsonrpc": "2.0", "id": id, "result": {"decision": "approve"}});
                    client.send_line(&answer.to_string()).await;
                }
                (None, Some(id)) if *id == json!(5) => status = true,
                (None, Some(_)) => {
                    outcomes.push(decode::<TurnOutcome>("turn/start", m.result.unwrap()));
                }
                _ => {}
            }
        }
        outcomes
    };
    let outcomes = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("every turn finishes: answers must not wait behind the request limit");
    assert!(
        outcomes
            .iter()
            .all(|o| o.classification == Classification::CompletedVerified),
        "{:?}",
        outcomes
            .iter()
            .map(|o| o.classification)
            .collect::<Vec<_>>()
    );
    for ws in &workspaces {
        let text = std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
        assert!(text.starts_with("TIMEOUT = 60"), "{text}");
    }
    daemon.stop().await;
}

/// Proves the first answer to an approval is final: a deny followed at once by an approve
/// (as a second response, and through `approval/respond`) denies, and the late answer through
/// `approval/respond` is refused with -32004.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_answer_to_an_approval_is_final() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    for round in 0..20 {
        let ws = timeout_workspace();
        let session = client.open_session(ws.path(), "agent").await;
        let start = json!({"jsonrpc": "2.0", "id": 100, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}});
        client.send_line(&start.to_string()).await;
        let (mut outcome, mut late) = (None, None);
        while outcome.is_none() || late.is_none() {
            let m = client.read().await.expect("the daemon answers");
            match (m.method.as_deref(), m.id.clone()) {
                (Some("approval/request"), Some(id)) => {
                    let request_id = m.params.as_ref().unwrap()["requestId"].clone();
                    let deny = json!({"jsonrpc": "2.0", "id": id, "result": {"decision": "deny"}});
                    let again =
                        json!({"jsonrpc": "2.0", "id": id, "result": {"decision": "approve"}});
                    let respond = json!({"jsonrpc": "2.0", "id": 101, "method": "approval/respond", "params": {"requestId": request_id, "decision": "approve"}});
                    let lines = format!("{deny}\n{again}\n{respond}");
                    client.send_line(&lines).await;
                }
                (None, Some(id)) if id == json!(100) => {
                    outcome = Some(decode::<TurnOutcome>("turn/start", m.result.unwrap()));
                }
                (None, Some(id)) if id == json!(101) => late = Some(m),
                _ => {}
            }
        }
        let outcome = outcome.unwrap();
        assert_eq!(
            outcome.classification,
            Classification::BlockedByApproval,
            "round {round}"
        );
        let late = late.unwrap();
        assert_eq!(late.error.map(|e| e.code), Some(-32004), "round {round}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            "TIMEOUT = 30\nRETRIES = 3\n",
            "round {round}"
        );
    }
    daemon.stop().await;
}

/// Proves a client that disconnects with 72 turns waiting on approvals (and more queued
/// behind the request limit) releases every session at once, well before the 30 s approval
/// timeout, and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnect_releases_every_session_it_held() {
    const TURNS: usize = 72;
    let llama = FakeLlama::start(true, edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let workspaces: Vec<_> = (0..TURNS).map(|_| timeout_workspace()).collect();
    {
        let mut client = daemon.client().await;
        let mut sessions = Vec::new();
        for ws in &workspaces {
            sessions.push(client.open_session(ws.path(), "agent").await);
        }
        for (i, session) in sessions.iter().enumerate() {
            let line = json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}});
            client.send_line(&line.to_string()).await;
        }
        // Every turn that got a slot is now waiting on its approval, with nothing more to
        // write: only reading the end of the connection can release them.
        let mut asked = 0;
        while asked < 64 {
            let m = client.read().await.expect("the daemon answers");
            if m.method.as_deref() == Some("approval/request") {
                asked += 1;
            }
        }
    }
    let mut observer = daemon.client().await;
    let released = async {
        loop {
            let list: talos_protocol::SessionListResult =
                observer.request("session/list", json!({})).await;
            if list.sessions.iter().all(|s| !s.busy) {
                return list.sessions.len();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let count = tokio::time::timeout(Duration::from_secs(10), released)
        .await
        .expect("every session is released long before the approval timeout");
    assert_eq!(count, TURNS);
    for ws in &workspaces {
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            "TIMEOUT = 30\nRETRIES = 3\n"
        );
    }
    daemon.stop().await;
}

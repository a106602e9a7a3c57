//! Two sessions changing one file at once (issue 26, defect 3): both people approve a diff
//! against the same original, and both approvals are answered at the same instant, so both
//! writes race. Check-and-write is serialized per file across sessions: one change lands and
//! the other turn says the file changed since its change was approved and writes nothing; a
//! turn never reports COMPLETED_VERIFIED for a change that is not in the file.
#![allow(clippy::print_stdout)] // the run says how many rounds ended in a conflict

use std::sync::{Arc, Barrier};

use serde_json::{Value, json};
use talos_protocol::{Classification, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply};
use talos_tests::harness::{Answer, TestDaemon, timeout_workspace};

/// Rounds in the README's test command; `TALOS_RACE_ROUNDS=N` for the long loop (the issue's
/// 100 races: `TALOS_RACE_ROUNDS=100 cargo test -p talos-tests --test daemon lost_update`).
fn rounds() -> usize {
    std::env::var("TALOS_RACE_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10)
}
const ORIGINAL: &str = "TIMEOUT = 30\nRETRIES = 3\n";

/// Edits the line the request names; answers in text once the edit's result is in.
fn model(request: &Value) -> Reply {
    let text = request.to_string();
    if text.contains("\"role\":\"tool\"") {
        return Reply::Text("Done.".into());
    }
    let (old, new) = if text.contains("change TIMEOUT") {
        ("TIMEOUT = 30", "TIMEOUT = 60")
    } else {
        ("RETRIES = 3", "RETRIES = 5")
    };
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": "settings.py", "old_string": old, "new_string": new}).to_string(),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sessions_never_both_verify_when_one_change_is_gone() {
    let llama = FakeLlama::start(true, Arc::new(model)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut refused = 0;
    for round in 0..rounds() {
        let ws = timeout_workspace();
        std::fs::write(ws.path().join("settings.py"), ORIGINAL).unwrap();
        let both_asked = Arc::new(Barrier::new(2));
        let mut turns = Vec::new();
        for prompt in [
            "In settings.py, change TIMEOUT from 30 to 60.",
            "In settings.py, change RETRIES from 3 to 5.",
        ] {
            let mut client = daemon.client().await;
            let session = client.open_session(ws.path(), "agent").await;
            let barrier = both_asked.clone();
            turns.push(tokio::spawn(async move {
                let (outcome, _) = client
                    .turn_with(&session, prompt, move |m| {
                        if m.method.as_deref() == Some("approval/request") {
                            // Both diffs are on screen before either is approved.
                            barrier.wait();
                            Answer::Result(json!({"decision": "approve"}))
                        } else {
                            Answer::Ignore
                        }
                    })
                    .await;
                outcome
            }));
        }
        let outcomes: Vec<TurnOutcome> = futures_join(turns).await;
        let file = std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
        for (outcome, line) in outcomes.iter().zip(["TIMEOUT = 60", "RETRIES = 5"]) {
            if outcome.classification == Classification::CompletedVerified {
                assert!(
                    file.contains(line),
                    "round {round}: verified, but {line} is not in the file:\n{file}\n{outcome:?}"
                );
            } else {
                refused += 1;
                assert!(
                    outcome.final_answer.contains(
                        "settings.py changed since the change was approved; nothing written"
                    ),
                    "round {round}: {outcome:?}"
                );
            }
        }
    }
    println!(
        "{refused} of {} rounds refused the second write as a conflict",
        rounds()
    );
}

async fn futures_join(handles: Vec<tokio::task::JoinHandle<TurnOutcome>>) -> Vec<TurnOutcome> {
    let mut outcomes = Vec::new();
    for handle in handles {
        outcomes.push(handle.await.unwrap());
    }
    outcomes
}

//! Follow-ups resolve against the session's records, through the real daemon and the fake
//! model: after "In settings.py, change TIMEOUT from 30 to 60.", "Now change it back." is the
//! edit of settings.py from 60 back to 30 (the constraint offers only that file and that
//! replacement; a proposal for a path read from punctuation is refused), and "What did you
//! change in the last two turns?" is answered from the records of both turns without a model
//! call.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use talos_protocol::Classification;
use talos_tests::fake_llama::{FakeLlama, Reply, Script, last_user};
use talos_tests::harness::{TestDaemon, approvals, approve_all, timeout_workspace};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit(path: &str, old: &str, new: &str) -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": path, "old_string": old, "new_string": new}).to_string(),
    )])
}

/// The first turn's edit; on the revert, first the measured misreading (an edit of a file
/// named `,`), then the edit back.
fn model() -> Script {
    let reverts = Arc::new(AtomicUsize::new(0));
    Arc::new(move |request: &Value| {
        if last_user(request).contains("change it back") {
            match reverts.fetch_add(1, Ordering::SeqCst) {
                0 => edit(",", "TIMEOUT = 60", "TIMEOUT = 30"),
                _ => edit("settings.py", "TIMEOUT = 60", "TIMEOUT = 30"),
            }
        } else {
            edit("settings.py", "TIMEOUT = 30", "TIMEOUT = 60")
        }
    })
}

/// Every `enum` or `const` string under `key` anywhere in the schema.
fn choices(schema: &Value, key: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    let listed = v["enum"].as_array().into_iter().flatten();
                    out.extend(listed.filter_map(|e| e.as_str()).map(str::to_string));
                    out.extend(v["const"].as_str().map(str::to_string));
                }
                choices(v, key, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| choices(v, key, out)),
        _ => {}
    }
}

/// Proves "change it back" after the TIMEOUT change proposes and pins settings.py 60 -> 30,
/// never a path like `,`, and that the changes of both turns are then answered from the records.
#[tokio::test]
async fn change_it_back_is_the_recorded_change_the_other_way_round() {
    let llama = FakeLlama::start(true, model()).await;
    let config = format!(
        "model:\n  mode: connect_only\n  url: {}\n  constrain: strict\ntools:\n  native_calling: true\napproval:\n  timeout_secs: 30\n",
        llama.url
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = timeout_workspace();
    let settings = || std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;

    let first = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(first.classification, Classification::CompletedVerified);
    assert_eq!(settings(), "TIMEOUT = 60\nRETRIES = 3\n");
    let before_revert = llama.requests().len();

    let (back, seen) = client
        .turn_with(&session, "Now change it back.", approve_all("approve"))
        .await;
    assert_eq!(settings(), "TIMEOUT = 30\nRETRIES = 3\n", "{back:?}");
    assert_eq!(
        back.classification,
        Classification::CompletedVerified,
        "{back:?}"
    );
    let asked: Vec<Option<String>> = approvals(&seen).iter().map(|a| a.target.clone()).collect();
    assert_eq!(
        asked,
        vec![Some("settings.py".to_string())],
        "only settings.py is asked"
    );
    assert!(!ws.path().join(",").exists(), "no file named `,`");
    let requests = llama.requests();
    let revert = &requests[before_revert];
    let schema = &revert["response_format"]["json_schema"]["schema"];
    let (mut paths, mut olds, mut news) = (Vec::new(), Vec::new(), Vec::new());
    choices(schema, "path", &mut paths);
    choices(schema, "old_string", &mut olds);
    choices(schema, "new_string", &mut news);
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p == "settings.py"),
        "{paths:?}"
    );
    assert_eq!(olds, vec!["TIMEOUT = 60".to_string()], "{schema}");
    assert_eq!(news, vec!["TIMEOUT = 30".to_string()], "{schema}");
    let trace = daemon
        .traces()
        .into_iter()
        .find(|t| t.trace_id == back.trace_id)
        .unwrap();
    let stages: Vec<(&str, &str)> = trace
        .tool_calls
        .iter()
        .filter(|c| c.source != "runtime")
        .map(|c| (c.path_hint.as_deref().unwrap_or(""), c.stage.as_str()))
        .collect();
    assert_eq!(
        stages,
        vec![(",", "rejected"), ("settings.py", "executed")],
        "the punctuation path is refused before approval"
    );

    let calls = llama.requests().len();
    let changes = client
        .turn(
            &session,
            "What did you change in the last two turns?",
            "deny",
        )
        .await;
    assert_eq!(llama.requests().len(), calls, "answered without the model");
    assert_eq!(changes.classification, Classification::ReadOnlyAnswered);
    let answer = &changes.final_answer;
    assert!(answer.contains("the last 2 turns"), "{answer}");
    assert!(answer.contains(&format!("\"{EDIT_REQUEST}\"")), "{answer}");
    assert!(answer.contains("settings.py (30 -> 60)"), "{answer}");
    assert!(answer.contains("\"Now change it back.\""), "{answer}");
    assert!(answer.contains("settings.py (60 -> 30)"), "{answer}");
    daemon.stop().await;
}

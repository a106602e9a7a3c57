//! Issue 34, item 2, in an editor: `talos acp` shows the reading question of an uncertain
//! request as a `session/request_permission` with two options, "Change config.py" and "Only
//! answer a question", before the model is called; choosing the change makes the change (with
//! its own approval), and a permission the editor cancels is no choice: the prompt ends with
//! CONTRACT_AMBIGUOUS and nothing is written.

use serde_json::{Value, json};
use talos_tests::acp_bridge::{Bridge, home_with, stop};
use talos_tests::fake_llama::{FakeLlama, Reply, call, scripted};
use talos_tests::harness::TestDaemon;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

/// As in `tests/turns/reading.rs`: the first the daemon asks about is the one used.
const HEDGED: [&str; 3] = [
    "I think DEBUG in config.py should change",
    "The DEBUG setting in config.py needs a change",
    "Maybe change DEBUG in config.py",
];

fn prompt(bridge: &mut Bridge, id: u64, sid: &str, text: &str) {
    bridge.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {
            "sessionId": sid, "prompt": [{"type": "text", "text": text}]
        }}),
    );
}

/// The next permission request, or `None` when the prompt `id` ends first (answering any
/// other permission with a reject).
fn reading_question(bridge: &mut Bridge, id: u64) -> Option<Value> {
    loop {
        let message = bridge.until(|m| {
            m["method"] == "session/request_permission"
                || (m["id"] == id && m.get("method").is_none())
        });
        // The prompt's own response (no method) ends it without a question.
        message.get("method")?;
        if message["params"]["toolCall"]["title"] == "Change config.py?" {
            return Some(message);
        }
        bridge.answer_permission(&message, "reject_once");
    }
}

/// Proves the editor is asked with both readings as options, "change" makes the change, and a
/// cancelled permission is no choice (CONTRACT_AMBIGUOUS, nothing written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_chooses_the_reading() {
    let edit = call(
        true,
        "talos.edit_file",
        json!({"path": "config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}),
    );
    let llama = FakeLlama::start(true, scripted(vec![edit, Reply::Text("Done.".into())])).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("config.py"), "DEBUG = True\n").unwrap();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    let file = ws_path.join("config.py");
    tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let new = bridge.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
        let mut id = 3;
        let mut found = None;
        for request in HEDGED {
            prompt(&mut bridge, id, &sid, request);
            if let Some(ask) = reading_question(&mut bridge, id) {
                found = Some((request, ask));
                break;
            }
            id += 1;
        }
        let (request, ask) = found.expect("an uncertain request is asked about");
        assert_eq!(
            ask["params"]["options"],
            json!([
                {"optionId": "change", "name": "Change config.py", "kind": "allow_once"},
                {"optionId": "question", "name": "Only answer a question", "kind": "reject_once"}
            ]),
            "{ask}"
        );
        std::fs::write(&file, "DEBUG = True\n").unwrap();
        bridge.answer_permission(&ask, "change");
        let edit = bridge.until(|m| m["method"] == "session/request_permission");
        assert_eq!(
            edit["params"]["toolCall"]["content"][0]["type"], "diff",
            "{edit}"
        );
        bridge.answer_permission(&edit, "allow_once");
        let done = bridge.until(|m| m["id"] == id && m.get("method").is_none());
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "DEBUG = False\n");

        std::fs::write(&file, "DEBUG = True\n").unwrap();
        id += 1;
        prompt(&mut bridge, id, &sid, request);
        let ask = reading_question(&mut bridge, id).expect("asked again");
        bridge.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
            "outcome": {"outcome": "cancelled"}
        }}));
        let done = bridge.until(|m| m["id"] == id && m.get("method").is_none());
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        let said: String = bridge
            .updates()
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str().map(str::to_string))
            .collect();
        assert!(said.contains("CONTRACT_AMBIGUOUS"), "{said}");
        assert!(
            said.contains("or only answer a question about it; say which"),
            "{said}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "DEBUG = True\n");
        bridge.finish();
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
}

//! ACP conformance found by ACP's own SDK and schema (issue 29, item 6), through the real
//! `talos acp` against a daemon and the fake llama server: a session the bridge does not know
//! is ACP's "Resource not found" (`-32002`, the `sessionId` in `data`), for a prompt and for a
//! load; a call that waits for the person's approval is announced `pending` and turns
//! `in_progress` only once approved; and the plan never stays `in_progress` after a turn that
//! was denied or cancelled.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use talos_tests::acp_bridge::{Bridge, home_with, stop};
use talos_tests::fake_llama::{FakeLlama, Reply, after_tool_result, read_call};
use talos_tests::harness::{TestDaemon, timeout_workspace};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";

/// Reads settings.py, then proposes the edit; "wait forever" hangs the stream.
fn editing_model() -> talos_tests::fake_llama::Script {
    Arc::new(|request: &Value| {
        let text = request.to_string();
        if text.contains("wait forever") {
            return Reply::Hang;
        }
        if !after_tool_result(request) {
            return read_call("settings.py");
        }
        Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"})
                .to_string(),
        )])
    })
}

fn open(bridge: &mut Bridge, ws: &Path) -> String {
    let init = bridge.call(1, "initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let new = bridge.call(2, "session/new", json!({"cwd": ws, "mcpServers": []}));
    new["result"]["sessionId"].as_str().unwrap().to_string()
}

fn prompt(bridge: &mut Bridge, id: u64, sid: &str, text: &str) {
    bridge.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {
            "sessionId": sid, "prompt": [{"type": "text", "text": text}]
        }}),
    );
}

/// The status of a `tool_call` or `tool_call_update` as ACP reads it: absent means `pending`.
fn status(update: &Value) -> String {
    update["status"].as_str().unwrap_or("pending").to_string()
}

/// The statuses of the last `plan` update, or `None` when no plan was sent.
fn last_plan(updates: &[Value]) -> Option<Vec<String>> {
    let plan = updates
        .iter()
        .rev()
        .find(|u| u["sessionUpdate"] == "plan")?;
    Some(
        plan["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["status"].as_str().unwrap().to_string())
            .collect(),
    )
}

/// Proves a prompt and a load naming a session nobody has are answered `-32002` with the
/// `sessionId` in `data`, as ACP's `Error::session_not_found` builds it (it was `-32602`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_session_is_resource_not_found_with_its_id() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let prompt = bridge.call(
            2,
            "session/prompt",
            json!({
                "sessionId": "ses-nope", "prompt": [{"type": "text", "text": "hi"}]
            }),
        );
        assert_eq!(prompt["error"]["code"], -32002, "{prompt}");
        assert_eq!(
            prompt["error"]["data"],
            json!({"sessionId": "ses-nope"}),
            "{prompt}"
        );
        let unknown = "ses-00000000000000000000000000000000";
        let load = bridge.call(
            3,
            "session/load",
            json!({
                "sessionId": unknown, "cwd": ws_path, "mcpServers": []
            }),
        );
        assert_eq!(load["error"]["code"], -32002, "{load}");
        assert_eq!(
            load["error"]["data"],
            json!({"sessionId": unknown}),
            "{load}"
        );
        let mode = bridge.call(
            4,
            "session/set_mode",
            json!({"sessionId": "ses-nope", "modeId": "ask"}),
        );
        assert_eq!(mode["error"]["code"], -32002, "{mode}");
        bridge.finish();
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
}

/// Proves the edit that waits for approval reaches the editor as a `pending` tool call before
/// the permission request, turns `in_progress` only after the person allowed it, and ends
/// `completed`; the plan ends with no step in progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_for_approval_is_pending_until_it_is_allowed() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    let bridge = tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        let sid = open(&mut bridge, &ws_path);
        prompt(&mut bridge, 3, &sid, EDIT);
        let ask = bridge.until(|m| m["method"] == "session/request_permission");
        let call_id = ask["params"]["toolCall"]["toolCallId"]
            .as_str()
            .unwrap()
            .to_string();
        let announced: Vec<Value> = bridge
            .updates()
            .into_iter()
            .filter(|u| u["toolCallId"] == call_id.as_str())
            .collect();
        assert_eq!(
            announced.len(),
            1,
            "announced once before the request: {announced:?}"
        );
        assert_eq!(announced[0]["sessionUpdate"], "tool_call");
        assert_eq!(status(&announced[0]), "pending", "{:?}", announced[0]);
        assert_eq!(status(&ask["params"]["toolCall"]), "pending", "{ask}");
        bridge.answer_permission(&ask, "allow_once");
        let done = bridge.until(|m| m["id"] == 3);
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
        let after: Vec<String> = bridge
            .updates()
            .iter()
            .filter(|u| u["toolCallId"] == call_id.as_str())
            .map(status)
            .collect();
        assert_eq!(after, ["pending", "in_progress", "completed"], "{after:?}");
        bridge
    })
    .await
    .unwrap();
    let plan = last_plan(&bridge.updates()).expect("the turn sent a plan");
    assert!(plan.iter().all(|s| s == "completed"), "{plan:?}");
    bridge.finish();
    stop(TALOS, home.path());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
}

/// Proves a denied edit and a cancelled prompt leave no plan step `in_progress`: the last
/// plan update names how each unfinished step ended (it stayed "in progress" before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_is_marked_as_it_ended_after_a_deny_and_a_cancel() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    let (denied, cancelled) = tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        let sid = open(&mut bridge, &ws_path);
        prompt(&mut bridge, 3, &sid, EDIT);
        let ask = bridge.until(|m| m["method"] == "session/request_permission");
        bridge.answer_permission(&ask, "reject_once");
        bridge.until(|m| m["id"] == 3);
        let denied = bridge.updates();
        let mark = bridge.seen.len();
        prompt(
            &mut bridge,
            4,
            &sid,
            "In settings.py, change RETRIES from 3 to 5. wait forever",
        );
        bridge.until(|m| {
            m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == "plan"
        });
        bridge.send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}),
        );
        let done = bridge.until(|m| m["id"] == 4);
        assert_eq!(done["result"]["stopReason"], "cancelled", "{done}");
        let cancelled: Vec<Value> = bridge.seen[mark..]
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect();
        bridge.finish();
        (denied, cancelled)
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    for (what, updates) in [("denied", &denied), ("cancelled", &cancelled)] {
        let plan = last_plan(updates).unwrap_or_else(|| panic!("{what}: no plan sent"));
        assert!(!plan.iter().any(|s| s == "in_progress"), "{what}: {plan:?}");
        let entries = updates
            .iter()
            .rev()
            .find(|u| u["sessionUpdate"] == "plan")
            .unwrap();
        assert!(
            entries["entries"]
                .to_string()
                .contains(&format!("({what})")),
            "{what}: {entries}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
}

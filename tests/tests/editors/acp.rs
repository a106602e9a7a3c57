//! `talos acp` driven by a real ACP client: `tests/acp/sdk_client.py`, written on the official
//! Python SDK (PyPI `agent-client-protocol`, installed by `packaging/get-acp-client.sh`), against
//! the fake llama server. Initialize, a new session, a governed edit approved, one rejected, a
//! cancel while the model's stream hangs, ask mode refusing a change, resources as pins,
//! malformed input answered with errors while the bridge stays up, and `session/load` replaying
//! the history in a second bridge. Plus raw-line checks that need no SDK: a client that leaves
//! in the middle of a permission request writes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use talos_tests::acp_bridge::{Bridge, home_with, stop};
use talos_tests::fake_llama::{FakeLlama, Reply, after_tool_result, read_call};
use talos_tests::harness::{TestDaemon, timeout_workspace};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

/// The text of the request's last user message that is the person's (not a runtime note).
fn request_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .find(|c| !c.starts_with("[Runtime:") && !c.starts_with("[tool_result:"))
        .unwrap_or_default()
        .to_string()
}

/// "change NAME from A to B" in the request, as (NAME, A, B).
fn change_of(text: &str) -> Option<(String, String, String)> {
    let words: Vec<&str> = text.trim_end_matches('.').split_whitespace().collect();
    let at = words.iter().position(|w| *w == "change")?;
    match words.get(at + 1..at + 6)? {
        [name, "from", a, "to", b] => Some((name.to_string(), a.to_string(), b.to_string())),
        _ => None,
    }
}

/// A model that edits settings.py as asked: it reads the file, then proposes the edit the
/// request names; "wait forever" hangs its stream; anything else gets a short answer.
fn editing_model() -> talos_tests::fake_llama::Script {
    Arc::new(|request: &Value| {
        let text = request_text(request);
        if text.contains("wait forever") {
            return Reply::Hang;
        }
        let last = talos_tests::fake_llama::last_tool_result(request);
        match change_of(&text) {
            Some(_) if !after_tool_result(request) => read_call("settings.py"),
            Some((name, from, to)) if last.contains(&format!("{name} = {from}")) => {
                Reply::ToolCalls(vec![(
                    "talos.edit_file".into(),
                    json!({"path": "settings.py", "old_string": format!("{name} = {from}"), "new_string": format!("{name} = {to}")}).to_string(),
                )])
            }
            _ => Reply::Text("settings.py sets TIMEOUT and RETRIES.".into()),
        }
    })
}

/// The SDK's python, installed on first use (the script is idempotent; CI runs it first).
fn sdk_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(root.join("packaging/get-acp-client.sh"))
        .output()
        .expect("packaging/get-acp-client.sh runs");
    assert!(
        out.status.success(),
        "installing the ACP SDK failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
}

/// Proves an editor built on the official ACP SDK can use Talos through `talos acp`: every
/// step of `tests/acp/sdk_client.py` passes, and the disk shows only the approved edit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdk_client_drives_talos_acp() {
    let python = tokio::task::spawn_blocking(sdk_python).await.unwrap();
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("acp/sdk_client.py");
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .env("TALOS_BIN", TALOS)
            .env("TALOS_HOME", &home_path)
            .env("TALOS_DAEMON", TALOSD)
            .env("WORKSPACE", ws_path.canonicalize().unwrap())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{said}");
    assert!(out.status.success(), "{said}");
    assert!(said.contains("ACP SDK client: all steps passed"), "{said}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n",
        "only the approved edit was written"
    );
    let sent: Vec<String> = llama.requests().iter().map(Value::to_string).collect();
    assert!(
        sent.iter()
            .any(|r| r.contains("[Pinned file: settings.py. Untrusted")),
        "the resource link became a pin framed as untrusted reference data"
    );
    assert!(
        !sent.iter().any(|r| r.contains("root:x:0:0")),
        "a resource outside the workspace never reaches the model"
    );
}

/// Proves an editor that goes away while a permission request is open denies it: the bridge
/// ends with its stdin, the daemon's approval sees the connection close, and nothing is
/// written; a second bridge still works with the same daemon.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_leaves_mid_permission_writes_nothing() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        let init = bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        let new = bridge.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
        bridge.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": sid,
            "prompt": [{"type": "text", "text": "In settings.py, change TIMEOUT from 30 to 60."}]
        }}));
        let ask = bridge.until(|m| m["method"] == "session/request_permission");
        assert_eq!(
            ask["params"]["toolCall"]["content"][0]["type"], "diff",
            "{ask}"
        );
        drop(bridge.stdin.take());
        let status = bridge.child.wait().unwrap();
        assert!(
            status.success(),
            "the bridge ends quietly with its stdin: {status}"
        );
        // The daemon sees the turn's connection close and denies; a new bridge works.
        let mut again = Bridge::start(TALOS, TALOSD, &home_path);
        let init = again.call(1, "initialize", json!({"protocolVersion": 7}));
        assert_eq!(
            init["result"]["protocolVersion"], 1,
            "the latest version Talos speaks"
        );
        let new = again.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        assert!(new["result"]["sessionId"].is_string(), "{new}");
    })
    .await
    .unwrap();
    // Stopping the daemon ends whatever still waits; either way nothing was approved.
    stop(TALOS, home.path());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n",
        "nothing is written without an answer"
    );
}

/// Every trace under the home's `traces/`.
fn traces_in(home: &Path) -> Vec<talos_protocol::trace::TraceRecord> {
    let mut found = Vec::new();
    let sessions = std::fs::read_dir(home.join("traces")).into_iter().flatten();
    for session in sessions.flatten().filter(|e| e.path().is_dir()) {
        for file in std::fs::read_dir(session.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(file.path()).unwrap_or_default();
            if let Ok(trace) = serde_json::from_str(&text) {
                found.push(trace);
            }
        }
    }
    found
}

/// Proves a `session/cancel` while a permission request is open is recorded as a cancel
/// (issue 26, defect 8): the prompt stops `cancelled`, the trace's approval has source
/// `cancelled` and its outcome is CANCELLED, never the person's deny; nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_during_a_permission_is_a_cancel_not_a_deny() {
    use talos_protocol::event::ApprovalSource;
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let new = bridge.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
        bridge.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": sid,
            "prompt": [{"type": "text", "text": "In settings.py, change TIMEOUT from 30 to 60."}]
        }}));
        bridge.until(|m| m["method"] == "session/request_permission");
        bridge.send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}),
        );
        let done = bridge.until(|m| m["id"] == 3);
        assert_eq!(done["result"]["stopReason"], "cancelled", "{done}");
        drop(bridge.stdin.take());
        let _ = bridge.child.wait();
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    let traces = traces_in(home.path());
    let trace = traces
        .iter()
        .find(|t| !t.approvals.is_empty())
        .unwrap_or_else(|| panic!("a trace with the approval: {traces:?}"));
    assert_eq!(
        trace.approvals[0].source,
        ApprovalSource::Cancelled,
        "{trace:?}"
    );
    assert_eq!(
        trace.outcome.status,
        talos_protocol::CompletionStatus::Cancelled,
        "{:?}",
        trace.outcome
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
}

/// Proves a mode chosen in the editor survives a reload (issue 26, defect 6): a turn in agent
/// mode, `session/set_mode` to ask, a turn in ask mode; a second bridge's `session/load` of the
/// editor's session comes back in ask mode with both turns replayed, and a change asked for
/// there is refused (read-only), writing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_session_keeps_its_mode_and_every_turn() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    tokio::task::spawn_blocking(move || {
        let prompt = |bridge: &mut Bridge, id: u64, sid: &str, text: &str| {
            bridge.call(
                id,
                "session/prompt",
                json!({
                    "sessionId": sid, "prompt": [{"type": "text", "text": text}]
                }),
            )
        };
        let mut first = Bridge::start(TALOS, TALOSD, &home_path);
        first.call(1, "initialize", json!({"protocolVersion": 1}));
        let new = first.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
        prompt(
            &mut first,
            3,
            &sid,
            "What does settings.py configure? (agent)",
        );
        let set = first.call(
            4,
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "ask"}),
        );
        assert!(set.get("error").is_none(), "{set}");
        prompt(
            &mut first,
            5,
            &sid,
            "What does settings.py configure? (ask)",
        );
        drop(first.stdin.take());
        let _ = first.child.wait();

        let mut second = Bridge::start(TALOS, TALOSD, &home_path);
        second.call(1, "initialize", json!({"protocolVersion": 1}));
        second.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/load",
            "params": {"sessionId": sid, "cwd": ws_path, "mcpServers": []}}));
        let mut replayed = Vec::new();
        let loaded = loop {
            let message = second.until(|_| true);
            if message["id"] == 2 {
                break message;
            }
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "user_message_chunk" {
                replayed.push(update["content"]["text"].as_str().unwrap_or("").to_string());
            }
        };
        assert_eq!(
            loaded["result"]["modes"]["currentModeId"], "ask",
            "{loaded}"
        );
        assert_eq!(
            replayed,
            [
                "What does settings.py configure? (agent)",
                "What does settings.py configure? (ask)"
            ]
        );
        let refused = prompt(
            &mut second,
            3,
            &sid,
            "In settings.py, change TIMEOUT from 30 to 60.",
        );
        assert!(refused.get("error").is_none(), "{refused}");
        drop(second.stdin.take());
        let _ = second.child.wait();
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n",
        "ask mode wrote nothing"
    );
}

/// Proves `session/load` of a session whose prompt still runs keeps `session/cancel` working
/// (issue 26, defect 7): the cancel ends the prompt `cancelled`, and answering the still-open
/// permission afterwards writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_after_loading_a_running_session_still_cancels() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let new = bridge.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
        bridge.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {
            "sessionId": sid,
            "prompt": [{"type": "text", "text": "In settings.py, change TIMEOUT from 30 to 60."}]
        }}));
        let ask = bridge.until(|m| m["method"] == "session/request_permission");
        let loaded = bridge.call(
            4,
            "session/load",
            json!({"sessionId": sid, "cwd": ws_path, "mcpServers": []}),
        );
        assert!(loaded.get("result").is_some(), "{loaded}");
        bridge.send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}),
        );
        let done = bridge.until(|m| m["id"] == 3);
        assert_eq!(done["result"]["stopReason"], "cancelled", "{done}");
        // The editor answers the permission it still shows: too late, nothing is written.
        bridge.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {
            "outcome": {"outcome": "selected", "optionId": "allow_once"}
        }}));
        std::thread::sleep(Duration::from_millis(200));
        drop(bridge.stdin.take());
        let _ = bridge.child.wait();
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
}

/// Proves an editor is told the session's custom commands once it has the session (a
/// workspace one says so), and that a prompt `/NAME args` asks the model the request the
/// command makes, not the slash line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_sees_custom_commands_and_a_slash_prompt_runs_one() {
    let llama = FakeLlama::start(true, editing_model()).await;
    let home = home_with(&TestDaemon::config_reading_first(&llama.url, true));
    let ws = timeout_workspace();
    let commands = ws.path().join(".talos/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("explain.md"),
        "---\ndescription: Explain a file\n---\nWhat does $ARGUMENTS configure?\n",
    )
    .unwrap();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let new = bridge.call(2, "session/new", json!({"cwd": ws_path, "mcpServers": []}));
        let sid = new["result"]["sessionId"].as_str().unwrap().to_string();
        let update = bridge.until(|m| {
            m["method"] == "session/update"
                && m["params"]["update"]["sessionUpdate"] == "available_commands_update"
        });
        let offered = &update["params"]["update"]["availableCommands"];
        assert_eq!(offered[0]["name"], "explain", "{update}");
        assert!(
            offered[0]["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("Explain a file") && d.contains("workspace")),
            "{update}"
        );
        let done = bridge.call(
            3,
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "/explain settings.py"}]}),
        );
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    let asked: Vec<String> = llama.requests().iter().map(request_text).collect();
    assert!(
        asked
            .iter()
            .any(|t| t.contains("What does settings.py configure?")),
        "{asked:?}"
    );
    assert!(!asked.iter().any(|t| t.contains("/explain")), "{asked:?}");
}

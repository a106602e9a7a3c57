//! The bridge's own store and the daemon sessions it holds: a hostile `acp/<id>.json` (a FIFO,
//! a chain naming another workspace's session) neither hangs `session/load` nor replays
//! another workspace's turns; an editor that leaves releases every session its bridge opened,
//! which a later `session/load` still reopens; and a hook's deny reaches the editor with the
//! hook's reason.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use talos_tests::acp_bridge::{Bridge, home_with, stop};
use talos_tests::fake_llama::{FakeLlama, Reply};
use talos_tests::harness::{Client, TestDaemon, timeout_workspace};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

fn answering() -> talos_tests::fake_llama::Script {
    Arc::new(|_: &Value| Reply::Text("Noted.".into()))
}

fn new_session(bridge: &mut Bridge, id: u64, cwd: &Path) -> String {
    let new = bridge.call(id, "session/new", json!({"cwd": cwd, "mcpServers": []}));
    new["result"]["sessionId"].as_str().unwrap().to_string()
}

fn prompt(bridge: &mut Bridge, id: u64, sid: &str, text: &str) -> Value {
    bridge.call(
        id,
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]}),
    )
}

/// `session/load`, with the user messages it replayed before its answer.
fn load(bridge: &mut Bridge, id: u64, sid: &str, cwd: &Path) -> (Value, Vec<String>) {
    bridge.send(json!({"jsonrpc": "2.0", "id": id, "method": "session/load",
        "params": {"sessionId": sid, "cwd": cwd, "mcpServers": []}}));
    let mut replayed = Vec::new();
    loop {
        let message = bridge.until(|_| true);
        if message["id"] == id && message.get("method").is_none() {
            return (message, replayed);
        }
        let update = &message["params"]["update"];
        if update["sessionUpdate"] == "user_message_chunk" {
            replayed.push(update["content"]["text"].as_str().unwrap_or("").to_string());
        }
    }
}

/// A FIFO in place of the chain file answers at once (as no chain); a chain written to name
/// another workspace's session between two of this workspace's never replays that turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_chain_file_neither_hangs_a_load_nor_replays_another_workspace() {
    let llama = FakeLlama::start(true, answering()).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let (ws, other) = (timeout_workspace(), timeout_workspace());
    let home_path = home.path().to_path_buf();
    let (ws_path, other_path) = (
        ws.path().canonicalize().unwrap(),
        other.path().canonicalize().unwrap(),
    );
    tokio::task::spawn_blocking(move || {
        let mut first = Bridge::start(TALOS, TALOSD, &home_path);
        first.call(1, "initialize", json!({"protocolVersion": 1}));
        let mine = new_session(&mut first, 2, &ws_path);
        prompt(&mut first, 3, &mine, "MINE: what is in settings.py?");
        let theirs = new_session(&mut first, 4, &other_path);
        prompt(
            &mut first,
            5,
            &theirs,
            "THEIRS: a turn on another workspace",
        );
        let later = new_session(&mut first, 6, &ws_path);
        prompt(&mut first, 7, &later, "LATER: and now?");
        first.finish();

        let file = home_path.join(format!("acp/{mine}.json"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &file,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let mut second = Bridge::start(TALOS, TALOSD, &home_path);
        second.call(1, "initialize", json!({"protocolVersion": 1}));
        let (loaded, replayed) = load(&mut second, 2, &mine, &ws_path);
        assert!(loaded.get("error").is_none(), "{loaded}");
        assert_eq!(
            replayed,
            ["MINE: what is in settings.py?"],
            "a FIFO is no chain"
        );
        second.finish();

        std::fs::remove_file(&file).unwrap();
        for hostile in [
            json!([mine, theirs, later]),
            json!({"workspace": ws_path, "chain": [mine, theirs, later]}),
        ] {
            std::fs::write(&file, hostile.to_string()).unwrap();
            let mut third = Bridge::start(TALOS, TALOSD, &home_path);
            third.call(1, "initialize", json!({"protocolVersion": 1}));
            let (loaded, replayed) = load(&mut third, 2, &mine, &ws_path);
            third.finish();
            assert!(loaded.get("error").is_none(), "{loaded}");
            assert!(
                replayed.iter().all(|r| !r.contains("THEIRS")),
                "{hostile}: another workspace's turn was replayed: {replayed:?}"
            );
        }
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
}

/// Three sessions opened, one moved to another mode: once the editor leaves, the daemon holds
/// none of the four Talos sessions, and a new bridge still loads the one with a turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_leaves_releases_every_session_it_opened() {
    let llama = FakeLlama::start(true, answering()).await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    let opened = tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let ids: Vec<String> = (2..5)
            .map(|id| new_session(&mut bridge, id, &ws_path))
            .collect();
        prompt(&mut bridge, 5, &ids[0], "FIRST: what is in settings.py?");
        let set = bridge.call(
            6,
            "session/set_mode",
            json!({"sessionId": ids[1], "modeId": "ask"}),
        );
        assert!(set.get("error").is_none(), "{set}");
        bridge.finish();
        ids
    })
    .await
    .unwrap();
    let mut client = Client::connect(&home.path().join("run/talosd.sock")).await;
    client
        .call("initialize", json!({"clientName": "e2e"}))
        .await;
    let listed = client.call("session/list", json!({})).await;
    let held = listed["sessions"].as_array().cloned().unwrap_or_default();
    assert!(held.is_empty(), "the daemon still holds {held:?}");
    let (home_path, ws_path, first) = (
        home.path().to_path_buf(),
        ws.path().canonicalize().unwrap(),
        opened[0].clone(),
    );
    tokio::task::spawn_blocking(move || {
        let mut again = Bridge::start(TALOS, TALOSD, &home_path);
        again.call(1, "initialize", json!({"protocolVersion": 1}));
        let (loaded, replayed) = load(&mut again, 2, &first, &ws_path);
        assert!(
            loaded.get("error").is_none(),
            "a released session loads: {loaded}"
        );
        assert_eq!(replayed, ["FIRST: what is in settings.py?"]);
        again.finish();
    })
    .await
    .unwrap();
    let listed = client.call("session/list", json!({})).await;
    assert_eq!(
        listed["sessions"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
    stop(TALOS, home.path());
}

/// A `pre_call` hook denies the edit with a reason: the editor's tool call says that reason,
/// not only the code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_deny_reaches_the_editor_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let hook = dir.path().join("deny.py");
    std::fs::write(
        &hook,
        "#!/usr/bin/env python3\nimport json, sys\ncall = json.load(sys.stdin)\nif call['tool'] == 'talos.edit_file':\n    print(json.dumps({'decision': 'deny', 'reason': 'settings.py is frozen until Friday'}))\nelse:\n    print(json.dumps({'decision': 'allow'}))\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();
    let script: talos_tests::fake_llama::Script = Arc::new(|request: &Value| {
        if talos_tests::fake_llama::after_tool_result(request) {
            return Reply::Text("It was denied.".into());
        }
        Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"})
                .to_string(),
        )])
    });
    let llama = FakeLlama::start(true, script).await;
    let config = format!(
        "{}hooks:\n  pre_call:\n    - command: [{:?}]\n",
        TestDaemon::config_for(&llama.url, true),
        hook.display().to_string()
    );
    let home = home_with(&config);
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().canonicalize().unwrap());
    let shown = tokio::task::spawn_blocking(move || {
        let mut bridge = Bridge::start(TALOS, TALOSD, &home_path);
        bridge.call(1, "initialize", json!({"protocolVersion": 1}));
        let sid = new_session(&mut bridge, 2, &ws_path);
        prompt(
            &mut bridge,
            3,
            &sid,
            "In settings.py, change TIMEOUT from 30 to 60.",
        );
        let updates = bridge.updates();
        bridge.finish();
        updates
    })
    .await
    .unwrap();
    stop(TALOS, home.path());
    let calls: Vec<String> = shown
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update")
        .map(Value::to_string)
        .collect();
    assert!(
        calls
            .iter()
            .any(|c| c.contains("settings.py is frozen until Friday")),
        "{calls:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
}

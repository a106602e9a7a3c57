//! Hooks through the real daemon (issue 28): real programs (Python scripts) asked about each
//! call and told each outcome; every way a hook can fail denies, `allow` never skips an
//! approval, `ask` adds one, and a `post_turn` hook cannot change the outcome.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::CompletionStatus;
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, approvals};

const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit_call() -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"})
            .to_string(),
    )])
}

/// A hook script in `dir`: Python that reads the call from stdin and runs `body` with `call`
/// bound to it; `log` (if any) gets each call it was told, one JSON line each.
fn hook(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    let script = format!(
        "#!/usr/bin/env python3\nimport json, sys, time\ncall = json.load(sys.stdin)\nwith open({log:?}, 'a') as f:\n    f.write(json.dumps(call) + '\\n')\n{body}\n",
        log = dir.join(format!("{name}.log")).display().to_string()
    );
    std::fs::write(&path, script).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path.display().to_string()
}

fn told(dir: &Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(format!("{name}.log")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn daemon_with(llama: &FakeLlama, hooks: &str) -> TestDaemon {
    let config = format!("{}{hooks}", TestDaemon::config_for(&llama.url, true));
    TestDaemon::start(&config).await
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("settings.py"), "TIMEOUT = 30\n").unwrap();
    ws
}

fn settings(ws: &tempfile::TempDir) -> String {
    std::fs::read_to_string(ws.path().join("settings.py")).unwrap()
}

/// Denies, crashes, times out, or says something that is not the answer: each denies the
/// edit, no approval is asked, nothing is written, and the trace says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failing_or_denying_hook_denies_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "deny.py",
            "if call['tool'] == 'talos.edit_file':\n    print(json.dumps({'decision': 'deny', 'reason': 'frozen file'}))\nelse:\n    print(json.dumps({'decision': 'allow'}))",
            "hooks.pre_call[0] denied: frozen file",
        ),
        ("crash.py", "sys.exit(3)", "exited with status 3"),
        ("slow.py", "time.sleep(30)", "timed out after 1 s"),
        (
            "chatty.py",
            "print('sure, go ahead')",
            "not one JSON object",
        ),
        // Prints without end: read up to the cap, never more, and denied.
        (
            "endless.py",
            "while True:\n    sys.stdout.write('x' * 65536)",
            "",
        ),
    ];
    for (name, body, why) in cases {
        let program = hook(dir.path(), name, body);
        let llama = FakeLlama::start(
            true,
            scripted(vec![edit_call(), Reply::Text("Done.".into())]),
        )
        .await;
        let hooks =
            format!("hooks:\n  timeout_secs: 1\n  pre_call:\n    - command: [{program:?}]\n");
        let daemon = daemon_with(&llama, &hooks).await;
        let ws = workspace();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        let started = std::time::Instant::now();
        let (outcome, seen) = client
            .turn_with(&session, EDIT, talos_tests::harness::approve_all("approve"))
            .await;
        assert_eq!(settings(&ws), "TIMEOUT = 30\n", "{name}: nothing written");
        assert!(approvals(&seen).is_empty(), "{name}: no approval asked");
        assert_ne!(
            outcome.status,
            CompletionStatus::Complete,
            "{name}: {outcome:?}"
        );
        let trace = daemon.traces().pop().unwrap();
        let denial = trace
            .hooks
            .iter()
            .find(|h| h.decision == "deny")
            .unwrap_or_else(|| panic!("{name}: {:?}", trace.hooks));
        let text = format!(
            "{} {}",
            denial.reason,
            denial.problem.clone().unwrap_or_default()
        );
        let code = trace
            .permission_decisions
            .iter()
            .find(|p| p.reason_code == "HOOK_DENY");
        assert!(code.is_some(), "{name}: {:?}", trace.permission_decisions);
        assert!(
            text.contains(why) || why.starts_with("hooks.pre_call[0] denied"),
            "{name}: {text}"
        );
        if name == "slow.py" {
            assert!(started.elapsed().as_secs() < 20, "the timeout is honoured");
        }
        daemon.stop().await;
    }
}

/// `allow` leaves the approval the ladder requires; the hook is told the call and the
/// ladder's decision; a `post_turn` hook is told the outcome, which stays as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_keeps_the_approval_and_post_turn_is_told_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let allow = hook(
        dir.path(),
        "allow.py",
        "print(json.dumps({'decision': 'allow'}))",
    );
    let after = hook(dir.path(), "after.py", "print('anything')\nsys.exit(1)");
    let llama = FakeLlama::start(
        true,
        scripted(vec![edit_call(), Reply::Text("Done.".into())]),
    )
    .await;
    let hooks = format!(
        "hooks:\n  pre_call:\n    - command: [{allow:?}, \"; touch pwned\"]\n  post_turn:\n    - command: [{after:?}]\n"
    );
    let daemon = daemon_with(&llama, &hooks).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, EDIT, talos_tests::harness::approve_all("approve"))
        .await;
    assert_eq!(approvals(&seen).len(), 1, "the edit still asked");
    assert_eq!(settings(&ws), "TIMEOUT = 60\n");
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    assert!(
        !ws.path().join("pwned").exists(),
        "no shell read the argument"
    );
    let calls = told(dir.path(), "allow.py");
    let edit = calls
        .iter()
        .find(|c| c["tool"] == "talos.edit_file")
        .unwrap();
    assert_eq!(edit["arguments"]["new_string"], "TIMEOUT = 60");
    assert_eq!(edit["ladder"]["action"], "ask");
    assert_eq!(edit["sessionId"], session.as_str());
    let after_told = told(dir.path(), "after.py");
    assert_eq!(after_told.len(), 1);
    assert_eq!(after_told[0]["outcome"]["status"], "COMPLETE");
    let trace = daemon.traces().pop().unwrap();
    let post: Vec<_> = trace
        .hooks
        .iter()
        .filter(|h| h.event == "post_turn")
        .collect();
    assert_eq!(post.len(), 1);
    assert_eq!(
        post[0].decision, "failed",
        "its failure is recorded, and changes nothing"
    );
    assert!(
        trace
            .hooks
            .iter()
            .any(|h| h.event == "pre_call" && h.decision == "allow")
    );
}

/// `ask` makes a read the ladder allows ask the person; denied, nothing is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_adds_an_approval_to_an_allowed_read() {
    let dir = tempfile::tempdir().unwrap();
    let ask = hook(
        dir.path(),
        "ask.py",
        "print(json.dumps({'decision': 'ask', 'reason': 'config files need a look'}))",
    );
    let script: talos_tests::fake_llama::Script = Arc::new(|_: &Value| read_call("settings.py"));
    let llama = FakeLlama::start(true, script).await;
    let hooks = format!("hooks:\n  pre_call:\n    - command: [{ask:?}]\n");
    let config = format!(
        "{}{hooks}",
        TestDaemon::config_reading_first(&llama.url, true)
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let (_, seen) = client
        .turn_with(
            &session,
            "What is in settings.py?",
            talos_tests::harness::approve_all("deny"),
        )
        .await;
    let asked = approvals(&seen);
    assert!(!asked.is_empty(), "the read asked");
    assert!(
        asked[0].description.contains("a hook asks about"),
        "{asked:?}"
    );
    let trace = daemon.traces().pop().unwrap();
    assert!(
        trace
            .executions
            .iter()
            .all(|e| e.tool != "talos.read_file" || !e.success)
    );
    assert!(trace.hooks.iter().all(|h| h.decision == "ask"));
}

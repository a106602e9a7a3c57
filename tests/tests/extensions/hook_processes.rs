//! Hook processes that try to outlive their call: a background child that left the hook's
//! process group (`setsid`) and still holds its standard output does not hold the call, a
//! cancel stops a running hook at once, and SIGTERM stops talosd while a hook runs.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use talos_protocol::CompletionStatus;
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{Answer, Client, TestDaemon, approve_all};
use talos_tests::process::DaemonProcess;

const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");

fn edit_call() -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"})
            .to_string(),
    )])
}

/// A Python hook at `dir/name` that writes its own pid to `hook.pid`, starts `sleep 600` in
/// a session of its own (out of the hook's process group) still holding the hook's standard
/// output, appends that child's pid to `child.pid`, then runs `then`.
fn escaping_hook(dir: &Path, then: &str) -> String {
    let path = dir.join("escape.py");
    let script = format!(
        "#!/usr/bin/env python3\nimport json, os, subprocess, sys, time\nsys.stdin.read()\nopen({hook:?}, 'w').write(str(os.getpid()))\nchild = subprocess.Popen(['sleep', '600'], start_new_session=True)\nopen({child:?}, 'a').write(str(child.pid) + '\\n')\n{then}\n",
        hook = dir.join("hook.pid").display().to_string(),
        child = dir.join("child.pid").display().to_string(),
    );
    std::fs::write(&path, script).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path.display().to_string()
}

/// The last pid written to `name` (the hook appends one per run).
fn pid_in(dir: &Path, name: &str) -> Option<i32> {
    pids_in(dir, name).pop()
}

fn pids_in(dir: &Path, name: &str) -> Vec<i32> {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Whether `pid` is a process that has not ended (a zombie has ended).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Ends the background children the hook left (the test ends every process it caused).
fn end_child(dir: &Path) {
    for pid in pids_in(dir, "child.pid") {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

async fn wait_for_pid(dir: &Path, name: &str) -> i32 {
    for _ in 0..3000 {
        if let Some(pid) = pid_in(dir, name) {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the hook never wrote {name}");
}

fn hooks_config(program: &str, timeout_secs: u64) -> String {
    format!("hooks:\n  timeout_secs: {timeout_secs}\n  pre_call:\n    - command: [{program:?}]\n")
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("settings.py"), "TIMEOUT = 30\n").unwrap();
    ws
}

/// The hook answers `allow` and exits, leaving its background child holding the pipe: the
/// call goes on to its approval and the turn ends while that child still runs, so nothing
/// waited for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setsid_child_holding_the_hooks_stdout_does_not_hold_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let program = escaping_hook(dir.path(), "print(json.dumps({'decision': 'allow'}))");
    let llama = FakeLlama::start(
        true,
        scripted(vec![edit_call(), Reply::Text("Done.".into())]),
    )
    .await;
    let config = format!(
        "{}{}",
        TestDaemon::config_for(&llama.url, true),
        hooks_config(&program, 300)
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    client.read_timeout = Duration::from_secs(600);
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, _) = client
        .turn_with(&session, EDIT, approve_all("approve"))
        .await;
    let child = pid_in(dir.path(), "child.pid").expect("the hook started its child");
    let child_still_runs = running(child);
    end_child(dir.path());
    assert!(
        child_still_runs,
        "the turn ended before the background child did"
    );
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    let settings = std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
    assert_eq!(settings, "TIMEOUT = 60\n", "the hook's allow was read");
    daemon.stop().await;
}

/// A cancel while a hook runs kills the hook's group at once: the hook is recorded as
/// stopped, not as having reached its time limit, and its process is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_running_hook_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let program = escaping_hook(dir.path(), "time.sleep(600)");
    let llama = FakeLlama::start(
        true,
        scripted(vec![edit_call(), Reply::Text("Done.".into())]),
    )
    .await;
    let config = format!(
        "{}{}",
        TestDaemon::config_for(&llama.url, true),
        hooks_config(&program, 120)
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = workspace();
    let mut client = daemon.client().await;
    client.read_timeout = Duration::from_secs(600);
    let session = client.open_session(ws.path(), "agent").await;
    let mut other = daemon.client().await;
    other
        .call("initialize", json!({"clientName": "e2e-cancel"}))
        .await;
    let (hook_dir, id) = (dir.path().to_path_buf(), session.clone());
    let canceller = tokio::spawn(async move {
        wait_for_pid(&hook_dir, "child.pid").await;
        other.call("turn/cancel", json!({"sessionId": id})).await
    });
    let (outcome, _) = client.turn_with(&session, EDIT, |_| Answer::Ignore).await;
    canceller.await.unwrap();
    let hook = pid_in(dir.path(), "hook.pid").unwrap();
    end_child(dir.path());
    assert_eq!(outcome.status, CompletionStatus::Cancelled, "{outcome:?}");
    assert!(!running(hook), "the hook's process is gone");
    let trace = daemon.traces().pop().unwrap();
    let said: Vec<String> = trace
        .hooks
        .iter()
        .map(|h| format!("{} {:?}", h.reason, h.problem))
        .collect();
    assert!(said.iter().any(|s| s.contains("stopped")), "{said:?}");
    assert!(said.iter().all(|s| !s.contains("timed out")), "{said:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\n"
    );
    daemon.stop().await;
}

/// SIGTERM to the real talosd while a hook runs (its time limit far off, its background
/// child holding its output): talosd exits, and the hook with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_talosd_while_a_hook_runs() {
    let dir = tempfile::tempdir().unwrap();
    let program = escaping_hook(dir.path(), "time.sleep(600)");
    let llama = FakeLlama::start(
        true,
        scripted(vec![edit_call(), Reply::Text("Done.".into())]),
    )
    .await;
    let home = tempfile::Builder::new()
        .prefix("th")
        .tempdir_in("/tmp")
        .unwrap();
    let config = format!(
        "{}{}",
        TestDaemon::config_for(&llama.url, true),
        hooks_config(&program, 600)
    );
    std::fs::write(home.path().join("config.yaml"), config).unwrap();
    let mut daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::null());
    let ws = workspace();
    let mut client = Client::connect(&daemon.socket).await;
    client.read_timeout = Duration::from_secs(600);
    let session = client.open_session(ws.path(), "agent").await;
    let turn = tokio::spawn(async move {
        let _ = client
            .call_with(
                "turn/start",
                json!({"sessionId": session, "prompt": EDIT}),
                |_| Answer::Ignore,
            )
            .await;
    });
    wait_for_pid(dir.path(), "child.pid").await;
    let hook = pid_in(dir.path(), "hook.pid").unwrap();
    let term = std::process::Command::new("kill")
        .args(["-TERM", &daemon.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    // Far inside the hook's own 600 s; a daemon that waited for the hook would still run.
    let deadline = Instant::now() + Duration::from_secs(60);
    while daemon.alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let exited = !daemon.alive();
    let hook_gone = !running(hook);
    end_child(dir.path());
    turn.abort();
    assert!(exited, "talosd exits on SIGTERM while a hook runs");
    assert!(hook_gone, "the hook ended with it");
}

//! Durability with fewer syncs (issue 26, defect 10), counted by Debian's `strace` attached to
//! the real `talosd`: a governed edit turn makes at most 5 `fsync`/`fdatasync`/`syncfs` calls
//! (one sync of the home before the write for the checkpoint, the file and its folder in the
//! workspace, the session's data, one sync of the home before the outcome), and a write that
//! creates folders syncs each new folder into its parent. Skipped, saying so, without strace.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use talos_tests::fake_llama::{FakeLlama, Reply, write_call};
use talos_tests::harness::{Client, TestDaemon, approve_all, timeout_workspace};
use talos_tests::process::DaemonProcess;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TURNS: usize = 3;

/// The sync calls strace saw, one line each.
fn syncs(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            ["fsync(", "fdatasync(", "syncfs("]
                .iter()
                .any(|c| l.contains(c))
        })
        .map(str::to_string)
        .collect()
}

fn request_text(request: &serde_json::Value) -> String {
    request.to_string()
}

/// Edits settings.py, or creates a/b/new.txt when asked to; answers once a tool ran.
fn model(request: &serde_json::Value) -> Reply {
    let text = request_text(request);
    if text.contains("\"role\":\"tool\"") {
        return Reply::Text("Done.".into());
    }
    if text.contains("Create a/b/new.txt") {
        return write_call("a/b/new.txt", "hi\n");
    }
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#.into(),
    )])
}

/// Attaches strace to `pid`, runs `turns`, and returns the sync calls made meanwhile.
async fn watched(
    pid: u32,
    log: &Path,
    turns: impl std::future::Future<Output = ()>,
) -> Vec<String> {
    let mut strace = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-y",
            "-e",
            "trace=fsync,fdatasync,syncfs",
            "-o",
        ])
        .arg(log)
        .args(["-p", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // strace has attached when the kernel names a tracer for each of the daemon's threads.
    let traced = || {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return false;
        };
        tasks.flatten().all(|task| {
            std::fs::read_to_string(task.path().join("status"))
                .map(|s| {
                    s.lines()
                        .any(|l| l.starts_with("TracerPid:") && l != "TracerPid:\t0")
                })
                .unwrap_or(false)
        })
    };
    talos_tests::cli::wait_until_async("strace attached", Duration::from_secs(10), traced).await;
    turns.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = Command::new("kill")
        .arg("-INT")
        .arg(strace.id().to_string())
        .status();
    let _ = strace.wait();
    syncs(log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_turn_makes_at_most_five_syncs_and_new_folders_are_synced() {
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("skipped: strace is not installed");
        return;
    }
    let llama = FakeLlama::start(true, std::sync::Arc::new(model)).await;
    let home = tempfile::Builder::new()
        .prefix("td")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        TestDaemon::config_for(&llama.url, true),
    )
    .unwrap();
    let mut daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::null());
    let socket = daemon.socket.clone();
    let ws = timeout_workspace();
    let root = ws.path().canonicalize().unwrap();
    let mut client = Client::connect(&socket).await;
    let session = client.open_session(ws.path(), "agent").await;
    const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";
    // A first turn outside the count: the home's folders are made once.
    client.turn(&session, EDIT, "approve").await;
    let edits = watched(daemon.child.id(), &home.path().join("edits.log"), async {
        for _ in 0..TURNS {
            std::fs::write(root.join("settings.py"), "TIMEOUT = 30\nRETRIES = 3\n").unwrap();
            let (outcome, _) = client
                .turn_with(&session, EDIT, approve_all("approve"))
                .await;
            assert_eq!(
                outcome.classification,
                talos_protocol::Classification::CompletedVerified,
                "{outcome:?}"
            );
        }
    })
    .await;
    assert!(
        !edits.is_empty() && edits.len() <= 5 * TURNS,
        "{} syncs in {TURNS} edit turns:\n{}",
        edits.len(),
        edits.join("\n")
    );
    assert!(edits.iter().any(|l| l.contains("syncfs(")), "{edits:?}");

    let created = watched(daemon.child.id(), &home.path().join("create.log"), async {
        client
            .turn(&session, "Create a/b/new.txt saying hi", "approve")
            .await;
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("a/b/new.txt")).unwrap(),
        "hi\n"
    );
    for folder in [root.clone(), root.join("a"), root.join("a/b")] {
        let shown = format!("<{}>)", folder.display());
        assert!(
            created.iter().any(|l| l.contains(&shown)),
            "{} synced after its new entry:\n{}",
            folder.display(),
            created.join("\n")
        );
    }
    client.call("daemon/shutdown", json!({})).await;
    let _ = daemon.child.wait();
}

//! Faults from outside the protocol (issue 11): a stderr that cannot be written, special files
//! in the workspace, a full disk, and kill -9 at random moments after an approval. Each runs the
//! real `talosd` binary (or the in-process daemon where a process is not needed) against the
//! fake model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

use std::process::Stdio;
use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::{Classification, DaemonStatusResult};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, tool_results};
use talos_tests::harness::{Client, TestDaemon, timeout_workspace};
use talos_tests::process::DaemonProcess;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

/// Reads, edits and answers, by how many tool results the request carries.
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

fn home_for(url: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("tf")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        TestDaemon::config_for(url, true),
    )
    .unwrap();
    home
}

/// Proves a daemon whose stderr is `/dev/full` (every log write fails with ENOSPC) starts,
/// serves a governed edit turn and answers `daemon/status`, which counts the dropped lines.
/// Before issue 11 the first failed log line panicked: the daemon exited 101 right after
/// binding, leaving its socket behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_that_cannot_be_written_drops_log_lines_and_serves_turns() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let home = home_for(&llama.url);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::from(full));
    let ws = timeout_workspace();
    let mut client = Client::connect(&daemon.socket).await;
    let session = client.open_session(ws.path(), "agent").await;
    let outcome = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(outcome.classification, Classification::CompletedVerified);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
    assert!(status.log_lines_dropped > 0, "{status:?}");
    assert!(daemon.alive(), "talosd is still running");
}

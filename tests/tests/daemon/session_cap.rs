//! Sessions under the open-file limit (issue 26, defect 4): talosd raises its soft
//! `RLIMIT_NOFILE` to the hard one at start, and past the session cap the limit leaves room
//! for, `session/new` is refused with a clear error while the daemon keeps answering and a
//! closed session makes room again. The daemon runs under `prlimit --nofile=300:300` (cap 44).

use std::process::{Command, Stdio};

use serde_json::json;
use talos_tests::harness::Client;
use talos_tests::process::DaemonProcess;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");

#[tokio::test]
async fn sessions_past_the_cap_are_refused_clearly_and_the_daemon_stays_up() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: prlimit (util-linux) is not installed");
        return;
    }
    let home = tempfile::Builder::new()
        .prefix("tc")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        "model:\n  mode: connect_only\n  url: http://127.0.0.1:9\n",
    )
    .unwrap();
    let mut prlimit = Command::new("prlimit");
    prlimit.args(["--nofile=300:600", TALOSD, "--foreground"]);
    let daemon = DaemonProcess::start_command(prlimit, home.path(), Stdio::null());
    let socket = daemon.socket.clone();
    // The soft limit was raised to the hard one: 600 - 256 reserved = 344 sessions.
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", daemon.child.id())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    assert!(
        line.split_whitespace().filter(|w| *w == "600").count() == 2,
        "{line}"
    );
    let mut client = Client::connect(&socket).await;
    client
        .call("initialize", json!({"clientName": "e2e"}))
        .await;
    let ws = tempfile::tempdir().unwrap();
    let mut opened = Vec::new();
    let refused = loop {
        let (response, _) = client
            .call_with(
                "session/new",
                json!({"workspace": ws.path(), "mode": "ask"}),
                |_| talos_tests::harness::Answer::Ignore,
            )
            .await
            .unwrap();
        match (response.result, response.error) {
            (Some(result), None) => opened.push(result["sessionId"].as_str().unwrap().to_string()),
            (_, Some(error)) => break error,
            other => panic!("{other:?}"),
        }
        assert!(opened.len() <= 344, "no cap reached");
    };
    assert_eq!(opened.len(), 344, "the cap is the raised limit less 256");
    assert_eq!(refused.code, -32008, "{refused:?}");
    assert!(
        refused
            .message
            .contains("talosd holds 344 sessions, as many as it allows"),
        "{refused:?}"
    );
    // Still answering, and a closed session makes room.
    let _: serde_json::Value = client.call("daemon/status", json!({})).await;
    client
        .call("session/close", json!({"sessionId": opened[0]}))
        .await;
    let again = client
        .call(
            "session/new",
            json!({"workspace": ws.path(), "mode": "ask"}),
        )
        .await;
    assert!(again["sessionId"].is_string(), "{again}");
    daemon.kill9();
}

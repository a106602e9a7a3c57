//! `talos doctor --json`: one object, a check per need with its fix, exit 0 when nothing blocks
//! a turn; a bad config or a socket directory others can write blocks (exit 1).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use talos_tests::process::DaemonProcess;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

fn doctor(home: &Path) -> (Output, Value) {
    let out = Command::new(TALOS)
        .args(["doctor", "--json"])
        .env("TALOS_HOME", home)
        .env("TALOS_DAEMON", TALOSD)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    (out, report)
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {report}"))
}

fn home() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("td")
        .tempdir_in("/tmp")
        .unwrap()
}

#[test]
fn doctor_json_reports_every_check_and_passes_on_a_fresh_home() {
    let home = home();
    let (out, report) = doctor(home.path());
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["ok"], true);
    for name in [
        "config",
        "socket directory",
        "daemon",
        "landlock",
        "user namespaces",
        "chromium",
    ] {
        let c = check(&report, name);
        assert!(
            ["ok", "warn", "fail"].contains(&c["status"].as_str().unwrap()),
            "{c}"
        );
        assert!(c["detail"].is_string() && c["fix"].is_string(), "{c}");
        if c["status"] != "ok" {
            assert!(
                !c["fix"].as_str().unwrap().is_empty(),
                "a problem without a fix: {c}"
            );
        }
    }
    assert_eq!(check(&report, "config")["status"], "ok");
    assert!(
        check(&report, "daemon")["detail"]
            .as_str()
            .unwrap()
            .contains("not running")
    );
    assert!(!home.path().join("run").exists(), "doctor starts no daemon");
}

#[test]
fn doctor_sees_a_running_daemon_answer() {
    let home = home();
    let _daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::null());
    let (out, report) = doctor(home.path());
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        check(&report, "daemon")["detail"]
            .as_str()
            .unwrap()
            .contains("answering"),
        "{report}"
    );
}

#[test]
fn a_bad_config_blocks_a_turn_and_names_its_line() {
    let home = home();
    std::fs::write(
        home.path().join("config.yaml"),
        "approval:\n  timeout_secs: 30\nmodle: {}\n",
    )
    .unwrap();
    let (out, report) = doctor(home.path());
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_eq!(report["ok"], false);
    let config = check(&report, "config");
    assert_eq!(config["status"], "fail");
    assert!(
        config["detail"].as_str().unwrap().contains("line 3"),
        "{config}"
    );
}

#[test]
fn a_socket_directory_others_can_write_blocks_a_turn() {
    let home = home();
    let run = home.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (out, report) = doctor(home.path());
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_eq!(
        check(&report, "socket directory")["status"],
        "fail",
        "{report}"
    );
}

//! `talos doctor --json`: one object, a check per need with its fix, exit 0 when nothing blocks
//! a turn; a bad config, a socket directory others can write, a missing llama-server, a model
//! that is not the pinned default, or a port someone else holds blocks (exit 1). The
//! llama-server here is `fake-llama-server` (it answers `--version`), the model a small file
//! with the GGUF magic, named in each home's `config.yaml`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use talos_tests::process::DaemonProcess;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-llama-server");

/// A home whose `config.yaml` names the fake server, a GGUF-looking model and a free port.
struct Fixture {
    home: tempfile::TempDir,
    port: u16,
}

fn fixture(server: &str, model_name: &str) -> Fixture {
    let home = home();
    let model = home.path().join(model_name);
    std::fs::write(&model, b"GGUF\x03\x00\x00\x00 not a real model").unwrap();
    let port = talos_tests::managed::free_port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "model:\n  server: {server}\n  path: {}\n  port: {port}\n  chat_template_file: \"\"\n",
            model.display()
        ),
    )
    .unwrap();
    Fixture { home, port }
}

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
    let fixture = fixture(FAKE, "tiny.gguf");
    let home = &fixture.home;
    let (out, report) = doctor(home.path());
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["ok"], true);
    for name in [
        "daemon program",
        "config",
        "llama-server",
        "model",
        "chat template",
        "port",
        "disk",
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
    let detail = |name| check(&report, name)["detail"].as_str().unwrap().to_string();
    assert!(
        detail("llama-server").contains("fake-llama-server"),
        "{report}"
    );
    assert!(
        detail("model").contains("GGUF; not the default model"),
        "{report}"
    );
    assert!(
        detail("port").contains(&format!("127.0.0.1:{} is free", fixture.port)),
        "{report}"
    );
    assert!(detail("disk").contains("retention keeps"), "{report}");
    assert!(
        detail("daemon program").contains("the same release as talos"),
        "{report}"
    );
}

#[test]
fn what_blocks_the_model_server_blocks_a_turn() {
    // A default-named model whose bytes are not the pinned ones, a missing server, a port
    // someone else holds: each is a failed check with its fix, and exit 1.
    let altered = fixture(FAKE, "SmolLM2-135M-Instruct.Q4_1.gguf");
    let (out, report) = doctor(altered.home.path());
    assert_eq!(out.status.code(), Some(1), "{report}");
    let model = check(&report, "model");
    assert_eq!(model["status"], "fail", "{model}");
    assert!(
        model["detail"]
            .as_str()
            .unwrap()
            .contains("pinned to b179c952"),
        "{model}"
    );
    assert!(
        model["fix"].as_str().unwrap().contains("get-llama.sh"),
        "{model}"
    );

    let missing = fixture("/nonexistent/llama-server", "tiny.gguf");
    let (out, report) = doctor(missing.home.path());
    assert_eq!(out.status.code(), Some(1), "{report}");
    let server = check(&report, "llama-server");
    assert_eq!(server["status"], "fail", "{server}");
    assert!(
        server["detail"].as_str().unwrap().contains("not found"),
        "{server}"
    );

    let taken = fixture(FAKE, "tiny.gguf");
    let listener = std::net::TcpListener::bind(("127.0.0.1", taken.port)).unwrap();
    let (out, report) = doctor(taken.home.path());
    assert_eq!(out.status.code(), Some(1), "{report}");
    let port = check(&report, "port");
    assert_eq!(port["status"], "fail", "{port}");
    let pid = format!("pid {}", std::process::id());
    assert!(port["detail"].as_str().unwrap().contains(&pid), "{port}");
    drop(listener);
}

#[test]
fn doctor_sees_a_running_daemon_answer_and_its_server_on_the_port() {
    let fixture = fixture(FAKE, "tiny.gguf");
    let home = &fixture.home;
    let _daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::null());
    // The daemon launches the fake server on the port: held, but by this home's own server.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let report = loop {
        let (out, report) = doctor(home.path());
        let port = check(&report, "port")["detail"]
            .as_str()
            .unwrap()
            .to_string();
        if port.contains("this home's talosd launched") {
            assert_eq!(out.status.code(), Some(0), "{report}");
            break report;
        }
        assert!(std::time::Instant::now() < deadline, "{report}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
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
    let fixture = fixture(FAKE, "tiny.gguf");
    let home = &fixture.home;
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

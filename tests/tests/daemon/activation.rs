//! systemd socket activation: `talosd` started with a listening socket passed at descriptor 3
//! (`LISTEN_FDS`/`LISTEN_PID`, by the `socket-activate` launcher that binds and execs, as
//! systemd does) serves turns on it, tells `NOTIFY_SOCKET` when it is ready and when it stops,
//! leaves the socket file to its owner, and refuses a passed socket that fails the checks it
//! applies to its own.

use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use talos_protocol::CompletionStatus;
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{Client, TestDaemon, timeout_workspace};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const ACTIVATE: &str = env!("CARGO_BIN_EXE_socket-activate");

fn home_with(config: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("ta")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        talos_tests::harness::offline(config),
    )
    .unwrap();
    home
}

/// `socket-activate [launcher args] SOCKET -- talosd --foreground [talosd args]` on `home`.
fn activated(home: &Path, launcher: &[&str], talosd: &[&str], notify: Option<&Path>) -> Child {
    let mut command = Command::new(ACTIVATE);
    command
        .args(launcher)
        .args(["--", TALOSD, "--foreground"])
        .args(talosd)
        .env("TALOS_HOME", home)
        .env_remove("NOTIFY_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(notify) = notify {
        command.env("NOTIFY_SOCKET", notify);
    }
    command.spawn().unwrap()
}

/// The next datagram on `socket` (a generous guard against a hang, not a speed check).
fn next_datagram(socket: &UnixDatagram) -> String {
    socket
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut buffer = [0u8; 1024];
    let n = socket.recv(&mut buffer).expect("a notification");
    String::from_utf8_lossy(&buffer[..n]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talosd_serves_a_turn_on_a_socket_passed_by_systemd_and_notifies_readiness() {
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            read_call("settings.py"),
            Reply::Text("TIMEOUT is 30.".into()),
        ]),
    )
    .await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let socket = home.path().join("run").join("talosd.sock");
    let notify_path = home.path().join("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let socket_arg = socket.to_str().unwrap();
    let mut child = activated(home.path(), &[socket_arg], &[], Some(&notify_path));

    let ready = tokio::task::spawn_blocking(move || (next_datagram(&notify), notify))
        .await
        .unwrap();
    let (ready, notify) = ready;
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    // The launcher execs talosd, so the pid it put in LISTEN_PID is talosd's own.
    assert!(
        ready.contains(&format!("\nMAINPID={}\n", child.id())),
        "{ready}"
    );

    let ws = timeout_workspace();
    std::fs::write(ws.path().join("settings.py"), "TIMEOUT = 30\n").unwrap();
    let mut client = Client::connect(&socket).await;
    let session = client.open_session(ws.path(), "agent").await;
    let outcome = client
        .turn(&session, "What is TIMEOUT in settings.py?", "deny")
        .await;
    assert_ne!(outcome.status, CompletionStatus::Failed, "{outcome:?}");
    assert!(!llama.requests().is_empty(), "the turn reached the model");
    drop(client);

    assert!(
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let stopping = tokio::task::spawn_blocking(move || next_datagram(&notify))
        .await
        .unwrap();
    assert!(stopping.starts_with("STOPPING=1"), "{stopping}");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        socket.exists(),
        "the socket systemd bound is left to the .socket unit"
    );
}

/// Runs an activated `talosd` that must refuse to start; its stderr. One that starts anyway is
/// killed after a generous guard (not a speed check) so the test fails instead of hanging.
fn refused(home: &Path, launcher: &[&str], talosd: &[&str]) -> String {
    let mut child = activated(home, launcher, talosd, None);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "talosd started: {stderr}");
    stderr
}

#[test]
fn a_passed_socket_in_a_directory_others_can_write_is_refused() {
    let home = home_with("");
    let socket = home.path().join("open").join("talosd.sock");
    let socket = socket.to_str().unwrap();
    let stderr = refused(
        home.path(),
        &["--dir-mode", "777", socket],
        &["--socket", socket],
    );
    assert!(
        stderr.contains("cannot take the socket systemd passed"),
        "{stderr}"
    );
    assert!(stderr.contains("writable by group or others"), "{stderr}");
}

#[test]
fn a_passed_socket_on_another_path_than_talos_uses_is_refused() {
    let home = home_with("");
    let elsewhere = home.path().join("elsewhere").join("talosd.sock");
    let stderr = refused(home.path(), &[elsewhere.to_str().unwrap()], &[]);
    assert!(
        stderr.contains("cannot take the socket systemd passed"),
        "{stderr}"
    );
    assert!(stderr.contains("but talos connects to"), "{stderr}");
}

#[test]
fn a_socket_passed_to_another_process_is_not_taken() {
    // LISTEN_PID names someone else: talosd ignores the variables and binds by itself, finds
    // a live socket on its path (the one it did not take) and refuses to replace it.
    let home = home_with("");
    let socket = home.path().join("run").join("talosd.sock");
    let stderr = refused(
        home.path(),
        &["--listen-pid", "1", socket.to_str().unwrap()],
        &[],
    );
    assert!(stderr.contains("a live server already answers"), "{stderr}");
}

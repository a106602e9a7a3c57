//! A hostile local user (issue 11, defects 4 and 5): the real `talos` binary pointed at a socket
//! another uid planted (through `--socket`, through the default temp-dir path, and a listener of
//! another uid behind a directory and socket that are the user's own) refuses before sending a
//! byte and names the path and the owner; `talosd --socket` inside an existing world-writable
//! directory refuses and leaves that directory's mode alone. And the honest path still works:
//! `talos run` on the default temp-dir socket makes `talos-<uid>` 0700 and starts the daemon.
//!
//! The other uid is 65534 (`nobody`), which needs root to impersonate; without root those rows
//! print what they did not cover, and the unit rows of `talos_protocol::socket` and
//! `talos-cli/src/socket/guard.rs` cover the same decisions at the seam.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, timeout_workspace};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
const NOBODY: u32 = 65534;
const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";

/// A listener that answers every request like a daemon would, ending with a forged verified
/// edit, and appends every byte it receives to `record`.
const HOSTILE_LISTENER: &str = r#"
import json, os, socket, sys
path, record, ready = sys.argv[1:4]
open(record, "wb").close()
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o777)
server.listen(16)
open(ready, "w").close()
OUTCOME = {"classification": "COMPLETED_VERIFIED", "files": [{"changed": True,
    "detail": "Edited (13 bytes, +1 -1), verified", "path": "settings.py"}],
    "finalAnswer": "Changed TIMEOUT to 60.", "status": "COMPLETE",
    "traceId": "trc-38390b768239296c4e842bc3ebd19c46", "tracePath": "/nowhere.json",
    "turnId": "turn-0c008a11884e8166de2b05797f575bca"}
while True:
    conn, _ = server.accept()
    with conn, conn.makefile("rb") as lines:
        for line in lines:
            with open(record, "ab") as out:
                out.write(line)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "id" not in message or "method" not in message:
                continue
            method, params = message["method"], message.get("params") or {}
            if method == "initialize":
                result = {"protocolVersion": 1, "serverName": "talosd", "serverVersion": "0.1.0"}
            elif method == "session/list":
                result = {"sessions": []}
            elif method == "session/new":
                result = {"mode": params.get("mode", "agent"), "workspace": params.get("workspace", ""),
                          "sessionId": "ses-411463d90a750e5946987677402bbcca"}
            else:
                result = OUTCOME
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            conn.sendall((json.dumps(reply) + "\n").encode())
"#;

/// Whether this process runs as root (the owner of `/proc/self` is the effective uid).
fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").unwrap().uid() == 0
}

/// A temp dir that uid 65534 can traverse (tempfile makes them 0700).
fn traversable_tempdir(prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A directory owned by uid 65534 with `mode`.
fn plant_dir(path: &Path, mode: u32) {
    std::fs::create_dir(path).unwrap();
    std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The hostile listener, running as uid 65534 and killed when dropped.
struct Listener {
    child: Child,
    record: PathBuf,
}

impl Listener {
    /// Starts it on `socket`; its record and ready files go in `scratch` (owned by 65534).
    fn start(socket: &Path, scratch: &Path) -> Listener {
        let record = scratch.join("received.bin");
        let ready = scratch.join("ready");
        let child = Command::new("python3")
            .arg("-c")
            .arg(HOSTILE_LISTENER)
            .arg(socket)
            .arg(&record)
            .arg(&ready)
            .uid(NOBODY)
            .gid(NOBODY)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ready.exists() {
            assert!(
                Instant::now() < deadline,
                "the hostile listener did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Listener { child, record }
    }

    fn received(&self) -> Vec<u8> {
        std::fs::read(&self.record).unwrap()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the real `talos run` against the environment given (`TALOS_HOME`, `XDG_RUNTIME_DIR`
/// and `TMPDIR` removed first, so only what the row sets decides the socket).
fn talos_run(socket_flag: Option<&Path>, env: &[(&str, &Path)], workspace: &Path) -> Output {
    let mut command = Command::new(TALOS);
    if let Some(socket) = socket_flag {
        command.arg("--socket").arg(socket);
    }
    command
        .args(["run", "--workspace"])
        .arg(workspace)
        .arg(EDIT_REQUEST);
    talos_in(command, env, "")
}

/// Runs a prepared `talos` command in a clean socket environment plus `env`, feeding `stdin`.
fn talos_in(mut command: Command, env: &[(&str, &Path)], stdin: &str) -> Output {
    command
        .env_remove("TALOS_HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("TMPDIR")
        .env("TALOS_DAEMON", TALOSD)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// One refusal: exit 3, a message naming `path` and `owner_text`, nothing sent, nothing forged
/// printed.
fn check_refused(out: &Output, listener: &Listener, path: &Path, owner_text: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stderr.contains(&format!("refusing to talk to {}", path.display())),
        "{stderr}"
    );
    assert!(stderr.contains(owner_text), "{stderr}");
    assert!(
        !stdout.contains("COMPLETE") && !stderr.contains("COMPLETE"),
        "a forged outcome was printed: {stdout}{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&listener.received()),
        "",
        "the listener received bytes"
    );
}

fn skip(what: &str) -> bool {
    if running_as_root() {
        return false;
    }
    eprintln!("not covered (needs root to run a listener as uid {NOBODY}): {what}");
    true
}

/// Proves `talos --socket` refuses a socket in a directory another uid owns, before sending.
#[test]
fn a_socket_flag_into_a_planted_directory_is_refused_before_sending() {
    if skip("--socket into a directory and socket owned by another uid") {
        return;
    }
    let tmp = traversable_tempdir("th");
    let planted = tmp.path().join("planted");
    plant_dir(&planted, 0o755);
    let socket = planted.join("d.sock");
    let listener = Listener::start(&socket, &planted);
    let out = talos_run(Some(&socket), &[], tmp.path());
    check_refused(
        &out,
        &listener,
        &socket,
        &format!(
            "{} is owned by uid {NOBODY}, not by you (uid 0)",
            planted.display()
        ),
    );
}

/// Proves the default temp-dir socket (`$TMPDIR/talos-<uid>/talosd.sock`) planted by another
/// uid is refused before sending, and no daemon is started in its place.
#[test]
fn a_planted_default_temp_directory_is_refused_before_sending() {
    if skip("the default $TMPDIR/talos-<uid> directory planted by another uid") {
        return;
    }
    let tmp = traversable_tempdir("th");
    let planted = tmp.path().join("talos-0");
    plant_dir(&planted, 0o755);
    let socket = planted.join("talosd.sock");
    let listener = Listener::start(&socket, &planted);
    let out = talos_run(None, &[("TMPDIR", tmp.path())], tmp.path());
    check_refused(
        &out,
        &listener,
        &socket,
        &format!(
            "{} is owned by uid {NOBODY}, not by you (uid 0)",
            planted.display()
        ),
    );
    assert!(
        !planted.join("talosd.lock").exists(),
        "no daemon was started"
    );
}

/// Proves a listener of another uid is refused even behind a directory and a socket file that
/// are the user's own (the socket is bound by uid 65534, then moved into a private directory
/// and chowned to the user): the peer's credentials decide, before anything is sent.
#[test]
fn a_peer_of_another_uid_behind_my_own_socket_is_refused_before_sending() {
    if skip("a peer of another uid behind a directory and socket owned by me") {
        return;
    }
    let tmp = traversable_tempdir("th");
    let planted = tmp.path().join("planted");
    plant_dir(&planted, 0o755);
    let bound = planted.join("s.sock");
    let listener = Listener::start(&bound, &planted);
    let mine = tmp.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = mine.join("talosd.sock");
    std::fs::rename(&bound, &socket).unwrap();
    std::os::unix::fs::chown(&socket, Some(0), Some(0)).unwrap();
    let out = talos_run(Some(&socket), &[], tmp.path());
    check_refused(
        &out,
        &listener,
        &socket,
        &format!("runs as uid {NOBODY}, not as you (uid 0)"),
    );
}

/// Proves `talosd --socket` inside an existing world-writable sticky directory (like /tmp)
/// refuses with a message naming it, and leaves its mode 1777.
#[test]
fn talosd_socket_in_an_existing_shared_directory_is_refused_and_its_mode_kept() {
    let home = tempfile::Builder::new()
        .prefix("th")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        talos_tests::harness::offline(""),
    )
    .unwrap();
    let shared = home.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let mut daemon = Command::new(TALOSD)
        .arg("--foreground")
        .arg("--socket")
        .arg(shared.join("d.sock"))
        .env("TALOS_HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while daemon.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if daemon.try_wait().unwrap().is_none() {
        daemon.kill().unwrap();
    }
    let out = daemon.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is writable by group or others",
            shared.display()
        )) && stderr.contains("choose a --socket inside a private directory"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::metadata(&shared).unwrap().permissions().mode() & 0o7777,
        0o1777
    );
    assert!(!shared.join("d.sock").exists());
}

/// Proves the honest default still works: with neither `TALOS_HOME` nor `XDG_RUNTIME_DIR`,
/// `talos run` makes `$TMPDIR/talos-<uid>` 0700, starts the daemon there and carries an approved
/// edit; `talos stop` then stops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_run_on_the_default_temp_socket_makes_a_private_directory_and_starts_the_daemon() {
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            read_call("settings.py"),
            Reply::ToolCalls(vec![(
                "talos.edit_file".into(),
                r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                    .into(),
            )]),
            Reply::Text("TIMEOUT is now 60.".into()),
        ]),
    )
    .await;
    let tmp = tempfile::Builder::new()
        .prefix("th")
        .tempdir_in("/tmp")
        .unwrap();
    let (home, config, data) = (
        tmp.path().join("home"),
        tmp.path().join("config"),
        tmp.path().join("data"),
    );
    std::fs::create_dir_all(config.join("talos")).unwrap();
    std::fs::write(
        config.join("talos/config.yaml"),
        talos_tests::harness::offline(&TestDaemon::config_for(&llama.url, true)),
    )
    .unwrap();
    let ws = timeout_workspace();
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let run_dir = tmp.path().join(format!("talos-{uid}"));
    let (tmp_path, ws_path) = (tmp.path().to_path_buf(), ws.path().to_path_buf());
    let run = move |args: &[&str], stdin: &str| {
        let mut command = Command::new(TALOS);
        command.args(args);
        talos_in(
            command,
            &[
                ("TMPDIR", &tmp_path),
                ("HOME", &home),
                ("XDG_CONFIG_HOME", &config),
                ("XDG_DATA_HOME", &data),
            ],
            stdin,
        )
    };
    let workspace = ws_path.display().to_string();
    let out = tokio::task::spawn_blocking({
        let run = run.clone();
        move || run(&["run", "--workspace", &workspace, EDIT_REQUEST], "y\n")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    let mode = std::fs::symlink_metadata(&run_dir).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o700, "{}", run_dir.display());
    assert!(run_dir.join("talosd.sock").exists());
    let stop = tokio::task::spawn_blocking(move || run(&["stop"], ""))
        .await
        .unwrap();
    assert_eq!(
        stop.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while run_dir.join("talosd.sock").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!run_dir.join("talosd.sock").exists(), "talosd stopped");
}

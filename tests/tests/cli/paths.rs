//! Paths and terminals (issue 29, item 4), through the real binaries: `talos status --json`
//! prints a JSON value and `talos stop` exits 0 when no daemon runs; colour goes when
//! `TERM=dumb`, on a real pseudo-terminal; and without `TALOS_HOME` the daemon keeps its logs
//! under `$XDG_STATE_HOME` and the index under `$XDG_CACHE_HOME`, moving an old `logs/` and
//! `index/` from the data folder once.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use talos_tests::cli::{talos, text};
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{TestDaemon, offline, timeout_workspace};
use talos_tests::process::DaemonProcess;
use talos_tests::pty::Terminal;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

fn home_with(config: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("tp")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(home.path().join("config.yaml"), offline(config)).unwrap();
    home
}

/// Proves a machine asking for the status gets JSON either way: `{"running": false}` with exit
/// 0 when no daemon runs, the daemon's fields with `"running": true` when one does; and
/// `talos stop` with no daemon exits 0 and says so.
#[test]
fn status_json_and_stop_answer_when_no_daemon_runs() {
    let home = home_with("");
    let out = talos(home.path(), &["status", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status, serde_json::json!({"running": false}));
    let out = talos(home.path(), &["stop"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("talosd is not running"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("nothing to stop"));
    // The person's `talos status` still says it is not running, as an error (exit 2).
    let out = talos(home.path(), &["status"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("talosd is not running"));

    let daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::null());
    let out = talos(home.path(), &["status", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["pid"], daemon.child.id(), "{status}");
    let out = talos(home.path(), &["stop"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("talosd stopping"),
        "{}",
        text(&out.stdout)
    );
}

/// Proves colour follows the terminal's word: the same turn on a pty paints its status line
/// with `TERM=xterm` and writes no escape sequence at all with `TERM=dumb`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_colour_when_the_terminal_is_dumb() {
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            Reply::Text("settings.py sets TIMEOUT and RETRIES.".into()),
            Reply::Text("settings.py sets TIMEOUT and RETRIES.".into()),
        ]),
    )
    .await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let screens = tokio::task::spawn_blocking(move || {
        let mut screens = Vec::new();
        for term in ["xterm", "dumb"] {
            let mut t = Terminal::spawn(
                Path::new(TALOS),
                &[
                    "run",
                    "--mode",
                    "ask",
                    "--workspace",
                    ws_path.to_str().unwrap(),
                    "What does settings.py set?",
                ],
                &[
                    ("TALOS_HOME", &home_path),
                    ("TALOS_DAEMON", Path::new(TALOSD)),
                    ("NO_COLOR", Path::new("")),
                    ("TERM", Path::new(term)),
                ],
            );
            t.expect("trace", Duration::from_secs(30));
            // What follows the status line (the context footer) comes within moments.
            std::thread::sleep(Duration::from_millis(500));
            let screen = t.screen();
            let _ = t.wait(Duration::from_secs(30));
            screens.push(screen);
        }
        screens
    })
    .await
    .unwrap();
    let _ = talos(home.path(), &["stop"], "");
    assert!(
        screens[0].contains("\x1b["),
        "xterm: colour expected: {:?}",
        screens[0]
    );
    assert!(
        !screens[1].contains('\x1b'),
        "dumb: no escape expected: {:?}",
        screens[1]
    );
}

/// A user's XDG folders, all under one temporary directory.
struct Xdg {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Xdg {
    fn new() -> Xdg {
        let dir = tempfile::Builder::new()
            .prefix("tx")
            .tempdir_in("/tmp")
            .unwrap();
        let root = dir.path().to_path_buf();
        for sub in ["config/talos", "data", "state", "cache", "run"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::set_permissions(root.join("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(root.join("config/talos/config.yaml"), offline("")).unwrap();
        Xdg { _dir: dir, root }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env_remove("TALOS_HOME")
            .env("HOME", &self.root)
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("XDG_CACHE_HOME", self.root.join("cache"))
            .env("XDG_RUNTIME_DIR", self.root.join("run"))
            .env("TALOS_DAEMON", TALOSD);
        command
    }

    /// `talosd` detached (as `talos` starts it), then stopped.
    fn start_and_stop(&self) {
        let out = self.command(TALOSD).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = self.command(TALOS).arg("stop").output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let socket = self.root.join("run/talos/talosd.sock");
        let deadline = Instant::now() + Duration::from_secs(10);
        while socket.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Proves the move happens once: an old `index/` and `logs/` in the data folder go to
/// `$XDG_CACHE_HOME/talos/index` and `$XDG_STATE_HOME/talos/logs` with their contents, the new
/// log is written there, and an old folder that appears again later is left alone.
#[test]
fn an_old_index_and_log_folder_are_moved_once() {
    let xdg = Xdg::new();
    let data = xdg.root.join("data/talos");
    // A file, not a workspace's folder: retention removes index folders it cannot read.
    std::fs::create_dir_all(data.join("index")).unwrap();
    std::fs::write(data.join("index/marker"), "old index").unwrap();
    std::fs::create_dir_all(data.join("logs")).unwrap();
    std::fs::write(data.join("logs/talosd.log"), "an old line\n").unwrap();

    xdg.start_and_stop();
    let (index, logs) = (
        xdg.root.join("cache/talos/index"),
        xdg.root.join("state/talos/logs"),
    );
    assert_eq!(
        std::fs::read_to_string(index.join("marker")).unwrap(),
        "old index"
    );
    let log = std::fs::read_to_string(logs.join("talosd.log")).unwrap();
    assert!(log.starts_with("an old line\n"), "{log}");
    assert!(log.contains("moved"), "the move is logged: {log}");
    assert!(
        log.contains("talosd listening"),
        "the new log goes there too: {log}"
    );
    assert!(!data.join("index").exists() && !data.join("logs").exists());

    // A second start finds the new places in use and moves nothing.
    std::fs::create_dir_all(data.join("index")).unwrap();
    std::fs::write(data.join("index/again"), "left by an old talosd").unwrap();
    xdg.start_and_stop();
    assert!(
        data.join("index/again").exists(),
        "moved once, not on every start"
    );
    assert!(!index.join("again").exists());
    assert!(index.join("marker").exists());
}

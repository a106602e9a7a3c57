//! Faults from outside the protocol (issue 11): a stderr that cannot be written, special files
//! in the workspace, a full disk, and kill -9 at random moments after an approval. Each runs the
//! real `talosd` binary (or the in-process daemon where a process is not needed) against the
//! fake model.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

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

/// Every file under `dir` (not following links) whose name is a temporary shape.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(listing) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in listing.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            out.extend(leftovers(&path));
        } else if name.contains(".talos-tmp-") || name.contains(".tmp") {
            out.push(path);
        }
    }
    out
}

/// The manifests' recorded `before` blobs of `settings.py` in the home's checkpoint store.
fn checkpointed_befores(home: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for store in std::fs::read_dir(home.join("checkpoints"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for manifest in std::fs::read_dir(store.path().join("manifests"))
            .into_iter()
            .flatten()
            .flatten()
            // A killed daemon can leave a manifest's temporary file (the next start removes it).
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "json"))
        {
            let text = std::fs::read_to_string(manifest.path()).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            for file in value["files"].as_array().into_iter().flatten() {
                if file["relativePath"] == "settings.py"
                    && let Some(blob) = file["blobSha256"].as_str()
                {
                    let bytes = std::fs::read(store.path().join("objects").join(blob)).unwrap();
                    out.push(String::from_utf8(bytes).unwrap());
                }
            }
        }
    }
    out
}

/// A small xorshift: the kill moments, reproducible from the printed seed.
struct Moments(u64);

impl Moments {
    fn next_micros(&mut self, max: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % max
    }
}

/// Starts turn/start and answers its approval `approve`; returns once the answer is sent.
async fn approve_then_return(client: &mut Client, session: &str) {
    let start = json!({"jsonrpc": "2.0", "id": 77, "method": "turn/start", "params": {"sessionId": session, "prompt": EDIT_REQUEST}});
    client.send_line(&start.to_string()).await;
    loop {
        let message = client.read().await.expect("the daemon asks before it ends");
        if message.method.as_deref() == Some("approval/request") {
            let id = message.id.unwrap();
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"decision": "approve"}});
            client.send_line(&answer.to_string()).await;
            return;
        }
        assert!(
            message.id != Some(json!(77)),
            "the turn ended without asking: {message:?}"
        );
    }
}

/// Proves kill -9 at random moments after an approval never tears a file: it holds the old
/// bytes or the new, never a mix; every new file has its checkpoint; and the next daemon on the
/// same home starts, leaves no temporary file behind (workspace or home) and serves the next
/// turn. `TALOS_CRASH_LOOP=N` runs N injections (default 100).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nine_after_approval_never_tears_a_file_and_leaves_no_leftovers() {
    const OLD: &str = "TIMEOUT = 30\nRETRIES = 3\n";
    const NEW: &str = "TIMEOUT = 60\nRETRIES = 3\n";
    let runs: usize = std::env::var("TALOS_CRASH_LOOP")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash loop: {runs} injections, seed {seed}");
    let mut moments = Moments(seed);
    let llama = FakeLlama::start(true, edit_model()).await;
    let home = home_for(&llama.url);
    let ws = tempfile::Builder::new().prefix("wsk").tempdir().unwrap();
    let settings = ws.path().join("settings.py");
    let (mut old, mut new, mut swept) = (0, 0, 0);
    for run in 0..=runs {
        let daemon = DaemonProcess::start(TALOSD, home.path(), Stdio::null());
        let left: Vec<_> = leftovers(ws.path())
            .into_iter()
            .chain(leftovers(home.path()))
            .collect();
        assert!(
            left.is_empty(),
            "run {run}: leftovers after start: {left:?}"
        );
        let mut client = Client::connect(&daemon.socket).await;
        let session = client.open_session(ws.path(), "agent").await;
        if run == runs {
            // The daemon after the last crash serves a whole turn.
            std::fs::write(&settings, OLD).unwrap();
            let outcome = client.turn(&session, EDIT_REQUEST, "approve").await;
            assert_eq!(outcome.classification, Classification::CompletedVerified);
            break;
        }
        std::fs::write(&settings, OLD).unwrap();
        let befores = checkpointed_befores(home.path()).len();
        approve_then_return(&mut client, &session).await;
        tokio::time::sleep(Duration::from_micros(moments.next_micros(10_000))).await;
        daemon.kill9();
        swept += usize::from(!leftovers(ws.path()).is_empty());
        match std::fs::read_to_string(&settings).unwrap().as_str() {
            OLD => old += 1,
            NEW => {
                new += 1;
                let now = checkpointed_befores(home.path());
                assert!(
                    now.len() > befores && now.iter().any(|b| b == OLD),
                    "run {run}: a completed write has no checkpoint of the old bytes"
                );
            }
            torn => panic!("run {run}: torn file {torn:?}"),
        }
    }
    eprintln!(
        "crash loop: {old} old, {new} new, {swept} runs left a workspace temporary file (removed at the next start)"
    );
    assert_eq!(old + new, runs);
}

fn mknod(path: &Path, kind: rustix::fs::FileType, dev: u64) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        kind,
        rustix::fs::Mode::from_raw_mode(0o600),
        dev,
    )
    .unwrap();
}

/// Proves special files in a workspace never hold up the daemon: a FIFO named `settings.py`,
/// a FIFO as `.talos/profiles.yaml` and (when root, to make one) a character device that reads
/// forever are refused by name ("not a regular file") in a turn's reads and grep, in
/// `profile/list`, while another connection's `daemon/status` answers and the daemon stops.
/// Before issue 11 the FIFO read blocked a runtime worker for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_files_in_the_workspace_are_refused_and_never_block_the_daemon() {
    let model = Arc::new(|request: &Value| match tool_results(request) {
        0 => read_call("settings.py"),
        1 => read_call("zero.txt"),
        2 => Reply::ToolCalls(vec![(
            "talos.grep".into(),
            r#"{"pattern":"TIMEOUT"}"#.into(),
        )]),
        _ => Reply::Text("I could not read them.".into()),
    });
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::Builder::new().prefix("wsf").tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".talos")).unwrap();
    mknod(
        &ws.path().join("settings.py"),
        rustix::fs::FileType::Fifo,
        0,
    );
    mknod(
        &ws.path().join(".talos/profiles.yaml"),
        rustix::fs::FileType::Fifo,
        0,
    );
    let root = rustix::process::geteuid().is_root();
    if root {
        // /dev/zero's numbers: a read that never ends.
        let zero = rustix::fs::makedev(1, 5);
        mknod(
            &ws.path().join("zero.txt"),
            rustix::fs::FileType::CharacterDevice,
            zero,
        );
    } else {
        eprintln!("not root: the character-device case is not covered (mknod needs root)");
    }
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let outcome = client
        .turn(&session, "What does settings.py set TIMEOUT to?", "deny")
        .await;
    let last = serde_json::to_string(llama.requests().last().unwrap()).unwrap();
    let refusals = last.matches("not a regular file").count();
    assert!(refusals >= if root { 2 } else { 1 }, "{outcome:?}\n{last}");
    let profiles = client
        .call_with("profile/list", json!({"workspace": ws.path()}), |_| {
            talos_tests::harness::Answer::Ignore
        })
        .await
        .unwrap()
        .0;
    let text = serde_json::to_string(&profiles).unwrap();
    assert!(text.contains("not a regular file"), "{text}");
    let mut other = daemon.client().await;
    let status: DaemonStatusResult = other.request("daemon/status", json!({})).await;
    assert_eq!(status.active_turns, 0);
    daemon.stop().await;
}

/// A tmpfs mounted for the test's life (root only), on a temporary folder removed after it.
struct SmallDisk(PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::Builder::new()
            .prefix("tdisk")
            .tempdir_in("/tmp")
            .unwrap();
        let status = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .ok()?;
        status
            .success()
            .then(|| SmallDisk(dir.path().to_path_buf(), dir))
    }

    /// Writes until the disk is full.
    fn fill(&self) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.0.join("ballast")).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        while file.write_all(&chunk).is_ok() {}
        let _ = file.write_all(&[0u8; 512]);
        while file.write_all(&[0u8; 1]).is_ok() {}
    }

    fn free(&self) {
        std::fs::remove_file(self.0.join("ballast")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Proves a full disk under the Talos home gives the turn a clear error and writes nothing
/// (no checkpoint, no write), keeps the daemon serving, and that turns work again once there
/// is room. Needs root to mount a small tmpfs; otherwise it says what it did not cover.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_gives_the_turn_a_clear_error_and_writes_nothing() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("not root: the full-disk case is not covered (it mounts a small tmpfs)");
        return;
    }
    let Some(disk) = SmallDisk::mount("2m") else {
        eprintln!("cannot mount a tmpfs here: the full-disk case is not covered");
        return;
    };
    let llama = FakeLlama::start(true, edit_model()).await;
    std::fs::write(
        disk.0.join("config.yaml"),
        TestDaemon::config_for(&llama.url, true),
    )
    .unwrap();
    let daemon = DaemonProcess::start(TALOSD, &disk.0, Stdio::null());
    let ws = timeout_workspace();
    let settings = ws.path().join("settings.py");
    let mut client = Client::connect(&daemon.socket).await;
    let session = client.open_session(ws.path(), "agent").await;
    disk.fill();
    let (outcome, seen) = client
        .turn_with(
            &session,
            EDIT_REQUEST,
            talos_tests::harness::approve_all("approve"),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n",
        "nothing is written without its checkpoint"
    );
    assert_ne!(outcome.classification, Classification::CompletedVerified);
    let said = format!("{outcome:?} {:?}", seen);
    assert!(said.contains("No space left on device"), "{said}");
    let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
    assert_eq!(status.active_turns, 0);
    disk.free();
    let outcome = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(
        outcome.classification,
        Classification::CompletedVerified,
        "{outcome:?}"
    );
    daemon.kill9();
}

//! Issue 26 end to end: hostile ignore files in a workspace. A `.gitignore` linked to
//! `/dev/zero` or `/dev/urandom`, a 64 MiB one-line one, a FIFO, and one linked to a file of
//! patterns outside the workspace are never read: `index/search` (what `talos search` prints)
//! and a question turn answer at once, the patterns from outside do not apply, and the trace
//! names each file left unread (`IGNORE_FILE_NOT_READ`). A turn in a workspace with a FIFO
//! `.gitignore` that is cancelled ends, the real `talosd` ends on SIGTERM, and `talos doctor`
//! names the files it would not read.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{CompletionStatus, IndexSearchResult, TurnCancelResult};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{Client, TestDaemon, offline};

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
/// How long a search or a turn may take before the test says the daemon is stuck.
const PATIENCE: Duration = Duration::from_secs(20);

/// A workspace with two files holding "needle".
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("notes.txt"), "the needle is kept here\n").unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), "pub fn needle() {}\n").unwrap();
    ws
}

fn fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// Lets a reader blocked opening the FIFO at `path` go on (end of file), so a test of the
/// old behaviour fails with its message instead of hanging its runtime.
fn release(path: &Path) {
    let _ = rustix::fs::open(
        path,
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
        rustix::fs::Mode::empty(),
    );
}

/// `index/search` for "needle" in `ws`: the paths found, best first.
async fn search(client: &mut Client, ws: &Path) -> Vec<String> {
    let root = std::fs::canonicalize(ws).unwrap();
    let asked = client.request::<IndexSearchResult>(
        "index/search",
        json!({ "workspace": root, "query": "needle" }),
    );
    let found = tokio::time::timeout(PATIENCE, asked)
        .await
        .expect("index/search answers");
    let mut paths: Vec<String> = found.hits.into_iter().map(|h| h.path).collect();
    paths.sort();
    paths
}

/// A question turn in `ws` on `daemon`; its trace.
async fn question(daemon: &TestDaemon, ws: &Path) -> TraceRecord {
    let mut client = daemon.client().await;
    let session = client.open_session(ws, "agent").await;
    let turn = client.turn(&session, "Where is the needle kept?", "approve");
    let outcome = tokio::time::timeout(PATIENCE, turn)
        .await
        .expect("the turn ends");
    let traces = daemon.traces();
    traces
        .into_iter()
        .find(|t| t.turn_id == outcome.turn_id)
        .expect("the turn's trace")
}

/// The messages of the trace's `IGNORE_FILE_NOT_READ` warnings.
fn unread_warnings(trace: &TraceRecord) -> Vec<String> {
    trace
        .warnings
        .iter()
        .filter(|w| w.code == "IGNORE_FILE_NOT_READ")
        .map(|w| w.message.clone())
        .collect()
}

fn answering_model() -> talos_tests::fake_llama::Script {
    scripted(vec![
        read_call("notes.txt"),
        Reply::Text("The needle is kept in notes.txt.".into()),
    ])
}

/// A `.gitignore` linked to `device`: the search and a question turn answer, every file is
/// listed, and the trace says why the ignore file was left out.
async fn gitignore_linked_to(device: &str) {
    let llama = FakeLlama::start(true, answering_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = workspace();
    std::os::unix::fs::symlink(device, ws.path().join(".gitignore")).unwrap();
    let mut client = daemon.client().await;
    assert_eq!(
        search(&mut client, ws.path()).await,
        ["notes.txt", "src/lib.rs"]
    );
    let trace = question(&daemon, ws.path()).await;
    assert_eq!(
        unread_warnings(&trace),
        [
            "ignore file .gitignore was not read (refused: symlink leaves the workspace); its patterns do not apply"
        ]
    );
    daemon.stop().await;
}

/// Proves a `.gitignore` linked to `/dev/zero` (one endless line) is never read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitignore_linked_to_dev_zero_is_not_read() {
    gitignore_linked_to("/dev/zero").await;
}

/// Proves a `.gitignore` linked to `/dev/urandom` (endless lines, most not UTF-8) is never read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitignore_linked_to_dev_urandom_is_not_read() {
    gitignore_linked_to("/dev/urandom").await;
}

/// Proves a 64 MiB one-line `.gitignore` is not read (over the 256 KiB cap): the search and
/// the turn answer at once, the file its line names is still found, and the trace says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_mib_one_line_gitignore_is_left_out_with_a_warning() {
    let ws = workspace();
    let mut line = b"notes.txt".to_vec();
    line.resize(64 << 20, b'*');
    std::fs::write(ws.path().join(".gitignore"), line).unwrap();
    let llama = FakeLlama::start(true, answering_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let started = Instant::now();
    let trace = question(&daemon, ws.path()).await;
    assert_eq!(
        unread_warnings(&trace),
        [
            "ignore file .gitignore was not read (it is 65536 KiB, over the 256 KiB cap for ignore files); its patterns do not apply"
        ]
    );
    let mut client = daemon.client().await;
    assert_eq!(
        search(&mut client, ws.path()).await,
        ["notes.txt", "src/lib.rs"]
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    daemon.stop().await;
}

/// Proves a `.gitignore` linked to a file of patterns outside the workspace is not followed:
/// its patterns do not apply, so the files they name are found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitignore_linked_outside_the_workspace_does_not_apply() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("patterns"), "notes.txt\n*.rs\n").unwrap();
    let ws = workspace();
    std::os::unix::fs::symlink(
        outside.path().join("patterns"),
        ws.path().join(".gitignore"),
    )
    .unwrap();
    let llama = FakeLlama::start(true, answering_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    assert_eq!(
        search(&mut client, ws.path()).await,
        ["notes.txt", "src/lib.rs"]
    );
    daemon.stop().await;
}

/// Proves a turn in a workspace whose `.gitignore` is a FIFO, cancelled while it runs, ends
/// `CANCELLED` (the walk never opened the FIFO), and its trace names the FIFO.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_turn_with_a_fifo_gitignore_ends() {
    let ws = workspace();
    let pipe = ws.path().join(".gitignore");
    fifo(&pipe);
    let llama = Arc::new(FakeLlama::start(true, Arc::new(|_: &Value| Reply::Hang)).await);
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let mut other = daemon.client().await;
    other.call("initialize", json!({"clientName": "e2e"})).await;
    let asked = llama.clone();
    let cancelling = session.clone();
    let cancel = tokio::spawn(async move {
        // Once the model is asked, or after two seconds if the turn never gets that far.
        let deadline = Instant::now() + Duration::from_secs(2);
        while asked.requests().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        other
            .request::<TurnCancelResult>("turn/cancel", json!({"sessionId": cancelling}))
            .await
    });
    let turn = client.turn(&session, "Where is the needle kept?", "approve");
    let Ok(outcome) = tokio::time::timeout(PATIENCE, turn).await else {
        release(&pipe);
        panic!("the cancelled turn did not end");
    };
    assert!(cancel.await.unwrap().cancelled, "a turn was running");
    assert_eq!(outcome.status, CompletionStatus::Cancelled, "{outcome:?}");
    let trace = daemon.traces().pop().expect("a trace");
    assert_eq!(
        unread_warnings(&trace),
        [
            "ignore file .gitignore was not read (refused: not a regular file); its patterns do not apply"
        ]
    );
    daemon.stop().await;
}

fn home() -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("th")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(home.path().join("config.yaml"), offline("")).unwrap();
    home
}

/// Proves the real `talosd` answers `index/search` in a workspace whose `.gitignore` is a
/// FIFO, and ends on SIGTERM (no task of the walk is left blocked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_talosd_after_a_search_in_a_workspace_with_a_fifo_gitignore() {
    let ws = workspace();
    let pipe = ws.path().join(".gitignore");
    fifo(&pipe);
    let home = home();
    let mut daemon = talos_tests::process::DaemonProcess::start(TALOSD, home.path(), Stdio::null());
    let mut client = Client::connect(&daemon.socket).await;
    client.read_timeout = Duration::from_secs(60);
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "index/search",
        "params": {"workspace": root, "query": "needle"}});
    client.send_line(&line.to_string()).await;
    let answered = tokio::time::timeout(Duration::from_secs(5), client.read()).await;
    let signalled = Command::new("kill")
        .arg("-TERM")
        .arg(daemon.child.id().to_string())
        .status()
        .unwrap();
    assert!(signalled.success());
    let deadline = Instant::now() + PATIENCE;
    while daemon.alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let alive = daemon.alive();
    release(&pipe);
    assert!(!alive, "talosd ends on SIGTERM");
    let status = daemon.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let answer = answered.ok().flatten().expect("index/search was answered");
    assert!(answer.error.is_none(), "{answer:?}");
}

/// Proves `talos doctor` names the ignore files of the folder it runs in that the index would
/// not read, with why, as a warning (turns still run).
#[test]
fn talos_doctor_names_the_ignore_files_it_would_not_read() {
    let ws = workspace();
    fifo(&ws.path().join(".gitignore"));
    std::os::unix::fs::symlink("/dev/zero", ws.path().join("src/.ignore")).unwrap();
    let home = home();
    let out = Command::new(TALOS)
        .args(["doctor", "--json"])
        .current_dir(ws.path())
        .env("TALOS_HOME", home.path())
        .env("TALOS_DAEMON", TALOSD)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ignore files")
        .unwrap_or_else(|| panic!("no ignore files check: {report}"));
    assert_eq!(check["status"], "warn", "{check}");
    let detail = check["detail"].as_str().unwrap();
    for said in [
        "ignore file .gitignore was not read (refused: not a regular file)",
        "ignore file src/.ignore was not read (refused: symlink leaves the workspace)",
    ] {
        assert!(detail.contains(said), "{detail}");
    }
    assert!(
        check["fix"].as_str().unwrap().contains("256 KiB"),
        "{check}"
    );
}

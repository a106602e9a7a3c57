//! Issue 13, items 5 to 7 through the socket: the turn log beside each trace (and off by
//! config), `trace/list` and `trace/get` (with hostile ids), and the retention policy applied
//! by `daemon/gc` and at start (by age, by size, unreferenced checkpoint objects, checkpoints
//! left alone while a turn runs, symlinks never followed).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use talos_protocol::{
    Classification, CompletionStatus, DaemonGcResult, ErrorCode, GcCount, TraceGetResult,
    TraceListResult,
};
use talos_tests::cli::talos;
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{Answer, Client, TestDaemon, timeout_workspace};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.\nThanks!";
const EDIT_ARGS: &str =
    r#"{"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"}"#;
const DAY: u64 = 86_400;

fn edit_model() -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    scripted(vec![
        read_call("settings.py"),
        Reply::ToolCalls(vec![("talos.edit_file".into(), EDIT_ARGS.into())]),
        Reply::Text("I have updated settings.py: TIMEOUT is now 60.".into()),
    ])
}

async fn edit_daemon(extra_config: &str) -> (FakeLlama, TestDaemon) {
    let llama = FakeLlama::start(true, edit_model()).await;
    let config = format!("{}{extra_config}", TestDaemon::config_for(&llama.url, true));
    (llama, TestDaemon::start(&config).await)
}

/// The error code of a call that must fail.
async fn error_of(client: &mut Client, method: &str, params: Value) -> (i64, String) {
    let (response, _) = client
        .call_with(method, params, |_| Answer::Ignore)
        .await
        .unwrap();
    let error = response
        .error
        .unwrap_or_else(|| panic!("{method} succeeded: {:?}", response.result));
    (error.code, error.message)
}

fn id(prefix: &str, n: u64) -> String {
    format!("{prefix}-{n:032x}")
}

/// Sets a file's modification time to `days` ago.
fn age(path: &Path, days: u64) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(days * DAY))
        .unwrap();
}

/// A trace (and optionally its turn log) of `bytes` bytes each under `home`, `days` old.
fn plant_turn(home: &Path, session: &str, trace: &str, bytes: usize, days: u64, log: bool) {
    let dir = home.join("traces").join(session);
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = vec![dir.join(format!("000001-{trace}.json"))];
    if log {
        paths.push(dir.join(format!("000001-{trace}.log")));
    }
    for path in paths {
        std::fs::write(&path, "x".repeat(bytes)).unwrap();
        age(&path, days);
    }
}

/// A checkpoint manifest created `days` ago referencing `objects`, and those objects.
fn plant_checkpoint(home: &Path, ws: &str, checkpoint: &str, days: u64, objects: &[(&str, usize)]) {
    let dir = home.join("checkpoints").join(ws);
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::create_dir_all(dir.join("objects")).unwrap();
    for (sha, bytes) in objects {
        std::fs::write(dir.join("objects").join(sha), "o".repeat(*bytes)).unwrap();
    }
    let created = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        - days * DAY * 1000;
    let files: Vec<Value> = objects
        .iter()
        .map(|(sha, _)| json!({"relativePath": "a.txt", "blobSha256": sha}))
        .collect();
    let manifest = json!({"checkpointId": checkpoint, "createdAtMs": created, "files": files});
    std::fs::write(
        dir.join("manifests").join(format!("{checkpoint}.json")),
        manifest.to_string(),
    )
    .unwrap();
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(files_under(&entry.path()));
        } else {
            out.push(entry.path());
        }
    }
    out.sort();
    out
}

/// Proves the turn log holds the request and the committed answer beside the trace (which keeps
/// neither), and that trace/list and trace/get give both back by workspace and by session.
#[tokio::test]
async fn the_turn_log_keeps_the_words_and_trace_list_and_get_read_them_back() {
    let (_llama, daemon) = edit_daemon("").await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(first.classification, Classification::CompletedVerified);
    let second = client.turn(&session, "undo your last change", "deny").await;

    let logs = daemon.turn_logs();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let (path, log) = &logs[0];
    assert!(
        path.to_string_lossy()
            .ends_with(&format!("/{session}/000001-{}.log", first.trace_id)),
        "{path:?}"
    );
    assert!(log.contains(EDIT_REQUEST), "{log}");
    assert!(log.contains(&first.final_answer), "{log}");
    assert!(
        log.contains("outcome: COMPLETE (COMPLETED_VERIFIED)"),
        "{log}"
    );
    for trace in daemon.trace_texts() {
        assert!(!trace.contains("change TIMEOUT from 30"), "{trace}");
    }

    let canonical = std::fs::canonicalize(ws.path()).unwrap();
    let by_workspace: TraceListResult = client
        .request("trace/list", json!({"workspace": canonical}))
        .await;
    let ids: Vec<&str> = by_workspace
        .traces
        .iter()
        .map(|t| t.trace_id.as_str())
        .collect();
    assert_eq!(ids, [second.trace_id.as_str(), first.trace_id.as_str()]);
    let newest = &by_workspace.traces[0];
    assert_eq!(
        (
            newest.turn_number,
            newest.session_id.as_str(),
            newest.status
        ),
        (2, session.as_str(), second.status)
    );
    assert_eq!(
        by_workspace.traces[1].request.as_deref(),
        Some("In settings.py, change TIMEOUT from 30 to 60."),
        "the first line of the request"
    );
    let limited: TraceListResult = client
        .request("trace/list", json!({"sessionId": session, "limit": 1}))
        .await;
    assert_eq!(limited.traces.len(), 1);
    assert_eq!(limited.traces[0].trace_id, second.trace_id);
    let elsewhere = tempfile::tempdir().unwrap();
    let none: TraceListResult = client
        .request("trace/list", json!({"workspace": elsewhere.path()}))
        .await;
    assert!(none.traces.is_empty());

    let got: TraceGetResult = client
        .request("trace/get", json!({"traceId": first.trace_id}))
        .await;
    assert_eq!(got.trace.trace_id, first.trace_id);
    assert_eq!(got.trace.outcome.status, CompletionStatus::Complete);
    assert!(!got.trace.tool_calls.is_empty());
    assert_eq!(got.turn_log.as_deref(), Some(log.as_str()));
    daemon.stop().await;
}

/// Proves `traces.turn_log: false` writes no turn log, and trace/list and trace/get say so.
#[tokio::test]
async fn the_turn_log_is_off_by_config() {
    let (_llama, daemon) = edit_daemon("traces:\n  turn_log: false\n").await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let outcome = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(outcome.status, CompletionStatus::Complete);
    assert!(daemon.turn_logs().is_empty());
    assert_eq!(daemon.traces().len(), 1);
    let listed: TraceListResult = client
        .request("trace/list", json!({"sessionId": session}))
        .await;
    assert_eq!(listed.traces.len(), 1);
    assert_eq!(listed.traces[0].request, None);
    let got: TraceGetResult = client
        .request("trace/get", json!({"traceId": outcome.trace_id}))
        .await;
    assert_eq!(got.turn_log, None);
    daemon.stop().await;
}

/// Proves hostile ids are refused before the disk is looked at and that no id reaches a trace
/// outside the session folders (a traversal, a symlinked session folder, a file in the home).
#[tokio::test]
async fn hostile_trace_ids_reach_nothing_outside_the_traces() {
    let outside = tempfile::tempdir().unwrap();
    let planted = id("trc", 7);
    std::fs::write(
        outside.path().join(format!("000001-{planted}.json")),
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../protocol/tests/fixtures/trace/record.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let target = outside.path().to_path_buf();
    let daemon = TestDaemon::start_prepared("", |home| {
        std::os::unix::fs::symlink(&target, home.join("traces").join(id("ses", 1))).unwrap();
        std::fs::write(home.join(format!("000001-{}.json", id("trc", 8))), "{}").unwrap();
    })
    .await;
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let invalid = ErrorCode::InvalidParams.code();
    for hostile in [
        "../config.yaml".to_string(),
        "trc-../../../../etc/passwd".to_string(),
        format!("{planted}/../x"),
        format!("../{planted}"),
        "/etc/passwd".to_string(),
        format!("{planted}\u{0}"),
        planted.to_uppercase(),
        String::new(),
    ] {
        let (code, message) = error_of(&mut client, "trace/get", json!({"traceId": hostile})).await;
        assert_eq!(code, invalid, "{hostile:?}: {message}");
        assert!(message.starts_with("invalid traceId"), "{message}");
    }
    for unreachable in [planted.clone(), id("trc", 8)] {
        let (code, message) =
            error_of(&mut client, "trace/get", json!({"traceId": unreachable})).await;
        assert_eq!(
            (code, message),
            (invalid, format!("no trace {unreachable}"))
        );
    }
    for params in [
        json!({}),
        json!({"sessionId": "../traces"}),
        json!({"sessionId": "ses-1/../../x"}),
    ] {
        let (code, _) = error_of(&mut client, "trace/list", params.clone()).await;
        assert_eq!(code, invalid, "{params}");
    }
    let listed: TraceListResult = client
        .request("trace/list", json!({"sessionId": id("ses", 1)}))
        .await;
    assert!(
        listed.traces.is_empty(),
        "a symlinked session folder is not read"
    );
    daemon.stop().await;
}

/// Proves daemon/gc removes what is past the age limit (traces, turn logs, checkpoint manifests,
/// the objects only they referenced and objects no manifest references) and keeps a fresh
/// turn's trace, turn log, manifest and the object it shares with an old manifest.
#[tokio::test]
async fn gc_prunes_by_age_and_removes_unreferenced_objects_only() {
    let (_llama, daemon) = edit_daemon("").await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let fresh = client.turn(&session, EDIT_REQUEST, "approve").await;
    assert_eq!(fresh.status, CompletionStatus::Complete);
    let home = daemon.home.path();
    let objects = daemon.checkpoint_objects();
    assert_eq!(objects.len(), 1, "{objects:?}");
    let shared = objects[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let ws_folder = objects[0]
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let old_session = id("ses", 2);
    plant_turn(home, &old_session, &id("trc", 2), 100, 40, true);
    plant_checkpoint(
        home,
        &ws_folder,
        &id("chk", 3),
        40,
        &[("a1", 10), (&shared, 0)],
    );
    std::fs::write(
        home.join("checkpoints")
            .join(&ws_folder)
            .join("objects/orphan"),
        "zz",
    )
    .unwrap();
    let before = files_under(home);

    let gc: DaemonGcResult = client.request("daemon/gc", json!({})).await;
    assert_eq!(
        gc.traces,
        GcCount {
            files: 1,
            bytes: 100
        }
    );
    assert_eq!(
        gc.turn_logs,
        GcCount {
            files: 1,
            bytes: 100
        }
    );
    assert_eq!(gc.checkpoints.files, 1);
    assert_eq!(
        gc.checkpoint_objects,
        GcCount {
            files: 2,
            bytes: 12
        }
    );
    assert!(!gc.checkpoints_deferred);
    assert_eq!((gc.max_age_days, gc.max_bytes), (30, 1 << 30));

    let after = files_under(home);
    let removed: Vec<String> = before
        .iter()
        .filter(|p| !after.contains(p))
        .map(|p| p.strip_prefix(home).unwrap().display().to_string())
        .collect();
    let checkpoints = format!("checkpoints/{ws_folder}");
    assert_eq!(
        removed,
        [
            format!("{checkpoints}/manifests/{}.json", id("chk", 3)),
            format!("{checkpoints}/objects/a1"),
            format!("{checkpoints}/objects/orphan"),
            format!("traces/{old_session}/000001-{}.json", id("trc", 2)),
            format!("traces/{old_session}/000001-{}.log", id("trc", 2)),
        ]
    );
    assert!(
        !home.join("traces").join(&old_session).exists(),
        "emptied session folder"
    );
    assert_eq!(
        daemon.checkpoint_objects(),
        objects,
        "the referenced object is kept"
    );
    assert_eq!(daemon.traces().len(), 1);
    assert_eq!(daemon.turn_logs().len(), 1);
    daemon.stop().await;
}

/// Proves that over `retention.max_bytes` the oldest go first (a checkpoint with its object,
/// then the oldest turn) until the rest fits, and that it already happens when the daemon starts.
#[tokio::test]
async fn gc_prunes_oldest_first_by_size_and_at_start() {
    let plant = |home: &Path| {
        for (n, days) in [(1, 3), (2, 2), (3, 1)] {
            plant_turn(home, &id("ses", 1), &id("trc", n), 1000, days, false);
        }
        plant_checkpoint(home, "w1", &id("chk", 1), 4, &[("big", 500)]);
    };
    let daemon = TestDaemon::start_prepared("retention:\n  max_bytes: 2500\n", plant).await;
    let home = daemon.home.path().to_path_buf();
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let left: Vec<String> = files_under(&home.join("traces"))
        .iter()
        .chain(&files_under(&home.join("checkpoints")))
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(
        left,
        [
            format!("000001-{}.json", id("trc", 2)),
            format!("000001-{}.json", id("trc", 3)),
        ],
        "pruned at start, before the first request"
    );

    plant(&home);
    let gc: DaemonGcResult = client.request("daemon/gc", json!({})).await;
    assert_eq!(
        gc.traces,
        GcCount {
            files: 1,
            bytes: 1000
        }
    );
    assert_eq!(
        gc.checkpoint_objects,
        GcCount {
            files: 1,
            bytes: 500
        }
    );
    assert_eq!(gc.checkpoints.files, 1);
    assert_eq!(gc.bytes_after, 2000);
    assert!(
        !home
            .join(format!(
                "traces/{}/000001-{}.json",
                id("ses", 1),
                id("trc", 1)
            ))
            .exists()
    );
    let again: DaemonGcResult = client.request("daemon/gc", json!({})).await;
    assert_eq!(
        (
            again.traces.files,
            again.checkpoints.files,
            again.bytes_after
        ),
        (0, 0, 2000)
    );
    daemon.stop().await;
}

/// Proves that while a turn runs, daemon/gc prunes old traces but leaves checkpoints alone
/// (reported as deferred), and prunes them once no turn runs.
#[tokio::test]
async fn while_a_turn_runs_checkpoints_are_deferred() {
    let llama = FakeLlama::start(true, Arc::new(|_: &Value| Reply::Hang)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let home = daemon.home.path().to_path_buf();
    let ws = timeout_workspace();
    let mut runner = daemon.client().await;
    let session = runner.open_session(ws.path(), "agent").await;
    let turn = tokio::spawn(async move {
        runner
            .turn(&session, "What does settings.py set?", "deny")
            .await
    });
    // Waits (a condition, not a duration) until the turn is asking the model.
    talos_tests::cli::wait_until_async(
        "!llama.requests().is_empty()",
        Duration::from_secs(30),
        || !llama.requests().is_empty(),
    )
    .await;
    assert!(!llama.requests().is_empty(), "the turn reached the model");
    plant_turn(&home, &id("ses", 9), &id("trc", 9), 10, 40, true);
    plant_checkpoint(&home, "w9", &id("chk", 9), 40, &[("old", 5)]);
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let during: DaemonGcResult = client.request("daemon/gc", json!({})).await;
    assert!(during.checkpoints_deferred);
    assert_eq!((during.traces.files, during.turn_logs.files), (1, 1));
    assert_eq!(
        (during.checkpoints.files, during.checkpoint_objects.files),
        (0, 0)
    );
    assert!(home.join("checkpoints/w9/objects/old").exists());

    daemon.daemon.stopping.cancel();
    let outcome = turn.await.unwrap();
    assert_eq!(outcome.status, CompletionStatus::Cancelled);
    let after: DaemonGcResult = talosd::gc::run_once(&daemon.daemon).unwrap();
    assert!(!after.checkpoints_deferred);
    assert_eq!(
        (after.checkpoints.files, after.checkpoint_objects.files),
        (1, 1)
    );
    daemon.stop().await;
}

/// Proves gc follows no symlink out of the home: a symlinked session folder, objects folder or
/// trace file pointing at old files elsewhere leaves those files in place.
#[tokio::test]
async fn gc_never_follows_a_symlink_out_of_the_home() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join(format!("000001-{}.json", id("trc", 5)));
    std::fs::write(&victim, "keep me").unwrap();
    age(&victim, 400);
    let daemon = TestDaemon::start_prepared("retention:\n  max_bytes: 1\n", |home| {
        let traces = home.join("traces");
        std::os::unix::fs::symlink(outside.path(), traces.join(id("ses", 5))).unwrap();
        std::fs::create_dir_all(traces.join(id("ses", 6))).unwrap();
        std::os::unix::fs::symlink(
            &victim,
            traces
                .join(id("ses", 6))
                .join(format!("000001-{}.json", id("trc", 6))),
        )
        .unwrap();
        let ws = home.join("checkpoints/w5");
        std::fs::create_dir_all(ws.join("manifests")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.join("objects")).unwrap();
    })
    .await;
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let gc: DaemonGcResult = client.request("daemon/gc", json!({})).await;
    assert_eq!(gc.traces.files + gc.checkpoint_objects.files, 0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    daemon.stop().await;
}

/// Proves nothing is pruned while the configuration is invalid: daemon/gc is refused.
#[tokio::test]
async fn gc_is_refused_while_the_configuration_is_invalid() {
    let daemon = TestDaemon::start_prepared("retention:\n  max_bytes: 0\n", |home| {
        plant_turn(home, &id("ses", 4), &id("trc", 4), 10, 400, false);
    })
    .await;
    let mut client = daemon.client().await;
    client.call("initialize", json!({})).await;
    let (code, message) = error_of(&mut client, "daemon/gc", json!({})).await;
    assert_eq!(code, ErrorCode::ConfigError.code());
    assert!(message.contains("retention.max_bytes"), "{message}");
    assert_eq!(files_under(&daemon.home.path().join("traces")).len(), 1);
    daemon.stop().await;
}

// --- the real binaries: `talos trace`, `talos trace show`, `talos gc` ---------------------------

fn text(out: &std::process::Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Proves `talos trace` lists the workspace's turns with the first line of the request,
/// `talos trace show ID` renders the turn for a person (and `--json` prints the record), a
/// hostile id is refused, and `talos gc` reports what it removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_trace_and_talos_gc_through_the_binaries() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let home = tempfile::Builder::new()
        .prefix("tc")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        TestDaemon::config_for(&llama.url, true),
    )
    .unwrap();
    let ws = timeout_workspace();
    let home_path = home.path().to_path_buf();
    let workspace = ws.path().display().to_string();
    let run = {
        let (home_path, workspace) = (home_path.clone(), workspace.clone());
        tokio::task::spawn_blocking(move || {
            talos(
                &home_path,
                &["run", "--workspace", &workspace, EDIT_REQUEST],
                "y\n",
            )
        })
        .await
        .unwrap()
    };
    assert_eq!(run.status.code(), Some(0), "{:?}", text(&run));

    let (code, listed, stderr) = text(&talos(
        &home_path,
        &["trace", "--workspace", &workspace],
        "",
    ));
    assert_eq!(code, Some(0), "{stderr}");
    let mut lines = listed.lines();
    assert!(lines.next().unwrap().starts_with("when (UTC)"), "{listed}");
    let row = lines.next().unwrap();
    assert!(
        row.contains("COMPLETE") && row.ends_with("In settings.py, change TIMEOUT from 30 to 60."),
        "{listed}"
    );
    let trace_id = row.split_whitespace().nth(2).unwrap().to_string();
    assert!(trace_id.starts_with("trc-"), "{row}");

    let (code, shown, stderr) = text(&talos(&home_path, &["trace", "show", &trace_id], ""));
    assert_eq!(code, Some(0), "{stderr}");
    for part in [
        "Request\n  In settings.py, change TIMEOUT from 30 to 60.\n  Thanks!\n",
        "Contract\n  FILE_EDIT",
        "talos.edit_file settings.py [native]: executed\n      ladder: ask (DEFAULT_WRITE_ASK)\n      approval: approve by client",
        "Checkpoints\n  call-",
        "Verification\n  call-",
        "Answer\n  ",
    ] {
        assert!(shown.contains(part), "{part:?} in:\n{shown}");
    }
    assert!(!shown.contains('\u{1b}'), "NO_COLOR: {shown}");

    let (code, json_out, _) = text(&talos(
        &home_path,
        &["trace", "show", &trace_id, "--json"],
        "",
    ));
    assert_eq!(code, Some(0));
    let record: talos_protocol::trace::TraceRecord = serde_json::from_str(&json_out).unwrap();
    assert_eq!(record.trace_id, trace_id);

    let (code, _, stderr) = text(&talos(
        &home_path,
        &["trace", "show", "../../config.yaml"],
        "",
    ));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("invalid traceId"), "{stderr}");

    let (code, report, stderr) = text(&talos(&home_path, &["gc"], ""));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(report.starts_with("Removed\n  traces: 0 files"), "{report}");
    assert!(report.contains("(limits: 30 days, 1.0 GiB)"), "{report}");
    let (code, _, _) = text(&talos(&home_path, &["stop"], ""));
    assert_eq!(code, Some(0));
}

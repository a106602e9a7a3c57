//! Checkpoints a person can use, through the socket: `turn/undo` restores a whole turn as one
//! approval, a conflicting external change is shown and never overwritten silently, a denied
//! restore changes nothing, an undo is undone through its safety checkpoint, paths that escape
//! (a hostile manifest, a symlink swapped in while the approval is open) are refused at the
//! moment of IO, `checkpoint.max_file_bytes` fails closed, and "undo your last change" in words
//! restores nothing and names the commands.

use std::path::Path;

use serde_json::{Value, json};
use talos_protocol::{
    ApprovalRequestParams, CheckpointListResult, CheckpointShowResult, Decision, RestoreAction,
    RestoreOutcome, RestoreResult,
};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted, write_call};
use talos_tests::harness::{Answer, Client, TestDaemon, approvals, approve_all, decode};

struct Setup {
    _llama: FakeLlama,
    daemon: TestDaemon,
    dir: tempfile::TempDir,
    client: Client,
    session: String,
}

/// A workspace with `a.txt` and `b.txt`, and one approved agent turn that rewrites both and
/// creates `c.txt` (three checkpoints of one turn).
async fn three_file_turn(extra_config: &str) -> Setup {
    let steps = vec![
        read_call("a.txt"),
        write_call("a.txt", "ALPHA\n"),
        read_call("b.txt"),
        write_call("b.txt", "BETA\n"),
        write_call("c.txt", "new\n"),
        Reply::Text("Done.".into()),
    ];
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let config = format!("{}{extra_config}", TestDaemon::config_for(&llama.url, true));
    let daemon = TestDaemon::start(&config).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta\n").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(dir.path(), "agent").await;
    let outcome = client
        .turn(
            &session,
            "Rewrite a.txt and b.txt in upper case, and create c.txt",
            "approve",
        )
        .await;
    let setup = Setup {
        _llama: llama,
        daemon,
        dir,
        client,
        session,
    };
    assert_eq!(setup.read("a.txt"), "ALPHA\n", "{outcome:?}");
    assert_eq!(setup.read("b.txt"), "BETA\n", "{outcome:?}");
    assert_eq!(setup.read("c.txt"), "new\n", "{outcome:?}");
    setup
}

impl Setup {
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap_or_else(|_| "<absent>".into())
    }

    /// Calls a restore method answering its approval with `decision`; the result and the
    /// approvals asked.
    async fn restore(
        &mut self,
        method: &str,
        params: Value,
        decision: &'static str,
    ) -> (RestoreResult, Vec<ApprovalRequestParams>) {
        let (response, seen) = self
            .client
            .call_with(method, params, approve_all(decision))
            .await
            .unwrap();
        assert!(response.error.is_none(), "{method}: {:?}", response.error);
        (decode(method, response.result.unwrap()), approvals(&seen))
    }

    async fn undo(
        &mut self,
        decision: &'static str,
    ) -> (RestoreResult, Vec<ApprovalRequestParams>) {
        let params = json!({"sessionId": self.session});
        self.restore("turn/undo", params, decision).await
    }

    fn manifests(&self) -> usize {
        let root = self.daemon.home.path().join("checkpoints");
        std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|ws| {
                std::fs::read_dir(ws.path().join("manifests"))
                    .into_iter()
                    .flatten()
            })
            .count()
    }
}

fn action_of(result: &RestoreResult, path: &str) -> (RestoreAction, RestoreOutcome, bool) {
    let file = result
        .files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path} in {result:?}"));
    (file.action, file.outcome, file.conflict)
}

/// Proves `turn/undo` restores every file of the last changing turn (two restored, the created
/// one deleted) after one approval that lists each path.
#[tokio::test]
async fn undo_restores_a_three_file_turn_as_one_approved_unit() {
    let mut s = three_file_turn("").await;
    let (result, asked) = s.undo("approve").await;
    assert_eq!(asked.len(), 1, "one approval for the whole turn");
    assert_eq!(asked[0].tool, "talos.restore");
    assert!(!asked[0].remember_eligible);
    let details = asked[0].details.join("\n");
    assert!(details.contains("restored: a.txt"), "{details}");
    assert!(details.contains("restored: b.txt"), "{details}");
    assert!(
        details.contains("deleted: c.txt (it did not exist before)"),
        "{details}"
    );
    let diff = asked[0].diff.as_ref().expect("the approval shows the diff");
    assert!(
        diff.text.contains("=== a.txt (restored)")
            && diff.text.contains("-ALPHA\n+alpha")
            && diff.text.contains("=== c.txt (deleted)"),
        "{}",
        diff.text
    );
    assert_eq!(result.checkpoint_ids.len(), 3, "{result:?}");
    assert_eq!(result.decision, Some(Decision::Approve));
    assert!(result.safety_checkpoint_id.is_some());
    assert_eq!(s.read("a.txt"), "alpha\n");
    assert_eq!(s.read("b.txt"), "beta\n");
    assert_eq!(s.read("c.txt"), "<absent>");
    for path in ["a.txt", "b.txt", "c.txt"] {
        assert_eq!(action_of(&result, path).1, RestoreOutcome::Done, "{path}");
    }
    s.daemon.stop().await;
}

/// Proves an undo can itself be undone by restoring its safety checkpoint, and that the next
/// undo goes further back (here: nothing left) instead of undoing the same turn again.
#[tokio::test]
async fn an_undo_is_undone_through_its_safety_checkpoint() {
    let mut s = three_file_turn("").await;
    let (undone, _) = s.undo("approve").await;
    let safety = undone.safety_checkpoint_id.clone().unwrap();
    let (redone, asked) = s
        .restore(
            "checkpoint/restore",
            json!({"checkpointId": safety, "sessionId": s.session}),
            "approve",
        )
        .await;
    assert_eq!(asked.len(), 1);
    assert_eq!(redone.decision, Some(Decision::Approve), "{redone:?}");
    assert_eq!(s.read("a.txt"), "ALPHA\n");
    assert_eq!(s.read("b.txt"), "BETA\n");
    assert_eq!(s.read("c.txt"), "new\n");
    let (response, _) = s
        .client
        .call_with(
            "turn/undo",
            json!({"sessionId": s.session}),
            approve_all("approve"),
        )
        .await
        .unwrap();
    let error = response.error.expect("nothing left to undo");
    assert!(
        error.message.contains("no turn that changed files"),
        "{error:?}"
    );
    s.daemon.stop().await;
}

/// Proves a file changed by someone else since the turn is shown as a conflict and kept,
/// while the rest of the turn is restored; and that only `overwriteConflicts` with the
/// conflict shown replaces it.
#[tokio::test]
async fn a_conflicting_external_change_is_shown_and_never_overwritten_silently() {
    let mut s = three_file_turn("").await;
    std::fs::write(s.dir.path().join("b.txt"), "someone else\n").unwrap();
    let (result, asked) = s.undo("approve").await;
    let details = asked[0].details.join("\n");
    assert!(details.contains("CONFLICT, skipped: b.txt"), "{details}");
    assert!(
        asked[0].description.contains("1 conflict"),
        "{}",
        asked[0].description
    );
    assert_eq!(s.read("b.txt"), "someone else\n", "kept");
    assert_eq!(s.read("a.txt"), "alpha\n");
    assert_eq!(s.read("c.txt"), "<absent>");
    assert_eq!(
        action_of(&result, "b.txt"),
        (RestoreAction::SkipConflict, RestoreOutcome::NotDone, true)
    );

    // The same conflict, asked to overwrite: the approval says so, and approving replaces it.
    let safety = result.safety_checkpoint_id.unwrap();
    let checkpoint = result.checkpoint_ids[1].clone();
    let (shown, _) = s
        .restore(
            "checkpoint/restore",
            json!({"checkpointId": safety}),
            "approve",
        )
        .await;
    assert_eq!(shown.decision, Some(Decision::Approve));
    assert_eq!(s.read("a.txt"), "ALPHA\n");
    let (forced, asked) = s
        .restore(
            "checkpoint/restore",
            json!({"checkpointId": checkpoint, "overwriteConflicts": true}),
            "approve",
        )
        .await;
    let details = asked[0].details.join("\n");
    assert!(
        details.contains("your version will be overwritten: restored: b.txt"),
        "{details}"
    );
    assert_eq!(
        action_of(&forced, "b.txt"),
        (RestoreAction::Restore, RestoreOutcome::Done, true)
    );
    assert_eq!(s.read("b.txt"), "beta\n");
    s.daemon.stop().await;
}

/// Proves a denied restore changes nothing: no file, and no new checkpoint.
#[tokio::test]
async fn a_denied_restore_changes_nothing() {
    let mut s = three_file_turn("").await;
    let before = s.manifests();
    let (result, asked) = s.undo("deny").await;
    assert_eq!(asked.len(), 1);
    assert_eq!(result.decision, Some(Decision::Deny));
    assert!(result.safety_checkpoint_id.is_none());
    assert!(
        result
            .files
            .iter()
            .all(|f| f.outcome == RestoreOutcome::NotDone)
    );
    assert_eq!(s.read("a.txt"), "ALPHA\n");
    assert_eq!(s.read("b.txt"), "BETA\n");
    assert_eq!(s.read("c.txt"), "new\n");
    assert_eq!(s.manifests(), before);
    s.daemon.stop().await;
}

/// Proves `checkpoint/list` lists the turn's checkpoints newest first with their session,
/// turn and trigger, and `checkpoint/show` diffs the captured file against the disk now.
#[tokio::test]
async fn checkpoints_are_listed_newest_first_and_shown_with_a_diff() {
    let mut s = three_file_turn("").await;
    let listed: CheckpointListResult = s
        .client
        .request("checkpoint/list", json!({"workspace": s.dir.path()}))
        .await;
    let paths: Vec<&str> = listed
        .checkpoints
        .iter()
        .map(|c| c.paths[0].as_str())
        .collect();
    assert_eq!(paths, ["c.txt", "b.txt", "a.txt"]);
    let first = &listed.checkpoints[2];
    assert_eq!(first.session_id.as_deref(), Some(s.session.as_str()));
    assert_eq!(first.trigger, "talos.write_file");
    assert_eq!((first.files, first.bytes), (1, 6));
    assert!(
        listed
            .checkpoints
            .iter()
            .all(|c| c.turn_id == first.turn_id)
    );
    let shown: CheckpointShowResult = s
        .client
        .request(
            "checkpoint/show",
            json!({"checkpointId": first.checkpoint_id}),
        )
        .await;
    let file = &shown.files[0];
    assert_eq!(
        (file.captured.as_str(), file.current.as_str()),
        ("file", "file")
    );
    assert_eq!(file.action, RestoreAction::Restore);
    let diff = file.diff.as_ref().unwrap();
    assert!(
        diff.text.contains("-ALPHA") && diff.text.contains("+alpha"),
        "{}",
        diff.text
    );
    let (response, _) = s
        .client
        .call_with(
            "checkpoint/show",
            json!({"checkpointId": "chk-../../x"}),
            |_| Answer::Ignore,
        )
        .await
        .unwrap();
    assert!(response.error.is_some(), "a malformed id names no file");
    s.daemon.stop().await;
}

/// Proves a symlink swapped in for a directory while the restore's approval is open is
/// refused at the moment of IO, whether it leads outside the workspace (the whole restore is
/// refused before anything changes) or to another folder inside it (that path fails):
/// nothing is written through the link.
#[tokio::test]
async fn a_symlink_swapped_in_during_the_approval_is_refused_at_io_time() {
    for inside in [false, true] {
        let steps = vec![
            read_call("docs/a.txt"),
            write_call("docs/a.txt", "CHANGED\n"),
            Reply::Text("Done.".into()),
        ];
        let llama = FakeLlama::start(true, scripted(steps)).await;
        let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/a.txt"), "original\n").unwrap();
        std::fs::write(outside.path().join("a.txt"), "CHANGED\n").unwrap();
        let mut client = daemon.client().await;
        let session = client.open_session(dir.path(), "agent").await;
        client
            .turn(
                &session,
                "In docs/a.txt, replace the text with CHANGED",
                "approve",
            )
            .await;
        assert_eq!(
            std::fs::read_to_string(dir.path().join("docs/a.txt")).unwrap(),
            "CHANGED\n"
        );
        let ws = dir.path().to_path_buf();
        let target = if inside {
            ws.join("docs-moved")
        } else {
            outside.path().to_path_buf()
        };
        let (response, seen) = client
            .call_with("turn/undo", json!({"sessionId": session}), move |m| {
                if m.method.as_deref() == Some("approval/request") {
                    swap_for_link(&ws.join("docs"), &ws.join("docs-moved"), &target);
                    Answer::Result(json!({"decision": "approve"}))
                } else {
                    Answer::Ignore
                }
            })
            .await
            .unwrap();
        assert_eq!(approvals(&seen).len(), 1);
        let result: RestoreResult = decode("turn/undo", response.result.unwrap());
        let (action, outcome, _) = action_of(&result, "docs/a.txt");
        let expected = if inside {
            RestoreOutcome::Failed
        } else {
            RestoreOutcome::NotDone
        };
        assert_eq!(
            (action, outcome),
            (RestoreAction::Restore, expected),
            "{result:?}"
        );
        let message = result.files[0].message.clone().unwrap_or_default();
        assert!(message.contains("not allowed"), "{message}");
        assert_eq!(
            std::fs::read_to_string(outside.path().join("a.txt")).unwrap(),
            "CHANGED\n",
            "nothing written outside"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("docs-moved/a.txt")).unwrap(),
            "CHANGED\n",
            "nothing written through the link"
        );
        daemon.stop().await;
    }
}

fn swap_for_link(dir: &Path, moved: &Path, target: &Path) {
    std::fs::rename(dir, moved).unwrap();
    std::os::unix::fs::symlink(target, dir).unwrap();
}

/// Proves a manifest naming a path outside the workspace (tampered with under the home) is
/// refused: no approval is needed for it and nothing is written outside.
#[tokio::test]
async fn a_hostile_manifest_path_that_escapes_is_refused() {
    let mut s = three_file_turn("").await;
    let listed: CheckpointListResult = s
        .client
        .request("checkpoint/list", json!({"workspace": s.dir.path()}))
        .await;
    let id = listed.checkpoints[2].checkpoint_id.clone();
    let manifest = std::fs::read_dir(s.daemon.home.path().join("checkpoints"))
        .unwrap()
        .flatten()
        .map(|d| d.path().join("manifests").join(format!("{id}.json")))
        .find(|p| p.exists())
        .unwrap();
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"a.txt\"", "\"../escaped.txt\"")).unwrap();
    let (result, asked) = s
        .restore("checkpoint/restore", json!({"checkpointId": id}), "approve")
        .await;
    assert!(
        asked.is_empty(),
        "nothing to change, nothing asked: {asked:?}"
    );
    assert_eq!(
        action_of(&result, "../escaped.txt").0,
        RestoreAction::Refuse
    );
    assert!(!s.dir.path().parent().unwrap().join("escaped.txt").exists());
    s.daemon.stop().await;
}

/// Proves a change whose checkpoint would copy a file over `checkpoint.max_file_bytes` is
/// refused with a message naming the setting, and the file is not changed: a write (the
/// single-file checkpoint) and a delete (the workspace-operation checkpoint).
#[tokio::test]
async fn a_checkpoint_over_max_file_bytes_fails_closed() {
    let rows = [
        (
            vec![read_call("big.txt"), write_call("big.txt", "small\n")],
            "Replace the content of big.txt with small",
        ),
        (
            vec![Reply::ToolCalls(vec![(
                "talos.delete_path".into(),
                json!({"path": "big.txt"}).to_string(),
            )])],
            "Delete the file big.txt",
        ),
    ];
    for (mut steps, prompt) in rows {
        steps.push(Reply::Text("Done.".into()));
        let llama = FakeLlama::start(true, scripted(steps)).await;
        let config = format!(
            "{}checkpoint:\n  max_file_bytes: 16\n",
            TestDaemon::config_for(&llama.url, true)
        );
        let daemon = TestDaemon::start(&config).await;
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(100);
        std::fs::write(dir.path().join("big.txt"), &big).unwrap();
        let mut client = daemon.client().await;
        let session = client.open_session(dir.path(), "agent").await;
        let (outcome, seen) = client
            .turn_with(&session, prompt, approve_all("approve"))
            .await;
        assert_eq!(
            std::fs::read_to_string(dir.path().join("big.txt")).unwrap(),
            big,
            "{prompt}"
        );
        let everything = format!(
            "{}{}",
            serde_json::to_string(&outcome).unwrap(),
            seen.iter().map(|m| m.to_line()).collect::<String>()
        );
        assert!(
            everything.contains("checkpoint.max_file_bytes"),
            "{prompt}: {everything}"
        );
        assert!(daemon.checkpoint_objects().is_empty(), "{prompt}");
        daemon.stop().await;
    }
}

/// Proves "undo your last change" asked in words restores nothing and names the commands.
#[tokio::test]
async fn undo_in_words_names_the_commands_and_restores_nothing() {
    let mut s = three_file_turn("").await;
    let outcome = s
        .client
        .turn(&s.session, "Please undo your last change", "approve")
        .await;
    assert!(
        outcome.final_answer.contains("talos undo"),
        "{}",
        outcome.final_answer
    );
    assert!(outcome.final_answer.contains("/undo"));
    assert!(outcome.final_answer.contains("talos checkpoints"));
    assert_eq!(s.read("a.txt"), "ALPHA\n");
    assert_eq!(s.read("c.txt"), "new\n");
    s.daemon.stop().await;
}

/// Proves workspace operations are undone too: a batch that made a folder and moved a file
/// into it (the folder and the moved file deleted, the file back), and a recursive delete of
/// a folder (the folder and its file made again).
#[tokio::test]
async fn undo_reverses_workspace_operations_on_folders() {
    let batch = json!({"operations": [{"op": "mkdir", "path": "docs"}, {"op": "move", "from": "notes.md", "to": "docs/notes.md"}]});
    let rows = [
        (
            Reply::ToolCalls(vec![(
                "talos.apply_workspace_batch".into(),
                batch.to_string(),
            )]),
            "Create a folder docs and move notes.md into it",
        ),
        (
            Reply::ToolCalls(vec![(
                "talos.delete_path".into(),
                json!({"path": "build", "recursive": true}).to_string(),
            )]),
            "Delete the folder build",
        ),
    ];
    for (call, prompt) in rows {
        let llama = FakeLlama::start(true, scripted(vec![call, Reply::Text("Done.".into())])).await;
        let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "# notes\n").unwrap();
        std::fs::create_dir(dir.path().join("build")).unwrap();
        std::fs::write(dir.path().join("build/out.o"), "obj").unwrap();
        let mut client = daemon.client().await;
        let session = client.open_session(dir.path(), "agent").await;
        client.turn(&session, prompt, "approve").await;
        let changed = dir.path().join("docs").exists() || !dir.path().join("build").exists();
        assert!(changed, "{prompt}: the turn changed the workspace");
        let (response, seen) = client
            .call_with(
                "turn/undo",
                json!({"sessionId": session}),
                approve_all("approve"),
            )
            .await
            .unwrap();
        assert_eq!(approvals(&seen).len(), 1, "{prompt}");
        let result: RestoreResult = decode("turn/undo", response.result.unwrap());
        assert!(
            result
                .files
                .iter()
                .all(|f| f.outcome == RestoreOutcome::Done),
            "{prompt}: {result:?}"
        );
        assert!(!dir.path().join("docs").exists(), "{prompt}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
            "# notes\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("build/out.o")).unwrap(),
            "obj",
            "{prompt}"
        );
        daemon.stop().await;
    }
}

/// The restore records under `traces/restores/`, parsed.
fn restore_records(s: &Setup) -> Vec<Value> {
    let dir = s.daemon.home.path().join("traces/restores");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// Proves every restore the person was asked about leaves a record (approved and denied alike,
/// with each path's outcome and the safety checkpoint), one that asked nothing leaves none, the
/// records do not disturb `trace/list`, and retention prunes them by age like traces.
#[tokio::test]
async fn each_asked_restore_leaves_a_record_and_retention_covers_it() {
    let mut s = three_file_turn("retention:\n  max_age_days: 1\n").await;
    let (denied, _) = s.undo("deny").await;
    let (approved, _) = s.undo("approve").await;
    let records = restore_records(&s);
    assert_eq!(records.len(), 2, "{records:?}");
    let (first, second) = (&records[0], &records[1]);
    assert_eq!(first["kind"], "talos-restore");
    assert_eq!(first["method"], "turn/undo");
    assert_eq!(first["sessionId"], s.session.as_str());
    assert_eq!(first["result"]["decision"], "deny");
    assert_eq!(first["result"]["message"], denied.message.as_str());
    assert_eq!(second["result"]["decision"], "approve");
    assert_eq!(
        second["result"]["safetyCheckpointId"].as_str(),
        approved.safety_checkpoint_id.as_deref()
    );
    let outcomes: Vec<&str> = second["result"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["done", "done", "done"], "{second}");
    let session_traces = s.daemon.home.path().join("traces").join(&s.session);
    let trace = std::fs::read_dir(session_traces)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .unwrap();
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(trace.path()).unwrap()).unwrap();
    assert_eq!(
        second["workspaceHash"], trace["workspaceHash"],
        "the hash traces use"
    );
    assert!(second["finishedAtMs"].as_u64() >= second["startedAtMs"].as_u64());

    // Restoring the safety checkpoint of a state that is already on disk asks nothing.
    let params = json!({"checkpointId": approved.safety_checkpoint_id.clone().unwrap()});
    let (again, _) = s
        .restore("checkpoint/restore", params.clone(), "approve")
        .await;
    assert_eq!(again.decision, Some(Decision::Approve), "{again:?}");
    let (nothing, asked) = s.restore("checkpoint/restore", params, "approve").await;
    assert!(
        asked.is_empty() && nothing.decision.is_none(),
        "{nothing:?}"
    );
    let records = restore_records(&s);
    assert_eq!(
        records.len(),
        3,
        "the asked restore is recorded, the no-op is not"
    );
    assert_eq!(records[2]["method"], "checkpoint/restore");

    let (listed, _) = s
        .client
        .call_with(
            "trace/list",
            json!({"workspace": s.dir.path()}),
            approve_all("deny"),
        )
        .await
        .unwrap();
    let traces = listed.result.unwrap()["traces"].as_array().unwrap().len();
    assert_eq!(traces, 1, "the turn's trace, and no restore as a turn");

    let dir = s.daemon.home.path().join("traces/restores");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 86_400);
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let file = std::fs::File::options()
            .write(true)
            .open(entry.path())
            .unwrap();
        file.set_modified(old).unwrap();
    }
    let (gc, _) = s
        .client
        .call_with("daemon/gc", json!({}), approve_all("deny"))
        .await
        .unwrap();
    assert!(gc.error.is_none(), "{:?}", gc.error);
    assert!(
        restore_records(&s).is_empty(),
        "old restore records are pruned by age"
    );
    s.daemon.stop().await;
}

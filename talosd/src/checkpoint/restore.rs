//! `checkpoint/restore` and `turn/undo`: a restore is a change like any other. The core decides
//! each path's step (`talos_core::restore`); this module asks the person on the requesting
//! connection (`approval/request`, tool `talos.restore`, one detail line per path, conflicts
//! spelled out), takes a safety checkpoint of the paths it is about to change (so the restore
//! can itself be restored), then performs each step through the `Workspace` handle, checking
//! the path again at the moment of IO (boundary, and that it still holds the state the person
//! approved), and reports per path. A denied, timed-out or disconnected approval changes
//! nothing.

use std::sync::Arc;
use std::time::Duration;

use talos_core::restore::{self, Action, Current, Step};
use talos_protocol as proto;

use super::list::{self, LocateError};
use super::manifest::{self, Manifest, RESTORE_TRIGGER};
use super::{CaptureContext, CheckpointStore};
use crate::connection::Peer;
use crate::ids::{ApprovalId, IdError, TurnId};
use crate::server::Daemon;
use crate::workspace::Workspace;

/// What is restored together: one checkpoint, or every checkpoint of an undone turn.
pub struct Unit {
    /// `checkpoint chk-…` or `turn turn-…`, for the approval's description.
    pub what: String,
    pub session_id: Option<String>,
    /// The turn whose change is restored.
    pub turn_id: Option<String>,
    /// Set for `turn/undo`: recorded in the safety checkpoint, so the next undo goes further back.
    pub undoes: Option<String>,
    /// Oldest first.
    pub manifests: Vec<Manifest>,
    pub files: Arc<Workspace>,
    pub overwrite_conflicts: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(transparent)]
    Locate(#[from] LocateError),
    #[error(transparent)]
    Id(#[from] IdError),
    #[error("the session has no turn that changed files left to undo")]
    NothingToUndo,
}

/// The unit of `checkpoint/restore {checkpointId}`.
pub fn checkpoint_unit(
    daemon: &Daemon,
    params: &proto::CheckpointRestoreParams,
) -> Result<Unit, RestoreError> {
    let store = store(daemon);
    let (_, manifest, files) = list::locate(&store, &params.checkpoint_id)?;
    let files = files.with_pending(crate::workspace::PendingLog::new(
        daemon.home.pending_writes(),
    ));
    Ok(Unit {
        what: format!("checkpoint {}", manifest.checkpoint_id),
        session_id: params.session_id.clone(),
        turn_id: Some(manifest.turn_id.clone()),
        undoes: None,
        manifests: vec![manifest],
        files: Arc::new(files),
        overwrite_conflicts: params.overwrite_conflicts,
    })
}

/// The unit of `turn/undo {sessionId}`: every checkpoint of the session's last changing turn
/// not undone yet.
pub fn undo_unit(
    daemon: &Daemon,
    session_id: &str,
    files: Arc<Workspace>,
    overwrite_conflicts: bool,
) -> Result<Unit, RestoreError> {
    let store = store(daemon);
    let stored = manifest::all_in(&store.manifests(files.root()));
    let summaries: Vec<_> = stored.iter().map(|(_, m)| m.summary()).collect();
    let chosen = restore::undo_unit(&summaries, session_id);
    let manifests: Vec<Manifest> = chosen
        .iter()
        .filter_map(|id| {
            stored
                .iter()
                .find(|(_, m)| &m.checkpoint_id == id)
                .map(|(_, m)| m.clone())
        })
        .collect();
    let Some(turn_id) = manifests.first().map(|m| m.turn_id.clone()) else {
        return Err(RestoreError::NothingToUndo);
    };
    Ok(Unit {
        what: format!("turn {turn_id}"),
        session_id: Some(session_id.to_string()),
        turn_id: Some(turn_id.clone()),
        undoes: Some(turn_id),
        manifests,
        files,
        overwrite_conflicts,
    })
}

/// Plans, asks, takes the safety checkpoint, performs and reports.
pub async fn run(
    daemon: &Arc<Daemon>,
    peer: &Arc<Peer>,
    unit: Unit,
) -> Result<proto::RestoreResult, RestoreError> {
    let store = store(daemon);
    let rows = restore::merge(
        &unit
            .manifests
            .iter()
            .map(Manifest::rows)
            .collect::<Vec<_>>(),
    );
    let current = crate::offload::blocking(|| {
        list::current_states(&unit.files, &rows, store.max_file_bytes())
    });
    let steps = restore::plan(&rows, &current, unit.overwrite_conflicts);
    let mut result = proto::RestoreResult {
        checkpoint_ids: unit
            .manifests
            .iter()
            .map(|m| m.checkpoint_id.clone())
            .collect(),
        turn_id: unit.turn_id.clone(),
        decision: None,
        safety_checkpoint_id: None,
        files: Vec::new(),
        message: String::new(),
    };
    if !restore::changes(&steps) {
        result.files = steps
            .iter()
            .map(|s| report(s, proto::RestoreOutcome::NotDone, None))
            .collect();
        result.message = format!("nothing to restore: {}", summary_of(&steps));
        return Ok(result);
    }
    let objects = store.objects(unit.files.root());
    let diff = crate::offload::blocking(|| {
        let sides = sides(
            &unit.files,
            &objects,
            &steps,
            &rows,
            &current,
            store.max_file_bytes(),
        );
        restore::preview(&sides).map(|p| crate::to_proto::diff(&p))
    });
    let operation = TurnId::new()?;
    let decision = ask(daemon, peer, &unit, &operation, &steps, diff).await?;
    result.decision = Some(decision);
    if decision == proto::Decision::Deny {
        result.files = steps
            .iter()
            .map(|s| report(s, proto::RestoreOutcome::NotDone, None))
            .collect();
        result.message = "restore denied; nothing changed".into();
        return Ok(result);
    }
    let done =
        crate::offload::blocking(|| perform(&store, &unit, &operation, &rows, &current, &steps));
    match done {
        Err(problem) => {
            result.files = steps
                .iter()
                .map(|s| {
                    let why = restore::changes_disk(&s.action).then(|| problem.clone());
                    report(s, proto::RestoreOutcome::NotDone, why)
                })
                .collect();
            result.message = format!("restore refused, nothing changed: {problem}");
        }
        Ok((safety, files)) => {
            let failed = files
                .iter()
                .filter(|f| f.outcome == proto::RestoreOutcome::Failed)
                .count();
            result.message = format!(
                "{}{}; undo this restore with: talos restore {safety}",
                summary_of(&steps),
                if failed > 0 {
                    format!("; {failed} failed")
                } else {
                    String::new()
                }
            );
            result.safety_checkpoint_id = Some(safety);
            result.files = files;
        }
    }
    Ok(result)
}

fn store(daemon: &Daemon) -> CheckpointStore {
    CheckpointStore::new(daemon.home.checkpoints())
        .with_max_file_bytes(daemon.config.checkpoint.max_file_bytes)
}

/// Asks the requesting connection; end of input, disconnect and timeout deny.
async fn ask(
    daemon: &Daemon,
    peer: &Arc<Peer>,
    unit: &Unit,
    operation: &TurnId,
    steps: &[Step],
    diff: Option<proto::DiffPreview>,
) -> Result<proto::Decision, IdError> {
    let request = ApprovalId::new()?;
    let description = restore::description(&unit.what, steps);
    let mut details = restore::lines(steps);
    // Paths and restored text that change what the person sees are named in plain warnings.
    let warnings = talos_core::deceptive::warnings(&talos_core::deceptive::ApprovalText {
        description: &description,
        target: None,
        details: &details,
        diff: diff.as_ref().map(|d| d.text.as_str()),
        diff_cut: "",
    });
    details.extend(warnings);
    let params = proto::ApprovalRequestParams {
        turn_id: operation.to_string(),
        session_id: unit.session_id.clone().unwrap_or_default(),
        request_id: request.to_string(),
        tool: RESTORE_TRIGGER.into(),
        description,
        target: None,
        details,
        diff,
        remember_eligible: false,
        call_id: None,
        change: None,
    };
    let value = serde_json::to_value(&params).unwrap_or(serde_json::Value::Null);
    let timeout = Duration::from_secs(daemon.config.approval.timeout_secs);
    let answer = tokio::time::timeout(
        timeout,
        peer.request(proto::APPROVAL_REQUEST, value, Some(request)),
    )
    .await;
    Ok(match answer {
        Ok(Ok(message)) => message
            .result
            .and_then(|r| serde_json::from_value::<proto::ApprovalResult>(r).ok())
            .map_or(proto::Decision::Deny, |r| r.decision),
        Ok(Err(_)) | Err(_) => proto::Decision::Deny,
    })
}

/// Each changing file step's text now and after the restore, for the approval's diff
/// (directories and paths that are not regular files have none).
fn sides(
    files: &Workspace,
    objects: &crate::home::Store,
    steps: &[Step],
    rows: &[talos_core::restore::Row],
    current: &[Current],
    max: u64,
) -> Vec<restore::Sides> {
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    steps
        .iter()
        .filter_map(|step| {
            let now = rows
                .iter()
                .position(|r| r.path == step.path)
                .and_then(|i| current.get(i))?;
            let now = match now {
                Current::File { .. } => {
                    Some(text(files.read_limited(&step.path, &step.path, max).ok()??))
                }
                Current::Absent => None,
                Current::Directory | Current::Symlink | Current::Refused(_) => return None,
            };
            let restored = match &step.action {
                Action::Restore { sha256, .. } => {
                    Some(text(manifest::object(objects, sha256).ok()?))
                }
                Action::Delete => None,
                Action::DeleteTree => return None,
                Action::Directory
                | Action::Unchanged
                | Action::SkipConflict
                | Action::Refuse(_) => return None,
            };
            Some(restore::Sides {
                path: step.path.clone(),
                now,
                restored,
            })
        })
        .collect()
}

/// Takes the safety checkpoint, then performs each step. Returns the safety checkpoint's id
/// and the per-path report, or why nothing was changed.
fn perform(
    store: &CheckpointStore,
    unit: &Unit,
    operation: &TurnId,
    rows: &[talos_core::restore::Row],
    planned: &[Current],
    steps: &[Step],
) -> Result<(String, Vec<proto::RestoreFile>), String> {
    let files = &unit.files;
    let placed = steps
        .iter()
        .filter(|s| restore::changes_disk(&s.action))
        .map(|s| files.place(&s.path))
        .collect::<Result<Vec<_>, String>>()?;
    let ctx = CaptureContext {
        session_id: unit.session_id.as_deref(),
        trace_id: "",
        turn_id: operation.as_str(),
        call_id: "",
        tool: RESTORE_TRIGGER,
        created_at_ms: crate::clock::now_ms(),
        undoes: unit.undoes.as_deref(),
    };
    let safety = store
        .capture_paths(files.root(), files, &placed, &ctx)
        .map_err(|e| format!("no safety checkpoint: {e}"))?;
    let objects = store.objects(files.root());
    let reports = steps
        .iter()
        .map(|step| {
            if !restore::changes_disk(&step.action) {
                return report(step, proto::RestoreOutcome::NotDone, None);
            }
            let seen = rows
                .iter()
                .position(|r| r.path == step.path)
                .and_then(|i| planned.get(i));
            match one(files, &objects, step, seen, store.max_file_bytes()) {
                Ok(()) => report(step, proto::RestoreOutcome::Done, None),
                Err(problem) => report(step, proto::RestoreOutcome::Failed, Some(problem)),
            }
        })
        .collect();
    if let Err(e) = store.record_after(files, safety.checkpoint_id.as_str()) {
        tracing::warn!(error = %e, "cannot record the state a restore left");
    }
    // The after file is written unsynced (home.rs): made durable before the result is told.
    if let Err(e) = store.root().sync_filesystem() {
        tracing::warn!(error = %e, "cannot sync the checkpoint store after a restore");
    }
    Ok((safety.checkpoint_id.into_string(), reports))
}

/// One step, at the moment of IO: the path is resolved again beneath the root and must still
/// hold the state the person approved against.
fn one(
    files: &Workspace,
    objects: &crate::home::Store,
    step: &Step,
    seen: Option<&Current>,
    max: u64,
) -> Result<(), String> {
    // Check and write as one against every session's writes (issue 26).
    let _one_writer = files.lock_file(&step.path);
    let now = list::current_state(files, &step.path, max);
    if let Current::Refused(reason) = &now {
        return Err(format!("Path not allowed: {} ({reason})", step.path));
    }
    if now == Current::Symlink {
        return Err(format!(
            "Path not allowed: {} (a symlink is there now)",
            step.path
        ));
    }
    if Some(&now) != seen {
        return Err("changed while the approval was open; kept as it is".into());
    }
    let location = files
        .recheck(&step.path, &step.path)
        .map_err(|e| e.to_string())?
        .location
        .unwrap_or_else(|| step.path.clone());
    match &step.action {
        Action::Restore { sha256, .. } => {
            let bytes = manifest::object(objects, sha256).map_err(|e| e.to_string())?;
            if now == Current::Directory {
                files.remove(&location).map_err(|e| e.to_string())?;
            }
            files
                .write_atomic(&location, &step.path, &bytes)
                .map_err(|e| e.to_string())
        }
        Action::Delete | Action::DeleteTree => files
            .remove(&location)
            .map_err(|e| format!("cannot delete: {e}")),
        Action::Directory => {
            if matches!(now, Current::File { .. }) {
                files.remove(&location).map_err(|e| e.to_string())?;
            }
            files
                .create_dir_all(&location)
                .map_err(|e| format!("cannot make the directory: {e}"))
        }
        Action::Unchanged | Action::SkipConflict | Action::Refuse(_) => Ok(()),
    }
}

fn report(
    step: &Step,
    outcome: proto::RestoreOutcome,
    message: Option<String>,
) -> proto::RestoreFile {
    let message = message.or_else(|| match &step.action {
        Action::SkipConflict => {
            Some("changed by someone else since the checkpoint; kept as it is".into())
        }
        Action::Refuse(reason) => Some(reason.clone()),
        _ => None,
    });
    let outcome = match step.action {
        Action::Unchanged => proto::RestoreOutcome::Done,
        _ => outcome,
    };
    proto::RestoreFile {
        path: step.path.clone(),
        action: crate::to_proto::restore::action(&step.action),
        conflict: step.conflict,
        outcome,
        message,
    }
}

/// `2 restored, 1 deleted, 1 conflict kept`, counting the plan.
fn summary_of(steps: &[Step]) -> String {
    let count = |f: fn(&Action) -> bool| steps.iter().filter(|s| f(&s.action)).count();
    let parts = [
        (
            count(|a| matches!(a, Action::Restore { .. })),
            "restored",
            "restored",
        ),
        (
            count(|a| matches!(a, Action::Delete | Action::DeleteTree)),
            "deleted",
            "deleted",
        ),
        (
            count(|a| matches!(a, Action::Directory)),
            "directory made",
            "directories made",
        ),
        (
            count(|a| matches!(a, Action::Unchanged)),
            "unchanged",
            "unchanged",
        ),
        (
            count(|a| matches!(a, Action::SkipConflict)),
            "conflict kept",
            "conflicts kept",
        ),
        (
            count(|a| matches!(a, Action::Refuse(_))),
            "refused",
            "refused",
        ),
    ];
    let text: Vec<String> = parts
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many }))
        .collect();
    if text.is_empty() {
        "no paths".into()
    } else {
        text.join(", ")
    }
}

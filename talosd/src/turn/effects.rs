//! The file effects a call's state machine asks for, performed through the session's
//! `Workspace` handle (every path resolved beneath the root in the kernel): resolving paths
//! for the ladder, the named files, the pre-image of a write, the checkpoint's job (run by
//! `crate::checkpoint::job`: no checkpoint, no write), the write with its stale-bytes check and
//! read-back, and typed workspace operations. Each
//! function reports what happened; none decides anything.

use talos_core::ops::WorkspaceOp;
use talos_core::turn::call::{ResolvedPath, WriteFailure};

use super::context::TurnCtx;
use crate::checkpoint::job::CheckpointJob;
use crate::workspace::Workspace;

/// Resolves one raw path for the ladder.
pub fn resolve(workspace: &Workspace, raw: &str) -> ResolvedPath {
    let resolved = workspace.resolve(raw);
    ResolvedPath {
        facts: resolved.facts,
        final_is_symlink: resolved.final_is_symlink,
    }
}

/// Resolves each raw path for the ladder.
pub fn resolve_all(workspace: &Workspace, raw: &[String]) -> Vec<ResolvedPath> {
    raw.iter().map(|p| resolve(workspace, p)).collect()
}

/// The bytes a write replaces (`None`: the file does not exist yet).
pub fn read_current(workspace: &Workspace, shown: &str) -> Result<Option<Vec<u8>>, String> {
    let resolved = workspace.resolve(shown);
    let location = resolved
        .location
        .ok_or_else(|| format!("Path not allowed: {shown} (outside the workspace)"))?;
    workspace.read(&location, shown).map_err(|e| e.to_string())
}

/// The checkpoint job of call `call_id` in this turn.
pub fn checkpoint_job(ctx: &TurnCtx, call_id: &str) -> CheckpointJob {
    CheckpointJob {
        store: ctx.daemon.home.checkpoints(),
        max_file_bytes: ctx.daemon.config.checkpoint.max_file_bytes,
        session_id: ctx.session.id.to_string(),
        workspace: ctx.files.clone(),
        trace_id: ctx.trace.trace_id.clone(),
        turn_id: ctx.turn_id.to_string(),
        call_id: call_id.to_string(),
        created_at_ms: crate::clock::now_ms(),
    }
}

/// Checks each op against the disk as it is now: the paths it touches, or the first refusal.
pub fn check_ops(
    workspace: &Workspace,
    ops: &[WorkspaceOp],
) -> Result<Vec<Vec<String>>, (usize, String)> {
    ops.iter()
        .enumerate()
        .map(|(index, op)| {
            workspace
                .plan(op)
                .map(|planned| planned.touched().into_iter().map(|p| p.shown).collect())
                .map_err(|e| (index, e))
        })
        .collect()
}

/// Applies ops in order, each checked again at the moment of IO and verified by its
/// postcondition; stops at the first failure.
pub fn apply_ops(workspace: &Workspace, ops: &[WorkspaceOp]) -> Vec<Result<String, String>> {
    let mut results = Vec::new();
    for op in ops {
        let result = workspace.plan(op).and_then(|planned| {
            workspace
                .apply(&planned)
                .and_then(|()| workspace.verify(&planned))
        });
        let failed = result.is_err();
        results.push(result);
        if failed {
            break;
        }
    }
    results
}

/// [`write`], then the written file reindexed at once (when the index holds it).
pub fn write_and_reindex(
    workspace: &Workspace,
    index_home: &crate::home::Store,
    path: &str,
    expected: Option<&[u8]>,
    bytes: &[u8],
) -> Result<Vec<u8>, WriteFailure> {
    // Under the file's write lock, shared by every session (issue 26).
    let written = workspace.write_if_unchanged(path, expected, bytes);
    if written.is_ok()
        && let Ok(placed) = workspace.place(path)
        && let Err(e) = crate::index::reindex_file(index_home, workspace, &placed.location)
    {
        tracing::warn!(error = %e, "reindexing a written file failed");
    }
    written
}

/// Which named paths are regular files inside the workspace (a symlink in the last place is
/// not), with the text of those in `read` that are UTF-8 and at most `cap` bytes.
pub fn inspect(
    workspace: &Workspace,
    paths: &[String],
    read: &[String],
    cap: u64,
) -> Vec<talos_core::turn::machine::NamedFile> {
    use crate::workspace::EntryKind;
    paths
        .iter()
        .map(|shown| {
            let location = workspace.resolve(shown).location;
            let file = location
                .as_ref()
                .is_some_and(|l| matches!(workspace.kind(l), Ok(Some(EntryKind::File))));
            let small_text = location
                .filter(|_| file && cap > 0 && read.contains(shown))
                .and_then(|l| workspace.read_limited(&l, shown, cap).ok().flatten())
                .and_then(|bytes| String::from_utf8(bytes).ok());
            talos_core::turn::machine::NamedFile {
                path: shown.clone(),
                file,
                small_text,
            }
        })
        .collect()
}

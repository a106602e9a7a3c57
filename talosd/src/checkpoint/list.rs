//! `checkpoint/list` and `checkpoint/show`: the stored checkpoints of a workspace, newest first,
//! and one checkpoint's paths against the disk now (what a restore would do to each, with a
//! capped diff from the current file to the captured one). Reads only: the store under the
//! home, and the workspace through its `Workspace` handle.

use std::path::{Path, PathBuf};

use talos_core::restore::{self, Captured, Current, Row};
use talos_protocol as proto;

use super::CheckpointStore;
use super::manifest::{self, Manifest, ManifestError};
use crate::workspace::{EntryKind, Workspace};

/// The checkpoints of `workspace` (canonical root), newest first, at most `limit`.
pub fn list(
    store: &CheckpointStore,
    workspace: &Path,
    limit: Option<usize>,
) -> proto::CheckpointListResult {
    let manifests = manifest::all_in(&store.manifests(workspace));
    proto::CheckpointListResult {
        workspace: workspace.display().to_string(),
        checkpoints: manifests
            .iter()
            .take(limit.unwrap_or(usize::MAX))
            .map(|(_, m)| info(m))
            .collect(),
    }
}

/// One manifest as the wire lists it.
pub fn info(m: &Manifest) -> proto::CheckpointInfo {
    proto::CheckpointInfo {
        checkpoint_id: m.checkpoint_id.clone(),
        created_at_ms: m.created_at_ms,
        session_id: m.session_id.clone(),
        turn_id: m.turn_id.clone(),
        trigger: m.tool.clone(),
        files: m.files.len(),
        bytes: m.bytes(),
        paths: m.files.iter().map(|f| f.relative_path.clone()).collect(),
    }
}

/// Checkpoint `id` with the workspace it belongs to, opened as a handle. A manifest that is
/// not stored under its own workspace's folder is refused (it cannot steer a restore into
/// another workspace).
pub fn locate(
    store: &CheckpointStore,
    id: &str,
) -> Result<(PathBuf, Manifest, Workspace), LocateError> {
    let found = manifest::find(store.root(), id)?;
    let manifest = Manifest::read(&found.manifests, &found.name)?;
    let path = found.manifests.shown(&found.name);
    let root = PathBuf::from(&manifest.workspace);
    if manifest.checkpoint_id != id
        || !root.is_absolute()
        || found.workspace_folder != CheckpointStore::workspace_folder(&root)
    {
        return Err(LocateError::Foreign(id.into()));
    }
    let files = Workspace::open(&root).map_err(|e| LocateError::Workspace(e.to_string()))?;
    Ok((path, manifest, files))
}

#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("checkpoint {0} does not belong to the workspace it names; refusing it")]
    Foreign(String),
    #[error("the checkpoint's workspace cannot be opened: {0}")]
    Workspace(String),
}

/// `checkpoint/show`.
pub fn show(store: &CheckpointStore, id: &str) -> Result<proto::CheckpointShowResult, LocateError> {
    let (_, manifest, files) = locate(store, id)?;
    let rows = manifest.rows();
    let current = current_states(&files, &rows, store.max_file_bytes());
    let steps = restore::plan(&rows, &current, false);
    let objects = store.objects(files.root());
    let views = rows
        .iter()
        .zip(&current)
        .map(|(row, now)| {
            let step = steps.iter().find(|s| s.path == row.path);
            proto::CheckpointFileView {
                path: row.path.clone(),
                captured: captured_name(&row.before).into(),
                current: current_name(now).into(),
                action: step.map_or(proto::RestoreAction::Unchanged, |s| {
                    crate::to_proto::restore::action(&s.action)
                }),
                conflict: step.is_some_and(|s| s.conflict),
                diff: diff(&files, &objects, row, now, store.max_file_bytes()),
            }
        })
        .collect();
    Ok(proto::CheckpointShowResult {
        checkpoint: info(&manifest),
        workspace: files.root().display().to_string(),
        files: views,
    })
}

/// The capped diff from the current file to the captured one (both files, or one absent).
fn diff(
    files: &Workspace,
    objects: &crate::home::Store,
    row: &Row,
    now: &Current,
    max: u64,
) -> Option<proto::DiffPreview> {
    let captured = match &row.before {
        Captured::File { sha256, .. } => Some(manifest::object(objects, sha256).ok()?),
        Captured::Absent => None,
        Captured::Directory => return None,
    };
    let current = match now {
        Current::File { .. } => files.read_limited(&row.path, &row.path, max).ok()?,
        Current::Absent => None,
        Current::Directory | Current::Symlink | Current::Refused(_) => return None,
    };
    if captured.is_none() && current.is_none() {
        return None;
    }
    let old = current.map(|b| String::from_utf8_lossy(&b).into_owned());
    let new = captured
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    Some(crate::to_proto::diff(&talos_core::diff::preview(
        old.as_deref(),
        &new,
    )))
}

fn captured_name(c: &Captured) -> &'static str {
    match c {
        Captured::File { .. } => "file",
        Captured::Directory => "directory",
        Captured::Absent => "absent",
    }
}

fn current_name(c: &Current) -> &'static str {
    match c {
        Current::File { .. } => "file",
        Current::Directory => "directory",
        Current::Absent => "absent",
        Current::Symlink => "symlink",
        Current::Refused(_) => "refused",
    }
}

/// Each row's path as it is now, through the handle: resolved beneath the root (a path that
/// leaves it, or lands elsewhere through a symlink, is refused), then inspected without
/// following a final link.
pub fn current_states(files: &Workspace, rows: &[Row], max_file_bytes: u64) -> Vec<Current> {
    rows.iter()
        .map(|row| current_state(files, &row.path, max_file_bytes))
        .collect()
}

/// One path's state now.
pub fn current_state(files: &Workspace, path: &str, max_file_bytes: u64) -> Current {
    let resolved = files.resolve(path);
    let location = match resolved.location {
        Some(location) if !resolved.facts.escapes => location,
        _ => {
            return Current::Refused(
                resolved
                    .facts
                    .problem
                    .unwrap_or_else(|| "path leaves the workspace".into()),
            );
        }
    };
    if resolved.final_is_symlink {
        return Current::Symlink;
    }
    if location != path {
        return Current::Refused("path passes through a symlink".into());
    }
    match files.kind(&location) {
        Ok(None) => Current::Absent,
        Ok(Some(EntryKind::Directory)) => Current::Directory,
        Ok(Some(EntryKind::Symlink)) => Current::Symlink,
        Ok(Some(EntryKind::File)) => match files.read_limited(&location, path, max_file_bytes) {
            Ok(Some(bytes)) => Current::File {
                sha256: talos_core::digest::sha256_hex(&bytes),
            },
            Ok(None) => Current::Absent,
            Err(e) => Current::Refused(e.to_string()),
        },
        Ok(Some(EntryKind::Other)) => Current::Refused("not a regular file".into()),
        Err(e) => Current::Refused(e.to_string()),
    }
}

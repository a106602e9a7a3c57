//! The checkpoint methods as the method table calls them: params in, a JSON result or an
//! `RpcError` out. `turn/undo` holds the session (as a turn does) for the whole restore, so it
//! never runs beside one of the session's turns.

use std::sync::Arc;

use serde_json::Value;
use talos_protocol as proto;
use talos_protocol::{ErrorCode, RpcError};

use super::CheckpointStore;
use super::list::{self, LocateError};
use super::manifest::ManifestError;
use super::record;
use super::restore::{self, RestoreError};
use crate::connection::Peer;
use crate::server::Daemon;

/// `checkpoint/list`.
pub fn list(daemon: &Daemon, p: proto::CheckpointListParams) -> Result<Value, RpcError> {
    let path = std::path::Path::new(&p.workspace);
    let invalid = |m: String| RpcError::new(ErrorCode::WorkspaceInvalid, m);
    if !path.is_absolute() {
        return Err(invalid(format!(
            "workspace {} is not an absolute path",
            p.workspace
        )));
    }
    let root = crate::workspace::canonical_root(path)
        .map_err(|e| invalid(format!("workspace {} cannot be opened: {e}", p.workspace)))?;
    to_value(list::list(&store(daemon), &root, p.limit))
}

/// `checkpoint/show`.
pub fn show(daemon: &Daemon, p: proto::CheckpointShowParams) -> Result<Value, RpcError> {
    let shown = list::show(&store(daemon), &p.checkpoint_id).map_err(locate_error)?;
    to_value(shown)
}

/// `checkpoint/restore`.
pub async fn restore_checkpoint(
    daemon: &Arc<Daemon>,
    peer: &Arc<Peer>,
    p: proto::CheckpointRestoreParams,
) -> Result<Value, RpcError> {
    // The restore reads stored objects and writes a safety checkpoint: no retention sweep may
    // remove checkpoints meanwhile (decision 0022).
    let _stores = daemon.retention.enter(None).await;
    let unit =
        crate::offload::blocking(|| restore::checkpoint_unit(daemon, &p)).map_err(restore_error)?;
    let started = started("checkpoint/restore", &unit);
    let result = restore::run(daemon, peer, unit)
        .await
        .map_err(restore_error)?;
    to_value(recorded(daemon, &started, result))
}

fn started(method: &'static str, unit: &restore::Unit) -> record::Started {
    record::Started {
        method,
        session_id: unit.session_id.clone(),
        workspace: unit.files.root().to_path_buf(),
        overwrite_conflicts: unit.overwrite_conflicts,
        started_at_ms: crate::clock::now_ms(),
    }
}

/// Writes the restore's record (when the person was asked); a record that cannot be written
/// is said in the result's message and logged, never hidden.
fn recorded(
    daemon: &Daemon,
    started: &record::Started,
    mut result: proto::RestoreResult,
) -> proto::RestoreResult {
    if !record::recorded(&result) {
        return result;
    }
    let written = crate::ids::new_id("rst")
        .map_err(|e| e.to_string())
        .and_then(|id| {
            let document = record::document(&id, started, crate::clock::now_ms(), &result);
            let traces = daemon.home.traces();
            crate::offload::blocking(|| record::write(&traces, &id, &document))
                .map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        tracing::error!(error = %e, "cannot write the restore record");
        result.message = format!(
            "{} (the restore record could not be written: {e})",
            result.message
        );
    }
    result
}

/// `turn/undo`.
pub async fn undo(
    daemon: &Arc<Daemon>,
    peer: &Arc<Peer>,
    p: proto::TurnUndoParams,
) -> Result<Value, RpcError> {
    // As for `restore_checkpoint`: checkpoints stay while the undo reads and writes them.
    let _stores = daemon.retention.enter(None).await;
    let session = daemon.session(&p.session_id).ok_or_else(|| {
        RpcError::new(
            ErrorCode::SessionNotFound,
            format!("no session {}", p.session_id),
        )
    })?;
    let Some(claimed) = session.claim(&daemon.stopping) else {
        return Err(RpcError::new(
            ErrorCode::SessionBusy,
            format!("session {} is running a turn", p.session_id),
        ));
    };
    let files = session.files().map_err(|e| {
        RpcError::new(
            ErrorCode::WorkspaceInvalid,
            format!("the session's workspace cannot be opened again: {e}"),
        )
    })?;
    let unit = crate::offload::blocking(|| {
        restore::undo_unit(daemon, &p.session_id, files, p.overwrite_conflicts)
    });
    let result = match unit {
        Ok(unit) => {
            let started = started("turn/undo", &unit);
            match restore::run(daemon, peer, unit).await {
                Ok(result) => Ok(recorded(daemon, &started, result)),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    drop(claimed);
    to_value(result.map_err(restore_error)?)
}

fn store(daemon: &Daemon) -> CheckpointStore {
    CheckpointStore::new(daemon.home.checkpoints())
        .with_max_file_bytes(daemon.config.checkpoint.max_file_bytes)
}

fn locate_error(e: LocateError) -> RpcError {
    let code = match &e {
        LocateError::Manifest(ManifestError::NotFound(_)) => ErrorCode::InvalidParams,
        LocateError::Foreign(_) | LocateError::Workspace(_) => ErrorCode::WorkspaceInvalid,
        LocateError::Manifest(_) => ErrorCode::InternalError,
    };
    RpcError::new(code, e.to_string())
}

fn restore_error(e: RestoreError) -> RpcError {
    match e {
        RestoreError::Locate(e) => locate_error(e),
        RestoreError::Id(e) => RpcError::new(ErrorCode::InternalError, e.to_string()),
        RestoreError::NothingToUndo => RpcError::new(ErrorCode::InvalidParams, e.to_string()),
    }
}

fn to_value<T: serde::Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value)
        .map_err(|e| RpcError::new(ErrorCode::InternalError, format!("internal error: {e}")))
}

//! The record of a restore: `checkpoint/restore` and `turn/undo` change workspace files under
//! an approval just as a turn does, so each one that asked the person (approved or denied)
//! leaves a JSON record, written durably, at `traces/restores/<startedAtMs>-<restoreId>.json`:
//! what was asked for, by which method and session, the workspace (as the hash traces use),
//! when, the answer, the safety checkpoint and every path's action and outcome. Retention
//! treats the folder like a session's (age and size); `trace/list` does not list restores
//! (they are not turns). Like traces, these are plain files and are not tamper-evident.

use std::path::PathBuf;

use crate::home::{Durability, Store};

use serde_json::{Value, json};
use talos_protocol as proto;

/// The folder under `traces/`.
pub const FOLDER: &str = "restores";
/// What the `kind` field says.
pub const KIND: &str = "talos-restore";
pub const SCHEMA_VERSION: u32 = 1;

/// What is known before the restore runs.
#[derive(Debug, Clone)]
pub struct Started {
    pub method: &'static str,
    pub session_id: Option<String>,
    pub workspace: PathBuf,
    pub overwrite_conflicts: bool,
    pub started_at_ms: u64,
}

/// The record as written.
pub fn document(
    id: &str,
    started: &Started,
    finished_at_ms: u64,
    result: &proto::RestoreResult,
) -> Value {
    json!({
        "kind": KIND,
        "schemaVersion": SCHEMA_VERSION,
        "restoreId": id,
        "method": started.method,
        "sessionId": started.session_id,
        "workspaceHash": talos_core::digest::sha256(started.workspace.to_string_lossy().as_bytes()),
        "overwriteConflicts": started.overwrite_conflicts,
        "startedAtMs": started.started_at_ms,
        "finishedAtMs": finished_at_ms,
        "result": result,
    })
}

/// Whether a restore is recorded: when the person was asked (nothing to change asks nothing
/// and changes nothing).
pub fn recorded(result: &proto::RestoreResult) -> bool {
    result.decision.is_some()
}

/// Writes the record; returns its path.
pub fn write(traces_root: &Store, id: &str, document: &Value) -> std::io::Result<PathBuf> {
    // A new folder is synced into `traces/` when it is made; the record itself durably.
    let dir = traces_root.child(FOLDER);
    let started = document["startedAtMs"].as_u64().unwrap_or(0);
    let name = format!("{started:013}-{id}.json");
    let bytes = serde_json::to_vec_pretty(document).map_err(std::io::Error::other)?;
    dir.write(&name, &bytes, Durability::Full)?;
    Ok(dir.shown(&name))
}

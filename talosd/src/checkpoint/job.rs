//! A call's checkpoint as a job that owns what it needs, so it runs on the blocking pool: the
//! capture before a change (no checkpoint, no write) and, after it, the record of the state
//! the change left (for a later restore's conflict check). The turn fills the job in
//! (`turn::effects::checkpoint_job`); the store is `CheckpointStore`.

use std::sync::Arc;

use talos_core::tools::ToolId;
use talos_core::turn::record::CheckpointTaken;

use super::{CaptureContext, CheckpointStore};
use crate::workspace::Workspace;

/// Everything a checkpoint needs, owned, so it can be taken off the async workers.
pub struct CheckpointJob {
    pub store: crate::home::Store,
    /// `checkpoint.max_file_bytes`.
    pub max_file_bytes: u64,
    pub session_id: String,
    pub workspace: Arc<Workspace>,
    pub trace_id: String,
    pub turn_id: String,
    pub call_id: String,
    /// When the job was made (the checkpoint's time), in ms since the epoch.
    pub created_at_ms: u64,
}

/// Takes the checkpoint of `paths` before a change.
pub fn checkpoint(
    job: &CheckpointJob,
    tool: ToolId,
    paths: &[String],
    before: Option<Option<Vec<u8>>>,
) -> Result<CheckpointTaken, String> {
    let store = CheckpointStore::new(job.store.clone()).with_max_file_bytes(job.max_file_bytes);
    let capture = CaptureContext {
        session_id: Some(&job.session_id),
        undoes: None,
        trace_id: &job.trace_id,
        turn_id: &job.turn_id,
        call_id: &job.call_id,
        tool: tool.name(),
        created_at_ms: job.created_at_ms,
    };
    let workspace = &job.workspace;
    let taken = match (before, paths) {
        (Some(before), [path]) => {
            store.capture(workspace.root(), path, before.as_deref(), &capture)
        }
        _ => {
            let placed = paths
                .iter()
                .map(|p| workspace.place(p))
                .collect::<Result<Vec<_>, String>>()?;
            store.capture_paths(workspace.root(), workspace, &placed, &capture)
        }
    };
    taken
        .map(|c| CheckpointTaken {
            checkpoint_id: c.checkpoint_id.into_string(),
            existed_before: c.existed_before,
            blob_sha256: c.blob_sha256,
        })
        .map_err(|e| e.to_string())
}

/// Records, in checkpoint `id`'s manifest, the state its change left (for a later restore's
/// conflict check). A failure is logged: the change happened either way, and a restore treats
/// a missing record as a possible conflict.
pub fn record_after(job: &CheckpointJob, id: &str) {
    let store = CheckpointStore::new(job.store.clone()).with_max_file_bytes(job.max_file_bytes);
    if let Err(e) = store.record_after(&job.workspace, id) {
        tracing::warn!(checkpoint = id, error = %e, "cannot record the state after a change");
    }
}

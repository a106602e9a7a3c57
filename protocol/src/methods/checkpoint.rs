//! The checkpoint methods: `checkpoint/list`, `checkpoint/show`, `checkpoint/restore` and
//! `turn/undo`, their params and results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Decision, DiffPreview};

/// The checkpoints of a workspace, newest first.
pub const CHECKPOINT_LIST: &str = "checkpoint/list";
/// One checkpoint, with per-file capped diffs of what it captured against the disk now.
pub const CHECKPOINT_SHOW: &str = "checkpoint/show";
/// Restores one checkpoint, after an approval on the asking connection.
pub const CHECKPOINT_RESTORE: &str = "checkpoint/restore";
/// Restores everything the session's last changing turn wrote, as one unit, after an approval.
pub const TURN_UNDO: &str = "turn/undo";

/// Params of `checkpoint/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointListParams {
    /// The workspace root (absolute).
    pub workspace: String,
    /// At most this many checkpoints (the newest); all when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Result of `checkpoint/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointListResult {
    /// The canonical workspace root.
    pub workspace: String,
    /// Newest first.
    pub checkpoints: Vec<CheckpointInfo>,
}

/// One stored checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInfo {
    /// `chk-` + 32 hex.
    pub checkpoint_id: String,
    /// When it was taken (milliseconds since the Unix epoch).
    pub created_at_ms: u64,
    /// The session whose turn took it (absent in checkpoints older than this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The turn (or restore) that took it.
    pub turn_id: String,
    /// What took it: the tool whose change it guards (`talos.write_file`, ...), or
    /// `talos.restore` for the safety checkpoint a restore takes first.
    pub trigger: String,
    /// The paths it captured.
    pub files: usize,
    /// The bytes it captured.
    pub bytes: u64,
    /// The captured paths, workspace-relative.
    pub paths: Vec<String>,
}

/// Params of `checkpoint/show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointShowParams {
    /// The checkpoint.
    pub checkpoint_id: String,
}

/// Result of `checkpoint/show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointShowResult {
    /// The checkpoint.
    pub checkpoint: CheckpointInfo,
    /// The workspace it belongs to.
    pub workspace: String,
    /// One entry per captured path.
    pub files: Vec<CheckpointFileView>,
}

/// One captured path against the disk now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointFileView {
    /// Workspace-relative path.
    pub path: String,
    /// What was captured: `file`, `directory` or `absent`.
    pub captured: String,
    /// What is there now: `file`, `directory`, `absent`, `symlink` or `refused`.
    pub current: String,
    /// What a restore would do to it now (conflicts skipped).
    pub action: RestoreAction,
    /// Whether it changed since the change the checkpoint guarded (by someone else).
    pub conflict: bool,
    /// Capped diff from the current file to the captured one (files only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffPreview>,
}

/// Params of `checkpoint/restore`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointRestoreParams {
    /// The checkpoint to restore.
    pub checkpoint_id: String,
    /// The session to record the restore under (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Overwrite paths changed by someone else since the checkpoint (shown as conflicts in
    /// the approval). Left out: conflicting paths are skipped.
    #[serde(default)]
    pub overwrite_conflicts: bool,
}

/// Params of `turn/undo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnUndoParams {
    /// The session whose last changing turn is undone.
    pub session_id: String,
    /// As for `checkpoint/restore`.
    #[serde(default)]
    pub overwrite_conflicts: bool,
}

/// Result of `checkpoint/restore` and `turn/undo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreResult {
    /// The checkpoints restored together, oldest first.
    pub checkpoint_ids: Vec<String>,
    /// The turn undone (`turn/undo`), or the turn that took the checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// The person's answer; absent when nothing needed changing, so nothing was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The checkpoint of the state before this restore (restore it to undo the restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_checkpoint_id: Option<String>,
    /// One entry per path.
    pub files: Vec<RestoreFile>,
    /// One line for a person.
    pub message: String,
}

/// What a restore did to one path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreFile {
    /// Workspace-relative path.
    pub path: String,
    /// What the approved plan does to it.
    pub action: RestoreAction,
    /// Whether it changed since the checkpoint's change (by someone else).
    pub conflict: bool,
    /// Whether the action was carried out.
    pub outcome: RestoreOutcome,
    /// Why it failed or was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What a restore does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreAction {
    /// The captured bytes are written back.
    Restore,
    /// Removed: it did not exist before.
    Delete,
    /// The directory is made again.
    Directory,
    /// Already as captured.
    Unchanged,
    /// Changed by someone else since; kept as it is.
    SkipConflict,
    /// Cannot be reached safely inside the workspace now; kept as it is.
    Refuse,
}

/// Whether a path's action was carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreOutcome {
    /// Done (or nothing to do).
    Done,
    /// Not done: denied, skipped, refused, or stopped by an earlier failure.
    NotDone,
    /// Attempted and failed.
    Failed,
}

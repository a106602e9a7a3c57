//! The params and results of `trace/list`, `trace/get` and `daemon/gc`: reading the turns a
//! home keeps, and pruning them under the retention policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Classification, CompletionStatus};
use crate::trace::TraceRecord;

/// Params of `trace/list`: the turns of a session, or of every session on a workspace (at least
/// one of the two; with both, a trace must match both).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceListParams {
    /// Only this session's turns (`ses-` + 32 hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only turns on this workspace (an absolute path; symlinks are resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// At most this many turns (default 20, at most 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// One turn in `trace/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceSummary {
    /// The trace's id (`trc-` + 32 hex); `trace/get` takes it.
    pub trace_id: String,
    /// The session the turn ran in.
    pub session_id: String,
    /// The turn's number within its session, from 1.
    pub turn_number: u64,
    /// When the turn started, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// When it ended, in milliseconds since the Unix epoch.
    pub finished_at_ms: u64,
    /// The session's mode during the turn.
    pub mode: String,
    /// Coarse status, as in the turn's outcome.
    pub status: CompletionStatus,
    /// Fine classification, as in the turn's outcome.
    pub classification: Classification,
    /// The first line of the request, from the turn log; absent when there is no turn log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// The result of `trace/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceListResult {
    /// The turns found, newest first.
    pub traces: Vec<TraceSummary>,
}

/// Params of `trace/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TraceGetParams {
    /// The trace's id (`trc-` + 32 lowercase hex; anything else is refused as invalid params).
    pub trace_id: String,
}

/// The result of `trace/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceGetResult {
    /// The trace record as written.
    pub trace: TraceRecord,
    /// The turn log's text (the request and the committed answer in words), when one was
    /// written and is still kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_log: Option<String>,
}

/// Files of one kind removed by `daemon/gc`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GcCount {
    /// How many files.
    pub files: u64,
    /// Their bytes together.
    pub bytes: u64,
}

/// The result of `daemon/gc`: what the retention policy removed, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonGcResult {
    /// Trace records removed.
    pub traces: GcCount,
    /// Turn logs removed.
    pub turn_logs: GcCount,
    /// Checkpoint manifests removed.
    pub checkpoints: GcCount,
    /// Checkpoint objects removed (no remaining manifest referenced them).
    pub checkpoint_objects: GcCount,
    /// Persisted session files removed: not saved for `retention.max_age_days` and not open in
    /// the daemon. Absent from older daemons (zero).
    #[serde(default)]
    pub sessions: GcCount,
    /// Bytes of traces, turn logs and checkpoints kept after the run.
    pub bytes_after: u64,
    /// The size limit in force (`retention.max_bytes`).
    pub max_bytes: u64,
    /// The age limit in force (`retention.max_age_days`).
    pub max_age_days: u64,
    /// True when turns were running, so checkpoints were left alone this time.
    pub checkpoints_deferred: bool,
}

//! The trace record: one JSON document per turn, `schemaVersion` 5.
//!
//! Prompts, answers and file contents appear only as SHA-256 digests and counts
//! ([`TextDigest`]); file paths, tool names and the parts of the request that name a target are
//! kept. A trace is evidence for review, not an integrity guarantee: it is a plain file with no
//! hash chain or signature, and it is not tamper-evident.

use serde::{Deserialize, Serialize};

use crate::event::ApprovalSource;
use crate::methods::{Classification, CompletionStatus, Decision};

pub const TRACE_SCHEMA_VERSION: u32 = 5;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceRecord {
    pub schema_version: u32,
    pub trace_id: String,
    pub session_id: String,
    pub turn_id: String,
    pub turn_number: u64,
    /// Milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    pub finished_at_ms: u64,
    /// `sha256:<hex>` of the workspace root path.
    pub workspace_hash: String,
    pub mode: String,
    pub model: TraceModel,
    pub request: TextDigest,
    /// The parts of the request that name a target, kept as written.
    pub request_targets: Vec<String>,
    pub task_contract: TraceContract,
    pub turn_plan: TracePlan,
    /// Files pinned into the turn's context, with digests of what the model was shown.
    #[serde(default)]
    pub pinned: Vec<NamedDigest>,
    pub phase_transitions: Vec<TracePhaseTransition>,
    pub tool_surfaces: Vec<TraceSurface>,
    pub model_calls: Vec<TraceModelCall>,
    pub tool_calls: Vec<TraceToolCall>,
    pub permission_decisions: Vec<TracePermission>,
    pub approvals: Vec<TraceApproval>,
    pub checkpoints: Vec<TraceCheckpoint>,
    pub executions: Vec<TraceExecution>,
    pub verification: Vec<TraceVerification>,
    /// Commands run through profiles.
    #[serde(default)]
    pub commands: Vec<TraceCommand>,
    pub warnings: Vec<TraceWarning>,
    pub outcome: TraceOutcome,
}

/// A text reduced to what can be kept without keeping it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDigest {
    /// `sha256:<hex>`.
    pub hash: String,
    pub chars: usize,
    pub bytes: usize,
    pub lines: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceModel {
    pub backend: String,
    pub url: String,
    /// `native` or `text`: how tool calls were offered and parsed this turn.
    pub tool_calling: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceContract {
    #[serde(rename = "type")]
    pub task_type: String,
    pub mutation_requested: bool,
    pub mutation_allowed: bool,
    pub verification_required: bool,
    pub expected_targets: Vec<String>,
    pub source_evidence_targets: Vec<String>,
    pub forbidden_targets: Vec<String>,
    pub classification_reason: String,
    /// Every target the request named, with its role (`MUST_MUTATE`, `VERIFY_ONLY`, ...).
    #[serde(default)]
    pub roleful_targets: Vec<TraceTarget>,
    /// How many visible facts a static-web request asked to keep (the facts are request text
    /// and are not kept).
    #[serde(default)]
    pub required_visible_facts: usize,
    #[serde(default)]
    pub forbidden_artifacts: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceTarget {
    pub path: String,
    pub role: String,
    pub source: String,
    pub reason: String,
}

/// The turn plan's components as the trace keeps them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracePlan {
    pub posture: String,
    pub phase_initial: String,
    pub phase_final: String,
    pub action_obligation: String,
    pub evidence_obligation: String,
    pub output_obligation: String,
    pub expectations: Vec<String>,
    pub requested_results: Vec<String>,
    pub native_tools: Vec<String>,
    pub prompt_tools: Vec<String>,
    pub blocked_tools: Vec<String>,
    pub surface_reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_task_context: Option<String>,
    pub artifact_goal: Vec<String>,
    pub verifier_profile: String,
    pub iteration_budget: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracePhaseTransition {
    pub from: String,
    pub to: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceSurface {
    pub model_call: usize,
    pub phase: String,
    pub tools: Vec<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceModelCall {
    pub index: usize,
    pub finish_reason: String,
    pub content: TextDigest,
    pub tool_calls: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Prompt tokens served from the slot's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceToolCall {
    pub call_id: String,
    /// The name as the model wrote it.
    pub requested_name: String,
    /// The canonical tool, when the name resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `native` or `text`.
    pub source: String,
    pub parameter_names: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_hint: Option<String>,
    /// Digests of content-like parameters (`content`, `old_string`, `new_string`).
    #[serde(default)]
    pub content_digests: Vec<NamedDigest>,
    /// `rejected`, `denied`, `executed`, `failed`, `cancelled`.
    pub stage: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedDigest {
    pub name: String,
    pub digest: TextDigest,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TracePermission {
    pub call_id: String,
    pub tool: String,
    /// `allow`, `ask` or `deny`.
    pub action: String,
    pub reason_code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_path: Option<String>,
    pub remember_eligible: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceApproval {
    pub request_id: String,
    pub call_id: String,
    pub tool: String,
    pub decision: Decision,
    pub source: ApprovalSource,
    pub diff_added: usize,
    pub diff_removed: usize,
    pub diff_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceCheckpoint {
    pub call_id: String,
    /// `created` or `failed`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
    pub path: String,
    pub existed_before: bool,
    /// `sha256:<hex>` of the captured bytes, when the file existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceExecution {
    pub call_id: String,
    pub tool: String,
    pub success: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Digest of the tool's output as given to the model.
    pub output: TextDigest,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceVerification {
    pub call_id: String,
    pub path: String,
    /// `PASS` or `INTEGRITY_FAIL`.
    pub status: String,
    pub summary: String,
}

/// One profile command: what ran, how it ended, and what containment was in force. Output
/// appears only as digests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceCommand {
    pub call_id: String,
    pub profile: String,
    pub argv: Vec<String>,
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    pub stdout: TextDigest,
    pub stderr: TextDigest,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub redaction_applied: bool,
    pub withheld_from_model: bool,
    pub network_isolated: bool,
    pub writes_confined: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceWarning {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceOutcome {
    pub status: CompletionStatus,
    pub classification: Classification,
    /// `NOT_REQUESTED`, `NOT_ATTEMPTED`, `SUCCEEDED`, `PARTIAL`, `FAILED`, `DENIED`.
    pub mutation_status: String,
    /// `DENIED`, `GRANTED_OR_NOT_REQUIRED` or `NONE`.
    pub approval_status: String,
    pub answer: TextDigest,
}

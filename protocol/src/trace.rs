//! The trace record: one JSON document per turn, `schemaVersion` 5.
//!
//! Prompts, answers and file contents appear only as SHA-256 digests and counts
//! ([`TextDigest`]); file paths, tool names and the parts of the request that name a target are
//! kept. A trace is evidence for review, not an integrity guarantee: it is a plain file with no
//! hash chain or signature, and it is not tamper-evident.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::instructions::InstructionFile;
use crate::verdict::{
    ApprovalSource, ChoiceSource, Classification, CompletionStatus, Decision, ReadingChoice,
};

/// The `schemaVersion` every trace written today carries.
pub const TRACE_SCHEMA_VERSION: u32 = 5;

/// One turn's trace: what the runtime decided and did, with texts reduced to digests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceRecord {
    /// Always [`TRACE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The trace's id (`trc-` + 32 hex), as in the turn's outcome.
    pub trace_id: String,
    /// The session the turn ran in.
    pub session_id: String,
    /// The turn's id.
    pub turn_id: String,
    /// The turn's number within its session, from 1.
    pub turn_number: u64,
    /// Milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// When the turn ended, in milliseconds since the Unix epoch.
    pub finished_at_ms: u64,
    /// `sha256:<hex>` of the workspace root path.
    pub workspace_hash: String,
    /// The session's mode (`agent`, `ask`, `plan`, `auto` or `private`).
    pub mode: String,
    /// The model endpoint and how tool calls were offered.
    pub model: TraceModel,
    /// Digest of the prompt.
    pub request: TextDigest,
    /// The parts of the request that name a target, kept as written.
    pub request_targets: Vec<String>,
    /// The task contract the request resolved to.
    pub task_contract: TraceContract,
    /// The turn plan built from the contract.
    pub turn_plan: TracePlan,
    /// Files pinned into the turn's context, with digests of what the model was shown.
    #[serde(default)]
    pub pinned: Vec<NamedDigest>,
    /// The project's instruction files sent to the model, root first, with each one's hash.
    #[serde(default)]
    pub instructions: Vec<InstructionFile>,
    /// Each hook's verdict on a call (`pre_call`) and each `post_turn` hook's run, in order.
    #[serde(default)]
    pub hooks: Vec<TraceHook>,
    /// The MCP tools the turn offered (`mcp.fs.read_text`).
    #[serde(default)]
    pub mcp_tools: Vec<String>,
    /// Each call to an MCP tool: how it was decided, answered and what came back, by hash.
    #[serde(default)]
    pub mcp_calls: Vec<TraceMcpCall>,
    /// Phase changes in order, e.g. `APPLY` to `VERIFY` after a change.
    pub phase_transitions: Vec<TracePhaseTransition>,
    /// The tools offered, one entry per model call.
    pub tool_surfaces: Vec<TraceSurface>,
    /// Every model call, in order.
    pub model_calls: Vec<TraceModelCall>,
    /// Every tool call the model proposed, in order.
    pub tool_calls: Vec<TraceToolCall>,
    /// The permission ladder's decision for each call that reached it.
    pub permission_decisions: Vec<TracePermission>,
    /// Every approval asked and how it ended.
    pub approvals: Vec<TraceApproval>,
    /// Checkpoints taken (or failed) before writes.
    pub checkpoints: Vec<TraceCheckpoint>,
    /// Tool calls that ran and what they returned.
    pub executions: Vec<TraceExecution>,
    /// Read-backs and task checks after changes.
    pub verification: Vec<TraceVerification>,
    /// Commands run through profiles.
    #[serde(default)]
    pub commands: Vec<TraceCommand>,
    /// Runtime warnings (`MODEL_UNREACHABLE`, `ITERATION_LIMIT`, ...).
    pub warnings: Vec<TraceWarning>,
    /// How the turn ended.
    pub outcome: TraceOutcome,
}

/// A text reduced to what can be kept without keeping it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextDigest {
    /// `sha256:<hex>`.
    pub hash: String,
    /// Unicode scalar values.
    pub chars: usize,
    /// UTF-8 bytes.
    pub bytes: usize,
    /// Lines as a person counts them (a final newline adds none; empty text has 0).
    pub lines: usize,
}

/// The model endpoint of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceModel {
    /// The engine the server was found to be: `llama.cpp` or `openai`.
    pub backend: String,
    /// The model server's base URL.
    pub url: String,
    /// The model's name: its entry in `models:`, or `default` for the one `model:`.
    #[serde(default)]
    pub name: String,
    /// `native` or `text`: how tool calls were offered and parsed this turn.
    pub tool_calling: String,
    /// The model an OpenAI-compatible server was asked for when `model.name` is not set: the
    /// first it lists in `/v1/models` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<String>,
}

/// One call to an MCP server's tool in a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceMcpCall {
    /// The call's id within the turn.
    pub call_id: String,
    /// `mcp.SERVER.TOOL`.
    pub tool: String,
    /// The arguments sent (JSON text), by digest.
    pub arguments: TextDigest,
    /// The ladder's (or a hook's) decision: `allow`, `ask` or `deny`.
    pub action: String,
    /// Why (`MCP_DEFAULT_ASK`, `CONFIG_ALLOW`, `HOOK_DENY`, ...).
    pub reason_code: String,
    /// The person's answer when asked: `approve` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Decision>,
    /// The approval request's id, when one was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The server's output, by digest, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<TextDigest>,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
    /// The output was cut at `max_output_bytes`.
    pub truncated: bool,
    /// Why there is no output (crash, timeout, malformed answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One hook's run in a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceHook {
    /// `pre_call` or `post_turn`.
    pub event: String,
    /// The call a `pre_call` hook was asked about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The hook's place in its list (`hooks.pre_call[0]`).
    pub hook: usize,
    /// `allow`, `ask` or `deny` for `pre_call`; `told` or `failed` for `post_turn`.
    pub decision: String,
    /// The reason the hook gave (escaped, at most 300 characters).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Why its answer was not used (a crash, a timeout, output that did not parse): such a
    /// `pre_call` hook denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The task contract as the trace keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceContract {
    /// The task kind, e.g. `FILE_EDIT` (`type` on the wire).
    #[serde(rename = "type")]
    pub task_type: String,
    /// Whether the request asked for a change.
    pub mutation_requested: bool,
    /// Whether a change is allowed (false in read-only modes).
    pub mutation_allowed: bool,
    /// Whether a change must be verified by reading it back.
    pub verification_required: bool,
    /// Paths the request expects to change.
    pub expected_targets: Vec<String>,
    /// Paths the request names as sources to read.
    pub source_evidence_targets: Vec<String>,
    /// Paths the request forbids touching, sorted.
    pub forbidden_targets: Vec<String>,
    /// Why the request was classified as it was.
    pub classification_reason: String,
    /// Every target the request named, with its role (`MUST_MUTATE`, `VERIFY_ONLY`, ...).
    #[serde(default)]
    pub roleful_targets: Vec<TraceTarget>,
    /// How many visible facts a static-web request asked to keep (the facts are request text
    /// and are not kept).
    #[serde(default)]
    pub required_visible_facts: usize,
    /// Artifacts a static-web request said must not appear.
    #[serde(default)]
    pub forbidden_artifacts: Vec<String>,
    /// The request could mean a change or only a question, and the person was asked
    /// (`contract/choose`); absent when its words decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<TraceReading>,
}

/// How an uncertain reading was settled: who answered, and which reading was chosen. The rest
/// of the contract is the one the turn ran under (the chosen reading's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceReading {
    /// The existing files the change reading named.
    pub targets: Vec<String>,
    /// The reading chosen; absent when none was (the turn ended `CONTRACT_AMBIGUOUS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ReadingChoice>,
    /// Who or what ended the question.
    pub source: ChoiceSource,
}

/// One target named by the request, with its role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceTarget {
    /// The workspace-relative path.
    pub path: String,
    /// Its role: `MUST_MUTATE`, `VERIFY_ONLY`, `FORBIDDEN`, ...
    pub role: String,
    /// Where in the request the target came from.
    pub source: String,
    /// Why it got that role.
    pub reason: String,
}

/// The turn plan's components as the trace keeps them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TracePlan {
    /// The session posture applied to the contract.
    pub posture: String,
    /// The phase the turn started in.
    pub phase_initial: String,
    /// The phase the turn ended in.
    pub phase_final: String,
    /// What the turn had to do.
    pub action_obligation: String,
    /// What evidence the turn had to gather.
    pub evidence_obligation: String,
    /// What the answer had to contain.
    pub output_obligation: String,
    /// The plan's expectations, compiled from the contract.
    pub expectations: Vec<String>,
    /// The results the request asked for.
    pub requested_results: Vec<String>,
    /// Tools offered as native tool definitions.
    pub native_tools: Vec<String>,
    /// Tools described in the system prompt.
    pub prompt_tools: Vec<String>,
    /// Tools withheld from this turn.
    pub blocked_tools: Vec<String>,
    /// Why the surface is what it is.
    pub surface_reason: String,
    /// A follow-up turn's inherited contract, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_task_context: Option<String>,
    /// What the turn should produce.
    pub artifact_goal: Vec<String>,
    /// Which verifier checks the result.
    pub verifier_profile: String,
    /// The most model calls the turn may make.
    pub iteration_budget: usize,
}

/// One phase change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TracePhaseTransition {
    /// The phase before.
    pub from: String,
    /// The phase after.
    pub to: String,
    /// Why it changed.
    pub reason: String,
}

/// The tools offered to one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceSurface {
    /// The model call's index, from 0.
    pub model_call: usize,
    /// The phase at that call.
    pub phase: String,
    /// The tool names offered.
    pub tools: Vec<String>,
    /// Why these tools.
    pub reason: String,
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceModelCall {
    /// The call's index, from 0.
    pub index: usize,
    /// The server's finish reason (`stop`, `tool_calls`, ...), or empty when the call failed.
    pub finish_reason: String,
    /// Digest of the model's text.
    pub content: TextDigest,
    /// How many tool calls the reply carried.
    pub tool_calls: usize,
    /// Prompt tokens, when the server reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, when the server reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Prompt tokens served from the slot's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// The context this request could use (tokens), when the turn knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// Tokens Talos counted for the prompt it assembled (the server's tokenizer, else the
    /// documented estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgeted_tokens: Option<u64>,
    /// What the context budget left out of this request, one note per cut.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut: Vec<String>,
    /// Why the call failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One tool call the model proposed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceToolCall {
    /// The call's id within the turn (`call-1`, ...).
    pub call_id: String,
    /// The name as the model wrote it.
    pub requested_name: String,
    /// The canonical tool, when the name resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `native` or `text`.
    pub source: String,
    /// The names of the call's parameters (values are not kept).
    pub parameter_names: Vec<String>,
    /// The target path, with protected paths replaced by `<protected-path>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_hint: Option<String>,
    /// Digests of content-like parameters (`content`, `old_string`, `new_string`).
    #[serde(default)]
    pub content_digests: Vec<NamedDigest>,
    /// `rejected`, `denied`, `executed`, `failed`, `cancelled`.
    pub stage: String,
    /// Why the call was rejected or denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<String>,
}

/// A digest with the name of what it digests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamedDigest {
    /// The parameter or file name.
    pub name: String,
    /// The digest.
    pub digest: TextDigest,
}

/// One decision of the permission ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TracePermission {
    /// The call decided on.
    pub call_id: String,
    /// The canonical tool.
    pub tool: String,
    /// `allow`, `ask` or `deny`.
    pub action: String,
    /// The rule that decided, e.g. `DEFAULT_WRITE_ASK` or `PROTECTED_PATH_DENY`.
    pub reason_code: String,
    /// The target, relative to the workspace, when the call has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_path: Option<String>,
    /// Whether `approveForSession` would be remembered for this call.
    pub remember_eligible: bool,
}

/// One approval and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceApproval {
    /// The approval's id.
    pub request_id: String,
    /// The call it was for.
    pub call_id: String,
    /// The tool of that call.
    pub tool: String,
    /// The decision in force.
    pub decision: Decision,
    /// Who or what decided.
    pub source: ApprovalSource,
    /// Lines added in the diff shown.
    pub diff_added: usize,
    /// Lines removed in the diff shown.
    pub diff_removed: usize,
    /// Whether the diff shown was cut at its cap.
    pub diff_truncated: bool,
}

/// One checkpoint taken before a write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceCheckpoint {
    /// The call whose write it protects.
    pub call_id: String,
    /// `created` or `failed`.
    pub status: String,
    /// The checkpoint's id (`chk-` + 32 hex), when it was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
    /// The workspace-relative path saved.
    pub path: String,
    /// Whether the file existed before the write.
    pub existed_before: bool,
    /// `sha256:<hex>` of the captured bytes, when the file existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob_sha256: Option<String>,
    /// Why the checkpoint failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One tool call that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceExecution {
    /// The call's id.
    pub call_id: String,
    /// The canonical tool.
    pub tool: String,
    /// Whether the tool succeeded.
    pub success: bool,
    /// The workspace-relative target, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Digest of the tool's output as given to the model.
    pub output: TextDigest,
    /// `sha256:<hex>` of the file after a write, when the tool wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256_after: Option<String>,
    /// Why the tool failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One check after a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceVerification {
    /// The call checked (`task` for a whole-task check).
    pub call_id: String,
    /// The path checked.
    pub path: String,
    /// `PASS` or `INTEGRITY_FAIL`.
    pub status: String,
    /// What the check found, in one line.
    pub summary: String,
}

/// One profile command: what ran, how it ended, and what containment was in force. Output
/// appears only as digests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceCommand {
    /// The call that ran the command.
    pub call_id: String,
    /// The profile's id, e.g. `cargo_test` or `ws:lint`.
    pub profile: String,
    /// The program and its arguments as run.
    pub argv: Vec<String>,
    /// The working directory, relative to the workspace.
    pub cwd: String,
    /// The exit code, absent when the process was killed or did not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether the profile's timeout stopped it.
    pub timed_out: bool,
    /// Whether the turn's cancellation stopped it.
    pub cancelled: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// Digest of standard output as captured.
    pub stdout: TextDigest,
    /// Digest of standard error as captured.
    pub stderr: TextDigest,
    /// Whether standard output was cut at its cap.
    pub stdout_truncated: bool,
    /// Whether standard error was cut at its cap.
    pub stderr_truncated: bool,
    /// Whether secrets were redacted from the output given to the model.
    pub redaction_applied: bool,
    /// Whether the output was withheld from the model.
    pub withheld_from_model: bool,
    /// Whether the command ran without network access.
    pub network_isolated: bool,
    /// Whether its writes were confined to the workspace.
    pub writes_confined: bool,
}

/// A runtime warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceWarning {
    /// A stable code, e.g. `ITERATION_LIMIT`.
    pub code: String,
    /// What happened, in one line.
    pub message: String,
}

/// How the turn ended, as the trace keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TraceOutcome {
    /// Coarse status, as in the turn's outcome.
    pub status: CompletionStatus,
    /// Fine classification, as in the turn's outcome.
    pub classification: Classification,
    /// `NOT_REQUESTED`, `NOT_ATTEMPTED`, `SUCCEEDED`, `PARTIAL`, `FAILED`, `DENIED`.
    pub mutation_status: String,
    /// `DENIED`, `GRANTED_OR_NOT_REQUIRED` or `NONE`.
    pub approval_status: String,
    /// Digest of the final answer after the answer guards.
    pub answer: TextDigest,
    /// How many times the runtime re-prompted the model because it stopped before the turn's
    /// action or evidence obligation was met (at most one per obligation; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub obligation_retries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

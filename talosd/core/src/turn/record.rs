//! The turn's domain record: what the runtime decided and did, entry by entry, in the order it
//! happened. The daemon turns it into the wire trace (schema version 5) in one place
//! (`talosd/src/to_proto/record.rs`); nothing here knows the wire format.

use crate::planning::tools::ToolId;
use crate::request::outcome::TurnFacts;
use crate::text::digest::{Digested, digest_text};

/// Why the runtime added a warning to the trace. The wire keeps [`WarningCode::as_str`];
/// `tests/tests/tidy/main.rs` checks every code is documented in `docs/traces.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WarningCode {
    /// An MCP tool that does not say it is read-only ran: Talos cannot see what it did.
    ExternalEffects,
    CleanVerdictContradicted,
    /// The model server said a request did not fit its context; it was cut and sent again.
    ContextExceeded,
    /// Even the system text, the tools and the request do not fit the context.
    ContextTooSmall,
    DeceptiveTextInApproval,
    DocumentNotReadable,
    EvidenceTargetNotRead,
    ExactLiteralWriteCorrected,
    /// An ignore file the index walk did not read (a link out, not a regular file, over the
    /// cap): its patterns did not apply.
    IgnoreFileNotRead,
    InteractionCheckNotRun,
    IterationLimit,
    MalformedCallIgnored,
    ModelNotReady,
    /// The model server refused the request for its key.
    ModelRefused,
    ModelUnreachable,
    ObligationRetry,
    ProtectedContentWithheld,
    /// The model asked for a read this turn had already made, of a file unchanged since.
    RepeatedRead,
    /// The constraint left the model only the choice of the line of an edit: the new text was
    /// the old line with the request's replacement made.
    ConstraintChoseNewText,
    SurfaceEscalationRefused,
    ToolCallIgnoredOnChatTurn,
    ToolContentSanitized,
    ToolLoopStopped,
    WebRepairRun,
}

impl WarningCode {
    /// Every code, for documentation checks.
    pub const ALL: [WarningCode; 24] = [
        WarningCode::ExternalEffects,
        WarningCode::CleanVerdictContradicted,
        WarningCode::ContextExceeded,
        WarningCode::ContextTooSmall,
        WarningCode::DeceptiveTextInApproval,
        WarningCode::DocumentNotReadable,
        WarningCode::EvidenceTargetNotRead,
        WarningCode::ExactLiteralWriteCorrected,
        WarningCode::IgnoreFileNotRead,
        WarningCode::InteractionCheckNotRun,
        WarningCode::IterationLimit,
        WarningCode::MalformedCallIgnored,
        WarningCode::ModelNotReady,
        WarningCode::ModelRefused,
        WarningCode::ModelUnreachable,
        WarningCode::ObligationRetry,
        WarningCode::ProtectedContentWithheld,
        WarningCode::RepeatedRead,
        WarningCode::ConstraintChoseNewText,
        WarningCode::SurfaceEscalationRefused,
        WarningCode::ToolCallIgnoredOnChatTurn,
        WarningCode::ToolContentSanitized,
        WarningCode::ToolLoopStopped,
        WarningCode::WebRepairRun,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::ExternalEffects => "EXTERNAL_EFFECTS",
            WarningCode::CleanVerdictContradicted => "CLEAN_VERDICT_CONTRADICTED",
            WarningCode::ContextExceeded => "CONTEXT_EXCEEDED",
            WarningCode::ContextTooSmall => "CONTEXT_TOO_SMALL",
            WarningCode::DeceptiveTextInApproval => "DECEPTIVE_TEXT_IN_APPROVAL",
            WarningCode::DocumentNotReadable => "DOCUMENT_NOT_READABLE",
            WarningCode::EvidenceTargetNotRead => "EVIDENCE_TARGET_NOT_READ",
            WarningCode::ExactLiteralWriteCorrected => "EXACT_LITERAL_WRITE_CORRECTED",
            WarningCode::IgnoreFileNotRead => "IGNORE_FILE_NOT_READ",
            WarningCode::InteractionCheckNotRun => "INTERACTION_CHECK_NOT_RUN",
            WarningCode::IterationLimit => "ITERATION_LIMIT",
            WarningCode::MalformedCallIgnored => "MALFORMED_CALL_IGNORED",
            WarningCode::ModelNotReady => "MODEL_NOT_READY",
            WarningCode::ModelRefused => "MODEL_REFUSED",
            WarningCode::ModelUnreachable => "MODEL_UNREACHABLE",
            WarningCode::ObligationRetry => "OBLIGATION_RETRY",
            WarningCode::ProtectedContentWithheld => "PROTECTED_CONTENT_WITHHELD",
            WarningCode::RepeatedRead => "REPEATED_READ",
            WarningCode::ConstraintChoseNewText => "CONSTRAINT_CHOSE_NEW_TEXT",
            WarningCode::SurfaceEscalationRefused => "SURFACE_ESCALATION_REFUSED",
            WarningCode::ToolCallIgnoredOnChatTurn => "TOOL_CALL_IGNORED_ON_CHAT_TURN",
            WarningCode::ToolContentSanitized => "TOOL_CONTENT_SANITIZED",
            WarningCode::ToolLoopStopped => "TOOL_LOOP_STOPPED",
            WarningCode::WebRepairRun => "WEB_REPAIR_RUN",
        }
    }
}

/// Where a proposed call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStage {
    /// Refused by a check or loop discipline, before the ladder or before approval.
    Rejected,
    /// Denied by the ladder or by the person.
    Denied,
    Executed,
    Failed,
}

impl CallStage {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStage::Rejected => "rejected",
            CallStage::Denied => "denied",
            CallStage::Executed => "executed",
            CallStage::Failed => "failed",
        }
    }
}

/// Whether a check of the result held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    Pass,
    /// A write whose read-back did not match what was approved.
    IntegrityFail,
    /// A postcondition or a task check that failed.
    Fail,
    /// Changed and read back, but the request gave nothing to check.
    NotChecked,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "PASS",
            CheckStatus::IntegrityFail => "INTEGRITY_FAIL",
            CheckStatus::Fail => "FAIL",
            CheckStatus::NotChecked => "NOT_CHECKED",
        }
    }
}

/// Who or what answered an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerSource {
    Client,
    Disconnect,
    Timeout,
    Cancelled,
}

impl AnswerSource {
    /// How the per-file result names it.
    pub fn describe(self) -> &'static str {
        match self {
            AnswerSource::Client => "by the user",
            AnswerSource::Disconnect => "client disconnected",
            AnswerSource::Timeout => "approval timed out",
            AnswerSource::Cancelled => "turn cancelled",
        }
    }
}

/// The person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    ApproveForSession,
    Deny,
}

/// An answered approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub decision: Decision,
    pub source: AnswerSource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    pub call_id: String,
    pub requested_name: String,
    pub tool: Option<ToolId>,
    /// `native` or `text`.
    pub source: &'static str,
    pub parameter_names: Vec<String>,
    pub path_hint: Option<String>,
    pub content_digests: Vec<(String, Digested)>,
    pub stage: CallStage,
    pub rejection: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRecord {
    pub call_id: String,
    /// The tool's name (`talos.edit_file`, `mcp.fs.write_text`).
    pub tool: String,
    pub action: crate::proposal::ladder::Action,
    pub reason_code: String,
    pub relative_path: Option<String>,
    pub remember_eligible: bool,
}

/// One call to an MCP server's tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalCallRecord {
    pub call_id: String,
    /// `mcp.SERVER.TOOL`.
    pub tool: String,
    /// The arguments sent, as JSON text, by hash.
    pub arguments: Digested,
    pub action: crate::proposal::ladder::Action,
    pub reason_code: String,
    /// The person's answer, when asked.
    pub approval: Option<Decision>,
    pub approval_request: Option<String>,
    /// The server's output, by hash, when it answered.
    pub output: Option<Digested>,
    pub is_error: bool,
    pub truncated: bool,
    /// Why the call failed (crash, timeout, malformed answer).
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    pub request_id: String,
    pub call_id: String,
    pub tool: ToolId,
    pub answer: Answer,
    pub diff_added: usize,
    pub diff_removed: usize,
    pub diff_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRecord {
    pub call_id: String,
    /// The checkpoint id, or why none could be taken.
    pub result: Result<CheckpointTaken, String>,
    pub path: String,
    pub existed_before: bool,
}

/// A checkpoint the store took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointTaken {
    pub checkpoint_id: String,
    pub existed_before: bool,
    /// `<hex>` of the captured bytes, when a single file existed.
    pub blob_sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionRecord {
    pub call_id: String,
    pub tool: ToolId,
    pub success: bool,
    pub path: Option<String>,
    pub output: Digested,
    pub sha256_after: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationRecord {
    /// The call checked, or `task` for the task verifier.
    pub call_id: String,
    pub path: String,
    pub status: CheckStatus,
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRecord {
    pub call_id: String,
    pub profile: String,
    pub argv: Vec<String>,
    pub cwd: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    pub stdout: Digested,
    pub stderr: Digested,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub redaction_applied: bool,
    pub withheld_from_model: bool,
    pub network_isolated: bool,
    pub writes_confined: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceRecord {
    pub model_call: usize,
    pub phase: crate::planning::plan::Phase,
    pub tools: Vec<ToolId>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCallRecord {
    pub index: usize,
    pub finish_reason: String,
    pub content: Digested,
    pub tool_calls: usize,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    /// The context the request could use, and what the core counted for its prompt.
    pub context_tokens: Option<u64>,
    pub budgeted_tokens: Option<u64>,
    /// What the context budget left out, one label per cut.
    pub cut: Vec<String>,
    pub error: Option<String>,
}

/// One file's result as the person sees it in the outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResult {
    pub path: String,
    pub changed: bool,
    pub detail: String,
}

/// How tool calls were offered this turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CallingRecord {
    /// Not decided (the turn ended before the model was asked).
    #[default]
    Undecided,
    /// The runtime answered without the model.
    None,
    Native,
    Text,
}

impl CallingRecord {
    pub fn as_str(self) -> &'static str {
        match self {
            CallingRecord::Undecided => "",
            CallingRecord::None => "none",
            CallingRecord::Native => "native",
            CallingRecord::Text => "text",
        }
    }
}

/// Everything the turn recorded, and the facts the outcome is classified from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnRecord {
    pub tool_calling: CallingRecord,
    pub pinned: Vec<(String, Digested)>,
    /// The project's instruction files sent to the model, by hash.
    pub instructions: Vec<crate::request::instructions::Used>,
    /// Each hook's verdict on a call, and each `post_turn` hook's run.
    pub hooks: Vec<crate::proposal::hooks::HookRecord>,
    /// The MCP tools offered this turn (`mcp.fs.read_text`).
    pub external_offered: Vec<String>,
    /// Each call to an MCP tool: its decision, approval, and output by hash.
    pub external_calls: Vec<ExternalCallRecord>,
    pub phase_transitions: Vec<(
        crate::planning::plan::Phase,
        crate::planning::plan::Phase,
        String,
    )>,
    pub tool_surfaces: Vec<SurfaceRecord>,
    pub model_calls: Vec<ModelCallRecord>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub permission_decisions: Vec<PermissionRecord>,
    pub approvals: Vec<ApprovalRecord>,
    pub checkpoints: Vec<CheckpointRecord>,
    pub executions: Vec<ExecutionRecord>,
    pub verification: Vec<VerificationRecord>,
    pub commands: Vec<CommandRecord>,
    pub warnings: Vec<Warning>,
    pub files: Vec<FileResult>,
    pub facts: TurnFacts,
    /// Paths read this turn (for the read-before-edit hint and evidence).
    pub read_paths: Vec<String>,
    /// Lines of protected files read this turn: the final answer must not echo them.
    pub protected_lines: Vec<String>,
    /// Each listing this turn returned: the folder as the call named it, and the names.
    pub listings: Vec<(String, String)>,
}

impl TurnRecord {
    pub fn warn(&mut self, code: WarningCode, message: impl Into<String>) {
        self.warnings.push(Warning {
            code,
            message: message.into(),
        });
    }

    /// An `IGNORE_FILE_NOT_READ` warning for each ignore file the index walk did not read.
    pub(crate) fn unread_ignore_files(
        &mut self,
        files: &[crate::planning::retrieval::UnreadIgnoreFile],
    ) {
        for file in files {
            self.warn(WarningCode::IgnoreFileNotRead, file.message());
        }
    }

    pub fn file(&mut self, path: &str, changed: bool, detail: impl Into<String>) {
        self.files.push(FileResult {
            path: path.to_string(),
            changed,
            detail: detail.into(),
        });
    }

    pub fn execution(
        &mut self,
        call_id: &str,
        tool: ToolId,
        success: bool,
        path: Option<String>,
        output: &str,
    ) {
        self.executions.push(ExecutionRecord {
            call_id: call_id.to_string(),
            tool,
            success,
            path,
            output: digest_text(output),
            sha256_after: None,
            error: None,
        });
    }

    pub fn verified(&mut self, call_id: &str, path: &str, status: CheckStatus, summary: &str) {
        self.verification.push(VerificationRecord {
            call_id: call_id.to_string(),
            path: path.to_string(),
            status,
            summary: summary.to_string(),
        });
    }
}

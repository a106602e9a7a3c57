//! The task contract: what a turn may do, resolved from the request by deterministic code,
//! before the model is asked anything. "Not a planner and not an LLM classifier."
//!
//! [`resolve`] runs the reference's pipeline: blank or synthetic input is UNKNOWN; checkpoint
//! restore, workspace switch and tool-alias questions are answered directly; the mutation
//! intent (`contract/mutation.rs`) decides whether the person asked for a change and why; the
//! task type follows (`contract/classify.rs`); targets are extracted with their negations and
//! evidence roles (`targets`); the roleful intent (`intent`) may sharpen the contract, and the
//! contract's target lists are always compiled back from that roleful list.

mod classify;
mod direct;
pub(crate) mod lexical;
mod mutation;
mod questions;
mod read_only;
mod web;

use crate::intent::{self, TargetRef};
use crate::targets::{self, dedup};
use lexical::Lex;
pub use web::{NamedInteraction, WebRequest, web_request};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskType {
    SmallTalk,
    DirectoryListing,
    ReadOnlyQa,
    WorkspaceExplain,
    DiagnoseOnly,
    FileEdit,
    FileCreate,
    CheckpointRestore,
    VerifyOnly,
    Unknown,
}

impl TaskType {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskType::SmallTalk => "SMALL_TALK",
            TaskType::DirectoryListing => "DIRECTORY_LISTING",
            TaskType::ReadOnlyQa => "READ_ONLY_QA",
            TaskType::WorkspaceExplain => "WORKSPACE_EXPLAIN",
            TaskType::DiagnoseOnly => "DIAGNOSE_ONLY",
            TaskType::FileEdit => "FILE_EDIT",
            TaskType::FileCreate => "FILE_CREATE",
            TaskType::CheckpointRestore => "CHECKPOINT_RESTORE",
            TaskType::VerifyOnly => "VERIFY_ONLY",
            TaskType::Unknown => "UNKNOWN",
        }
    }

    /// Whether a contract of this type may change files when change is requested.
    pub fn mutates(self) -> bool {
        match self {
            TaskType::FileEdit | TaskType::FileCreate => true,
            TaskType::SmallTalk
            | TaskType::DirectoryListing
            | TaskType::ReadOnlyQa
            | TaskType::WorkspaceExplain
            | TaskType::DiagnoseOnly
            | TaskType::CheckpointRestore
            | TaskType::VerifyOnly
            | TaskType::Unknown => false,
        }
    }
}

/// What a static page must keep and must not grow (reference 2.1, component 10).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticWebRequirements {
    /// Facts listed after "preserve|keep|retain … facts|details|content:" (≤40, ≤120 chars).
    pub required_visible_facts: Vec<String>,
    /// The forbidden targets, as artifacts the page must not reference or create.
    pub forbidden_artifacts: Vec<String>,
}

/// What a turn may do. Built only by [`resolve`] (or `history::resolve_in_context`) and
/// rewritten only by the posture. The three target lists are compiled from `roleful_targets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskContract {
    pub task_type: TaskType,
    pub mutation_requested: bool,
    pub mutation_allowed: bool,
    pub verification_required: bool,
    pub expected_targets: Vec<String>,
    pub source_evidence_targets: Vec<String>,
    pub forbidden_targets: Vec<String>,
    pub original_request: String,
    pub classification_reason: String,
    pub static_web: StaticWebRequirements,
    pub roleful_targets: Vec<TargetRef>,
    /// What the request says about web work, for the static web verifier (`contract/web.rs`).
    pub web: WebRequest,
}

impl TaskContract {
    /// A contract whose target lists are compiled from `roleful_targets`, with the flags
    /// derived from the type: allowed = requested and FILE_EDIT|FILE_CREATE, verification =
    /// allowed or VERIFY_ONLY.
    pub(crate) fn compiled(
        task_type: TaskType,
        mutation_requested: bool,
        original_request: String,
        reason: &str,
        static_web_facts: Vec<String>,
        roleful_targets: Vec<TargetRef>,
    ) -> TaskContract {
        let mutation_allowed = mutation_requested && task_type.mutates();
        let compiled = intent::compile(&roleful_targets, mutation_requested);
        let web = web::web_request(&original_request, &compiled.expected);
        TaskContract {
            task_type,
            mutation_requested,
            mutation_allowed,
            verification_required: mutation_allowed || task_type == TaskType::VerifyOnly,
            static_web: StaticWebRequirements {
                required_visible_facts: static_web_facts,
                forbidden_artifacts: compiled.forbidden.clone(),
            },
            expected_targets: compiled.expected,
            source_evidence_targets: compiled.source_evidence,
            forbidden_targets: compiled.forbidden,
            original_request,
            classification_reason: reason.to_string(),
            roleful_targets,
            web,
        }
    }
}

/// Why a contract is what it is. Closed; the contract carries its string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    Unknown,
    CheckpointRestore,
    WorkspaceSwitch,
    ToolAlias,
    SessionMetaEvidence,
    SessionUncertainty,
    CommandVerification,
    UnsupportedCommand,
    GlobalReadOnlyNegation,
    PriorChangeStatusQuestion,
    AdvisoryMutationQuestion,
    InstructionalMutationQuestion,
    CapabilityOnlyArtifactQuestion,
    InlineOutputRequest,
    FileScopedDefectFix,
    FixProblemInFileTarget,
    ReviewAndFix,
    BatchWorkspaceApply,
    SourceToTargetArtifact,
    ReadThenMutation,
    RequestPattern,
    TerminalBuildArtifact,
    NaturalArtifact,
    MutationVerbWithFileTarget,
    MutationMarker,
    NonMutating,
    ScopedOutputConstraint,
    ConfirmationInherited,
    RepairInherited,
    CorrectionInherited,
    DeicticInherited,
}

impl Reason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Reason::Unknown => "unknown",
            Reason::CheckpointRestore => "checkpoint-restore-request",
            Reason::WorkspaceSwitch => "workspace-switch-unsupported",
            Reason::ToolAlias => "tool-alias-capability-question",
            Reason::SessionMetaEvidence => "session-meta-evidence-question",
            Reason::SessionUncertainty => "session-uncertainty-question",
            Reason::CommandVerification => "explicit-command-verification-request",
            Reason::UnsupportedCommand => "unsupported-command-verification-request",
            Reason::GlobalReadOnlyNegation => "global-read-only-negation",
            Reason::PriorChangeStatusQuestion => "prior-change-status-question",
            Reason::AdvisoryMutationQuestion => "advisory-mutation-question",
            Reason::InstructionalMutationQuestion => "instructional-mutation-question",
            Reason::CapabilityOnlyArtifactQuestion => "capability-only-artifact-question",
            Reason::InlineOutputRequest => "inline-output-request",
            Reason::FileScopedDefectFix => "explicit-file-scoped-defect-fix-request",
            Reason::FixProblemInFileTarget => "explicit-fix-problem-in-file-target",
            Reason::ReviewAndFix => "explicit-review-and-fix-request",
            Reason::BatchWorkspaceApply => "explicit-batch-workspace-apply-request",
            Reason::SourceToTargetArtifact => "explicit-source-to-target-artifact-request",
            Reason::ReadThenMutation => "explicit-read-then-mutation-request",
            Reason::RequestPattern => "explicit-request-pattern",
            Reason::TerminalBuildArtifact => "explicit-terminal-build-artifact-request",
            Reason::NaturalArtifact => "natural-artifact-request",
            Reason::MutationVerbWithFileTarget => "explicit-mutation-verb-with-file-target",
            Reason::MutationMarker => "explicit-mutation-marker",
            Reason::NonMutating => "non-mutating",
            Reason::ScopedOutputConstraint => "explicit-mutation-with-scoped-output-constraint",
            Reason::ConfirmationInherited => "confirmation-follow-up-inherited",
            Reason::RepairInherited => "repair-follow-up-inherited",
            Reason::CorrectionInherited => "correction-follow-up-inherited",
            Reason::DeicticInherited => "deictic-follow-up-inherited",
        }
    }

    /// The reference's rule: a mutation reason starts with `explicit-` or is the natural
    /// artifact request.
    pub(crate) fn is_mutation(self) -> bool {
        let text = self.as_str();
        text.starts_with("explicit-") || self == Reason::NaturalArtifact
    }
}

/// The contract before roles: what the lexical pipeline found (reference "legacy" contract).
#[derive(Debug, Clone)]
pub(crate) struct Legacy {
    pub(crate) task_type: TaskType,
    pub(crate) requested: bool,
    pub(crate) allowed: bool,
    pub(crate) reason: Reason,
    /// Named targets that must change (mutation turns) or be read (read-only turns).
    pub(crate) expected: Vec<String>,
    /// Outputs of a source-to-output request.
    pub(crate) outputs: Vec<String>,
    /// Conventional static-web targets supplied by the runtime.
    pub(crate) defaults: Vec<String>,
    pub(crate) sources: Vec<String>,
    pub(crate) forbidden: Vec<String>,
    /// The forbidden targets that came from "leave|keep|preserve X unchanged".
    pub(crate) preserved: Vec<String>,
    /// Every target named in the request, in order of appearance.
    pub(crate) named: Vec<String>,
}

/// Resolves a request into a task contract.
pub fn resolve(request: &str) -> TaskContract {
    let text = lexical::normalise(request);
    if text.is_empty() || is_synthetic(&text) {
        return TaskContract::compiled(
            TaskType::Unknown,
            false,
            request.to_string(),
            Reason::Unknown.as_str(),
            Vec::new(),
            Vec::new(),
        );
    }
    let lower = text.to_ascii_lowercase();
    let unquoted = lexical::blank_quotes(&lower);
    let lex = Lex::new(&text, &lower);
    let intent_lex = Lex::new(&text, &unquoted);
    let spans = targets::target_spans(&lex);
    let legacy = legacy(&lex, &intent_lex, &spans);
    let derived = intent::derive(&legacy, &lex, &spans);
    TaskContract::compiled(
        derived.task_type,
        derived.requested,
        request.to_string(),
        derived.reason.as_str(),
        targets::required_visible_facts(&lex),
        derived.targets,
    )
}

/// Synthetic tool-result messages are never user requests.
fn is_synthetic(text: &str) -> bool {
    ["[tool_result:", "[compacted:", "[tool_result]"]
        .iter()
        .any(|p| text.starts_with(p))
}

fn legacy(lex: &Lex<'_>, intent_lex: &Lex<'_>, spans: &[targets::TargetSpan]) -> Legacy {
    let named = dedup(spans.iter().map(|s| s.path.clone()));
    let mut out = Legacy {
        task_type: TaskType::SmallTalk,
        requested: false,
        allowed: false,
        reason: Reason::NonMutating,
        expected: Vec::new(),
        outputs: Vec::new(),
        defaults: Vec::new(),
        sources: Vec::new(),
        forbidden: Vec::new(),
        preserved: Vec::new(),
        named: named.clone(),
    };
    let direct = if classify::checkpoint_restore(lex) {
        Some((TaskType::CheckpointRestore, Reason::CheckpointRestore))
    } else if classify::workspace_switch(lex) {
        Some((TaskType::SmallTalk, Reason::WorkspaceSwitch))
    } else if classify::tool_alias_question(lex) {
        Some((TaskType::SmallTalk, Reason::ToolAlias))
    } else {
        None
    };
    if let Some((task_type, reason)) = direct {
        out.task_type = task_type;
        out.reason = reason;
        return out;
    }
    let meta = classify::session_meta_evidence(lex, !spans.is_empty());
    let uncertainty = classify::session_uncertainty(lex);
    let status = questions::is_status_question(intent_lex);
    let reason = mutation::reason(intent_lex, spans);
    let requested = !meta && !uncertainty && !status && reason.is_mutation();
    let command = (!meta && !uncertainty && !status && !requested)
        .then(|| classify::command_verification(lex, spans))
        .flatten();
    (out.task_type, out.reason) = if meta {
        (TaskType::VerifyOnly, Reason::SessionMetaEvidence)
    } else if uncertainty {
        (TaskType::VerifyOnly, Reason::SessionUncertainty)
    } else if status {
        (TaskType::VerifyOnly, reason)
    } else if let Some(command) = command {
        (TaskType::VerifyOnly, command)
    } else if requested {
        (classify::mutation_type(intent_lex, reason), reason)
    } else {
        (classify::read_only_type(lex, spans), reason)
    };
    out.requested = requested;
    out.allowed = requested && out.task_type.mutates();
    out.forbidden = targets::forbidden_in(lex, spans);
    out.preserved = targets::preserved_in(lex, spans);
    out.expected = dedup(named.into_iter().chain(targets::directory_targets(lex)));
    if requested {
        mutation_targets(&mut out, lex, spans);
    }
    let read_forbidden = targets::read_forbidden_in(lex, spans);
    out.expected.retain(|t| !read_forbidden.contains(t));
    out.sources.retain(|t| !read_forbidden.contains(t));
    out
}

/// Outputs, batch destinations, source evidence and conventional targets of a mutation turn.
fn mutation_targets(out: &mut Legacy, lex: &Lex<'_>, spans: &[targets::TargetSpan]) {
    if let Some(artifact) = targets::source_to_outputs(lex, spans) {
        out.expected.retain(|t| !artifact.sources.contains(t));
        out.expected.retain(|t| !artifact.outputs.contains(t));
        out.sources = artifact.sources;
        out.outputs = artifact.outputs;
    }
    let destinations = targets::operation_destinations(lex);
    if out.reason == Reason::BatchWorkspaceApply {
        let batch = dedup(
            targets::directory_targets(lex)
                .into_iter()
                .chain(destinations),
        );
        if !batch.is_empty() {
            out.expected = batch;
        }
    } else {
        out.expected = dedup(out.expected.drain(..).chain(destinations));
    }
    if !out.allowed {
        return;
    }
    let also_targets = targets::sources_are_also_targets(lex);
    let lexical_sources = targets::lexical_source_evidence(lex, spans);
    let writes_remain = |sources: &[String], forbidden: &[String], expected: &[String]| {
        expected
            .iter()
            .any(|t| !sources.contains(t) && !forbidden.contains(t))
    };
    if !lexical_sources.is_empty()
        && (!out.outputs.is_empty()
            || writes_remain(&lexical_sources, &out.forbidden, &out.expected))
    {
        out.sources = dedup(out.sources.drain(..).chain(lexical_sources.iter().cloned()));
        if !also_targets {
            out.expected.retain(|t| !lexical_sources.contains(t));
        }
    }
    if out.reason == Reason::ReadThenMutation && !also_targets {
        let reads = targets::read_then_mutation_sources(lex, spans);
        if !reads.is_empty() && writes_remain(&reads, &out.forbidden, &out.expected) {
            out.expected.retain(|t| !reads.contains(t));
            out.sources = dedup(out.sources.drain(..).chain(reads));
        }
    }
    let forbidden = out.forbidden.clone();
    out.expected.retain(|t| !forbidden.contains(t));
    if out.expected.is_empty() && out.outputs.is_empty() {
        out.defaults =
            targets::conventional_static_web_targets(lex, out.task_type == TaskType::FileCreate);
        out.defaults.retain(|t| !forbidden.contains(t));
    }
}

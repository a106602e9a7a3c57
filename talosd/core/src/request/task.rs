//! The vocabulary a task contract is written in: what kind of task a request is (`TaskType`),
//! why the resolver said so (`Reason`), and the contract before roles (`Legacy`), which the
//! role rules in `intent` refine. Below both `contract`, which resolves requests into these,
//! and `intent`, which reads them.

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

/// Why a contract is what it is. Closed; the trace keeps [`Reason::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
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
    /// "Change it back": the last recorded replacement, the other way round.
    RevertInherited,
    /// "Change it back" with no change in the session's records: said so, nothing guessed.
    NothingToRevert,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
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
            Reason::RevertInherited => "revert-follow-up-inherited",
            Reason::NothingToRevert => "revert-without-recorded-change",
        }
    }

    /// A mutation reason starts with `explicit-` or is the natural
    /// artifact request.
    pub(crate) fn is_mutation(self) -> bool {
        let text = self.as_str();
        text.starts_with("explicit-") || self == Reason::NaturalArtifact
    }
}

/// The contract before roles: what the lexical pipeline found (the "legacy" contract).
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

/// The built-in command profile ids, in registry order: words a request may name (the contract
/// reads them) and the profiles `planning::command` builds.
pub const BUILTIN_IDS: [&str; 10] = [
    "gradle_test",
    "gradle_check",
    "gradle_build",
    "gradle_install_dist",
    "gradle_e2e_test",
    "cargo_test",
    "cargo_check",
    "cargo_build",
    "cargo_clippy",
    "cargo_fmt_check",
];

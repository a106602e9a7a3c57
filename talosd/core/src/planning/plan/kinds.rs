//! The closed sets a turn plan is made of: action, evidence and output obligations, the
//! results a request asks for, the artifact goal and the verifier profile.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionObligation {
    DirectAnswerOnly,
    ListDirOnly,
    InspectRequired,
    MutatingToolRequired,
    VerifyFromEvidence,
    None,
    Unknown,
}

impl ActionObligation {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionObligation::DirectAnswerOnly => "DIRECT_ANSWER_ONLY",
            ActionObligation::ListDirOnly => "LIST_DIR_ONLY",
            ActionObligation::InspectRequired => "INSPECT_REQUIRED",
            ActionObligation::MutatingToolRequired => "MUTATING_TOOL_REQUIRED",
            ActionObligation::VerifyFromEvidence => "VERIFY_FROM_EVIDENCE",
            ActionObligation::None => "NONE",
            ActionObligation::Unknown => "UNKNOWN",
        }
    }
}

/// What evidence the answer must rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceObligation {
    None,
    ListDirectoryOnly,
    VerifyFromTraceOrEvidence,
    ReadTargetRequired,
    WorkspaceInspectionRequired,
}

impl EvidenceObligation {
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceObligation::None => "NONE",
            EvidenceObligation::ListDirectoryOnly => "LIST_DIRECTORY_ONLY",
            EvidenceObligation::VerifyFromTraceOrEvidence => "VERIFY_FROM_TRACE_OR_EVIDENCE",
            EvidenceObligation::ReadTargetRequired => "READ_TARGET_REQUIRED",
            EvidenceObligation::WorkspaceInspectionRequired => "WORKSPACE_INSPECTION_REQUIRED",
        }
    }
}

/// What the turn must hand back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputObligation {
    DirectAnswer,
    DirectoryListing,
    Answer,
    ChangedFiles,
}

/// One result the person asked for, checked against the records at the end of the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestedResult {
    Changed { target: String },
    Read { target: String },
    Answer,
}

/// What kind of artifact the turn is building.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactGoal {
    None,
    Files(Vec<String>),
}

/// Which verifier checks the turn's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifierProfile {
    None,
    ContentReadback,
}

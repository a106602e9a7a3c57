//! The turn plan: phases, expectations and the action obligation, built from the effective
//! contract. Its constructor recompiles the expectations from the contract and refuses a plan
//! whose expectations disagree with it.

use crate::planning::posture::EffectiveTurn;
use crate::planning::surface::{self, Surface};
use crate::planning::tools::ToolId;
use crate::request::change::ChangeAsk;
use crate::request::contract::{TaskContract, TaskType};

mod kinds;
mod steps;

pub use steps::{PlanStep, StepKind, steps};

pub use crate::request::phase::Phase;

pub use kinds::{
    ActionObligation, ArtifactGoal, EvidenceObligation, OutputObligation, RequestedResult,
    VerifierProfile,
};

/// Something the turn's records must show before the turn may be called complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expectation {
    /// This target must be changed by an approved, verified write.
    MustChange { target: String },
    /// The request names the change fully ("change X from A to B", "set X to V", "rename the
    /// function f to g"): the constraint offers only edits that make it, and the verifier
    /// checks the file holds it after the write (`crate::proposal::change_rule`).
    Change {
        target: String,
        ask: crate::request::change::ChangeAsk,
    },
    /// "Overwrite X with exactly LITERAL": the written bytes must equal the literal.
    ExactContent { target: String, content: String },
}

/// The parts of a plan a caller may claim; the constructor recompiles each from the contract
/// and refuses the plan when one disagrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanClaims {
    pub expectations: Vec<Expectation>,
    pub action_obligation: ActionObligation,
    pub requested_results: Vec<RequestedResult>,
}

/// Settings a plan takes from outside the contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanSettings {
    pub iteration_budget: usize,
    pub pinned: Vec<String>,
    /// When the contract was inherited from an earlier turn: a description of it.
    pub active_task_context: Option<String>,
}

impl Default for PlanSettings {
    fn default() -> Self {
        PlanSettings {
            iteration_budget: 8,
            pinned: Vec::new(),
            active_task_context: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    ExpectationsDisagree {
        claimed: Vec<Expectation>,
        compiled: Vec<Expectation>,
    },
    ObligationDisagrees {
        claimed: ActionObligation,
        compiled: ActionObligation,
    },
    RequestedResultsDisagree {
        claimed: Vec<RequestedResult>,
        compiled: Vec<RequestedResult>,
    },
    NoIterationBudget,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::ExpectationsDisagree { claimed, compiled } => write!(
                f,
                "turn plan expectations disagree with the contract: claimed {claimed:?}, contract gives {compiled:?}"
            ),
            PlanError::ObligationDisagrees { claimed, compiled } => write!(
                f,
                "turn plan obligation {} disagrees with the contract's {}",
                claimed.as_str(),
                compiled.as_str()
            ),
            PlanError::RequestedResultsDisagree { claimed, compiled } => write!(
                f,
                "turn plan requested results disagree with the contract: claimed {claimed:?}, contract gives {compiled:?}"
            ),
            PlanError::NoIterationBudget => write!(
                f,
                "turn plan needs an iteration budget of at least one model call"
            ),
        }
    }
}

/// The plan of one turn: 19 components (docs/decisions/0009-turn-plan.md). Fields are
/// private: a plan exists only through [`TurnPlan::new`] (or [`TurnPlan::from_turn`], which
/// compiles every claim).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPlan {
    /// 1-3: the effective contract (with the original request) and the posture.
    turn: EffectiveTurn,
    /// 4
    phase_initial: Phase,
    /// 5
    phase_final: Phase,
    /// 6
    action_obligation: ActionObligation,
    /// 7
    evidence_obligation: EvidenceObligation,
    /// 8
    output_obligation: OutputObligation,
    /// 9
    expectations: Vec<Expectation>,
    /// 10
    requested_results: Vec<RequestedResult>,
    /// 11 (native tools), 12 (prompt tools: the same list), 14 (surface reason)
    surface: Surface,
    /// 13: catalogue tools this turn may not use.
    blocked_tools: Vec<ToolId>,
    /// 15
    active_task_context: Option<String>,
    /// 16
    artifact_goal: ArtifactGoal,
    /// 17
    verifier_profile: VerifierProfile,
    /// 18
    iteration_budget: usize,
    /// 19
    pinned: Vec<String>,
}

impl TurnPlan {
    /// Builds the plan, refusing claims that differ from what the contract compiles to.
    pub fn new(
        turn: EffectiveTurn,
        claims: PlanClaims,
        settings: PlanSettings,
    ) -> Result<TurnPlan, PlanError> {
        let compiled = compile_expectations(&turn.contract);
        if claims.expectations != compiled {
            return Err(PlanError::ExpectationsDisagree {
                claimed: claims.expectations,
                compiled,
            });
        }
        let obligation = obligation_for(&turn);
        if claims.action_obligation != obligation {
            return Err(PlanError::ObligationDisagrees {
                claimed: claims.action_obligation,
                compiled: obligation,
            });
        }
        let results = requested_results_for(&turn.contract);
        if claims.requested_results != results {
            return Err(PlanError::RequestedResultsDisagree {
                claimed: claims.requested_results,
                compiled: results,
            });
        }
        if settings.iteration_budget == 0 {
            return Err(PlanError::NoIterationBudget);
        }
        Ok(TurnPlan::build(turn, settings))
    }

    /// The plan with every claim compiled from the contract, and default settings.
    pub fn from_turn(turn: EffectiveTurn) -> TurnPlan {
        TurnPlan::build(turn, PlanSettings::default())
    }

    /// The plan the runtime compiles for `turn` itself, with the daemon's settings: the
    /// expectations, obligation and results are the compiled ones, so there is nothing to
    /// disagree with ([`TurnPlan::new`] checks claims made elsewhere).
    pub fn compiled(turn: EffectiveTurn, settings: PlanSettings) -> TurnPlan {
        TurnPlan::build(turn, settings)
    }

    /// What a caller would claim for `turn`: the compiled expectations, obligation and results.
    pub fn claims_for(turn: &EffectiveTurn) -> PlanClaims {
        PlanClaims {
            expectations: compile_expectations(&turn.contract),
            action_obligation: obligation_for(turn),
            requested_results: requested_results_for(&turn.contract),
        }
    }

    fn build(turn: EffectiveTurn, settings: PlanSettings) -> TurnPlan {
        let contract = &turn.contract;
        let surface = surface::select(contract, turn.phase);
        let blocked_tools = ToolId::ALL
            .into_iter()
            .filter(|t| !surface.allows(*t))
            .collect();
        let phase_final = if contract.mutation_allowed && turn.phase == Phase::Apply {
            Phase::Verify
        } else {
            turn.phase
        };
        TurnPlan {
            phase_initial: turn.phase,
            phase_final,
            action_obligation: obligation_for(&turn),
            evidence_obligation: evidence_for(contract),
            output_obligation: output_for(contract),
            expectations: compile_expectations(contract),
            requested_results: requested_results_for(contract),
            blocked_tools,
            active_task_context: settings.active_task_context,
            artifact_goal: if contract.mutation_allowed && !contract.expected_targets.is_empty() {
                ArtifactGoal::Files(contract.expected_targets.clone())
            } else {
                ArtifactGoal::None
            },
            verifier_profile: if contract.mutation_allowed {
                VerifierProfile::ContentReadback
            } else {
                VerifierProfile::None
            },
            iteration_budget: settings.iteration_budget,
            pinned: settings.pinned,
            surface,
            turn,
        }
    }

    pub fn contract(&self) -> &TaskContract {
        &self.turn.contract
    }
    pub fn original_request(&self) -> &str {
        &self.turn.contract.original_request
    }
    pub fn posture(&self) -> crate::planning::posture::Posture {
        self.turn.posture
    }
    pub fn initial_phase(&self) -> Phase {
        self.phase_initial
    }
    pub fn final_phase(&self) -> Phase {
        self.phase_final
    }
    pub fn obligation(&self) -> ActionObligation {
        self.action_obligation
    }
    pub fn evidence_obligation(&self) -> EvidenceObligation {
        self.evidence_obligation
    }
    pub fn output_obligation(&self) -> OutputObligation {
        self.output_obligation
    }
    pub fn expectations(&self) -> &[Expectation] {
        &self.expectations
    }
    pub fn requested_results(&self) -> &[RequestedResult] {
        &self.requested_results
    }
    /// The surface for the initial phase (native tools; the prompt describes the same list).
    pub fn surface(&self) -> &Surface {
        &self.surface
    }
    pub fn blocked_tools(&self) -> &[ToolId] {
        &self.blocked_tools
    }
    pub fn active_task_context(&self) -> Option<&str> {
        self.active_task_context.as_deref()
    }
    pub fn artifact_goal(&self) -> &ArtifactGoal {
        &self.artifact_goal
    }
    pub fn verifier_profile(&self) -> VerifierProfile {
        self.verifier_profile
    }
    pub fn iteration_budget(&self) -> usize {
        self.iteration_budget
    }
    pub fn pinned(&self) -> &[String] {
        &self.pinned
    }
    /// The surface for a later phase: never wider than the initial one.
    pub fn surface_for(&self, phase: Phase) -> Surface {
        let later = surface::select(&self.turn.contract, phase);
        self.surface.narrowed_to(&later)
    }
}

fn evidence_for(contract: &TaskContract) -> EvidenceObligation {
    match contract.task_type {
        TaskType::SmallTalk | TaskType::Unknown | TaskType::CheckpointRestore => {
            EvidenceObligation::None
        }
        TaskType::DirectoryListing => EvidenceObligation::ListDirectoryOnly,
        TaskType::VerifyOnly => EvidenceObligation::VerifyFromTraceOrEvidence,
        TaskType::WorkspaceExplain | TaskType::DiagnoseOnly
            if contract.expected_targets.is_empty() =>
        {
            EvidenceObligation::WorkspaceInspectionRequired
        }
        TaskType::WorkspaceExplain
        | TaskType::DiagnoseOnly
        | TaskType::ReadOnlyQa
        | TaskType::FileEdit
        | TaskType::FileCreate => {
            let reads_targets = !contract.mutation_allowed && !contract.expected_targets.is_empty();
            if reads_targets || !contract.source_evidence_targets.is_empty() {
                EvidenceObligation::ReadTargetRequired
            } else {
                EvidenceObligation::None
            }
        }
    }
}

fn output_for(contract: &TaskContract) -> OutputObligation {
    match contract.task_type {
        TaskType::SmallTalk | TaskType::CheckpointRestore => OutputObligation::DirectAnswer,
        TaskType::DirectoryListing => OutputObligation::DirectoryListing,
        TaskType::FileEdit | TaskType::FileCreate if contract.mutation_allowed => {
            OutputObligation::ChangedFiles
        }
        TaskType::FileEdit
        | TaskType::FileCreate
        | TaskType::ReadOnlyQa
        | TaskType::WorkspaceExplain
        | TaskType::DiagnoseOnly
        | TaskType::VerifyOnly
        | TaskType::Unknown => OutputObligation::Answer,
    }
}

/// The results a contract asks for: each target that must change, each evidence target that
/// must be read, and an answer.
pub fn requested_results_for(contract: &TaskContract) -> Vec<RequestedResult> {
    let mut out = Vec::new();
    if contract.mutation_allowed {
        out.extend(
            contract
                .expected_targets
                .iter()
                .map(|t| RequestedResult::Changed { target: t.clone() }),
        );
    } else {
        out.extend(
            contract
                .expected_targets
                .iter()
                .map(|t| RequestedResult::Read { target: t.clone() }),
        );
    }
    out.extend(
        contract
            .source_evidence_targets
            .iter()
            .map(|t| RequestedResult::Read { target: t.clone() }),
    );
    out.push(RequestedResult::Answer);
    out
}

/// The expectations a contract implies.
pub fn compile_expectations(contract: &TaskContract) -> Vec<Expectation> {
    if !contract.mutation_allowed {
        return Vec::new();
    }
    let mut out: Vec<Expectation> = contract
        .expected_targets
        .iter()
        .map(|t| Expectation::MustChange { target: t.clone() })
        .collect();
    let Some(ask) = &contract.change else {
        return out;
    };
    match (ask, contract.expected_targets.as_slice()) {
        (ChangeAsk::Content { content }, [target]) => out.push(Expectation::ExactContent {
            target: target.clone(),
            content: content.clone(),
        }),
        // A symbol is renamed in every file the request names.
        (ChangeAsk::RenameSymbol { .. }, targets) => {
            out.extend(targets.iter().map(|target| Expectation::Change {
                target: target.clone(),
                ask: ask.clone(),
            }));
        }
        // Every line change of one named file is checked like a value change: an ask the
        // reader produced and the plan dropped would leave the file to the model's word.
        (
            ChangeAsk::Replace { .. }
            | ChangeAsk::SetKey { .. }
            | ChangeAsk::CommentOut { .. }
            | ChangeAsk::Uncomment { .. }
            | ChangeAsk::RemoveLine { .. },
            [target],
        ) => {
            out.push(Expectation::Change {
                target: target.clone(),
                ask: ask.clone(),
            });
        }
        _ => {}
    }
    out
}

/// The exact literal a request asks for, when Talos is sure of it (see `change/literal.rs`).
pub fn exact_literal(request: &str) -> Option<String> {
    crate::request::contract::exact_literal(request)
}

fn obligation_for(turn: &EffectiveTurn) -> ActionObligation {
    let c = &turn.contract;
    match c.task_type {
        TaskType::SmallTalk | TaskType::CheckpointRestore => ActionObligation::DirectAnswerOnly,
        TaskType::DirectoryListing => ActionObligation::ListDirOnly,
        TaskType::WorkspaceExplain | TaskType::DiagnoseOnly => ActionObligation::InspectRequired,
        TaskType::VerifyOnly => ActionObligation::VerifyFromEvidence,
        TaskType::ReadOnlyQa => ActionObligation::None,
        TaskType::Unknown => ActionObligation::Unknown,
        TaskType::FileEdit | TaskType::FileCreate => {
            if c.mutation_allowed && turn.phase == Phase::Apply {
                ActionObligation::MutatingToolRequired
            } else {
                ActionObligation::InspectRequired
            }
        }
    }
}

#[cfg(test)]
mod tests;

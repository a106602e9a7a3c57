//! The turn plan: phases, expectations and the action obligation, built from the effective
//! contract. Its constructor recompiles the expectations from the contract and refuses a plan
//! whose expectations disagree with it.

use crate::contract::{TaskContract, TaskType};
use crate::posture::EffectiveTurn;
use crate::surface::{self, Surface};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Inspect,
    Apply,
    Verify,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Inspect => "INSPECT",
            Phase::Apply => "APPLY",
            Phase::Verify => "VERIFY",
        }
    }

    /// APPLY when change is allowed, VERIFY when only verification is, else INSPECT.
    pub fn default_for(contract: &TaskContract) -> Phase {
        if contract.mutation_allowed {
            Phase::Apply
        } else if contract.verification_required {
            Phase::Verify
        } else {
            Phase::Inspect
        }
    }
}

/// Something the turn's records must show before the turn may be called complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expectation {
    /// This target must be changed by an approved, verified write.
    MustChange { target: String },
    /// "change X from A to B": after the turn, the target contains `to`.
    Replacement {
        target: String,
        from: String,
        to: String,
    },
}

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    ExpectationsDisagree {
        claimed: Vec<Expectation>,
        compiled: Vec<Expectation>,
    },
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::ExpectationsDisagree { claimed, compiled } => write!(
                f,
                "turn plan expectations disagree with the contract: claimed {claimed:?}, contract gives {compiled:?}"
            ),
        }
    }
}

/// The plan of one turn. Fields are private: a plan exists only through [`TurnPlan::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPlan {
    turn: EffectiveTurn,
    expectations: Vec<Expectation>,
    obligation: ActionObligation,
    surface: Surface,
}

impl TurnPlan {
    /// Builds the plan, refusing `expectations` that differ from what the contract compiles to.
    pub fn new(turn: EffectiveTurn, expectations: Vec<Expectation>) -> Result<TurnPlan, PlanError> {
        let compiled = compile_expectations(&turn.contract);
        if expectations != compiled {
            return Err(PlanError::ExpectationsDisagree {
                claimed: expectations,
                compiled,
            });
        }
        let obligation = obligation_for(&turn);
        let surface = surface::select(&turn.contract, turn.phase);
        Ok(TurnPlan {
            turn,
            expectations: compiled,
            obligation,
            surface,
        })
    }

    /// The plan with the expectations the contract compiles to.
    pub fn from_turn(turn: EffectiveTurn) -> TurnPlan {
        let expectations = compile_expectations(&turn.contract);
        let obligation = obligation_for(&turn);
        let surface = surface::select(&turn.contract, turn.phase);
        TurnPlan {
            turn,
            expectations,
            obligation,
            surface,
        }
    }

    pub fn contract(&self) -> &TaskContract {
        &self.turn.contract
    }
    pub fn initial_phase(&self) -> Phase {
        self.turn.phase
    }
    pub fn posture(&self) -> crate::posture::Posture {
        self.turn.posture
    }
    pub fn expectations(&self) -> &[Expectation] {
        &self.expectations
    }
    pub fn obligation(&self) -> ActionObligation {
        self.obligation
    }
    /// The surface for the initial phase.
    pub fn surface(&self) -> &Surface {
        &self.surface
    }
    /// The surface for a later phase: never wider than the initial one.
    pub fn surface_for(&self, phase: Phase) -> Surface {
        let later = surface::select(&self.turn.contract, phase);
        self.surface.narrowed_to(&later)
    }
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
    if let ([target], Some((from, to))) = (
        contract.expected_targets.as_slice(),
        replacement(&contract.original_request),
    ) {
        out.push(Expectation::Replacement {
            target: target.clone(),
            from,
            to,
        });
    }
    out
}

/// "change X from A to B" -> (A, B), for single-token values.
fn replacement(request: &str) -> Option<(String, String)> {
    let lower = request.to_lowercase();
    let from_at = lower.find(" from ")?;
    let rest = &request[from_at + 6..];
    let to_at = rest.to_lowercase().find(" to ")?;
    let from = rest[..to_at].trim();
    let to = rest[to_at + 4..]
        .split_whitespace()
        .next()?
        .trim_end_matches(['.', ',', '!', ';']);
    let single = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    (single(from) && single(to)).then(|| {
        (
            from.trim_matches(['"', '\'', '`']).to_string(),
            to.trim_matches(['"', '\'', '`']).to_string(),
        )
    })
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
mod tests {
    use super::*;
    use crate::contract::resolve;
    use crate::posture::{Posture, apply};
    use pretty_assertions::assert_eq;

    fn turn(request: &str, posture: Posture) -> EffectiveTurn {
        apply(posture, resolve(request))
    }

    #[test]
    fn the_timeout_edit_compiles_to_a_change_and_a_replacement() {
        let plan = TurnPlan::from_turn(turn(
            "In settings.py, change TIMEOUT from 30 to 60.",
            Posture::Agent,
        ));
        assert_eq!(
            plan.expectations(),
            &[
                Expectation::MustChange {
                    target: "settings.py".into()
                },
                Expectation::Replacement {
                    target: "settings.py".into(),
                    from: "30".into(),
                    to: "60".into()
                },
            ]
        );
        assert_eq!(plan.obligation(), ActionObligation::MutatingToolRequired);
    }

    #[test]
    fn the_constructor_refuses_expectations_that_disagree_with_the_contract() {
        let edit = turn(
            "In settings.py, change TIMEOUT from 30 to 60.",
            Posture::Agent,
        );
        let wrong = vec![Expectation::MustChange {
            target: "other.py".into(),
        }];
        assert!(TurnPlan::new(edit.clone(), wrong).is_err());
        assert!(TurnPlan::new(edit.clone(), Vec::new()).is_err());
        let right = compile_expectations(&edit.contract);
        assert!(TurnPlan::new(edit, right).is_ok());
        let ask = turn(
            "In settings.py, change TIMEOUT from 30 to 60.",
            Posture::AskReadOnly,
        );
        let claimed = vec![Expectation::MustChange {
            target: "settings.py".into(),
        }];
        assert!(
            TurnPlan::new(ask, claimed).is_err(),
            "a read-only turn expects no change"
        );
    }
}

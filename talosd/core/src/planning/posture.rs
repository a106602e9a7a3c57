//! Posture: the session's mode caps the contract. A read-only posture rewrites the contract
//! so that no change is allowed, whatever the request said.

use crate::request::contract::{Reading, TaskContract, TaskType};
use crate::request::phase::Phase;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Posture {
    Agent,
    AskReadOnly,
    PlanReadOnly,
}

impl Posture {
    pub fn read_only(self) -> bool {
        match self {
            Posture::Agent => false,
            Posture::AskReadOnly | Posture::PlanReadOnly => true,
        }
    }
}

/// The contract a turn actually runs under, and the phase it starts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveTurn {
    pub contract: TaskContract,
    pub phase: Phase,
    pub posture: Posture,
}

pub fn apply(posture: Posture, contract: TaskContract) -> EffectiveTurn {
    if !posture.read_only() {
        let phase = Phase::default_for(&contract);
        return EffectiveTurn {
            contract,
            phase,
            posture,
        };
    }
    EffectiveTurn {
        contract: read_only(contract),
        phase: Phase::Inspect,
        posture,
    }
}

fn read_only(mut contract: TaskContract) -> TaskContract {
    let was_mutation = contract.mutation_requested;
    contract.mutation_allowed = false;
    if contract.task_type == TaskType::FileCreate {
        contract.expected_targets.clear();
    }
    if was_mutation {
        contract.verification_required = false;
    }
    contract.read_only_posture = true;
    // A read-only mode answers an uncertain request's question itself: no change can happen,
    // so the person is not asked to choose one.
    contract.reading = Reading::Settled;
    contract
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::contract::resolve;

    #[test]
    fn read_only_postures_forbid_change_whatever_the_request() {
        for posture in [Posture::AskReadOnly, Posture::PlanReadOnly] {
            let turn = apply(
                posture,
                resolve("In settings.py, change TIMEOUT from 30 to 60."),
            );
            assert!(!turn.contract.mutation_allowed);
            assert!(
                turn.contract.mutation_requested,
                "the request is still recorded as asking"
            );
            assert_eq!(turn.phase, Phase::Inspect);
            assert_eq!(
                turn.contract.expected_targets,
                vec!["settings.py".to_string()]
            );
            assert!(
                turn.contract
                    .classification_reason()
                    .ends_with("capability-posture-read-only")
            );
        }
    }

    /// Proves a read-only mode settles an uncertain reading (nothing to ask: no change can
    /// happen), and agent keeps it for the person to choose.
    #[test]
    fn read_only_postures_settle_an_uncertain_reading() {
        let uncertain = || TaskContract {
            reading: Reading::Uncertain {
                targets: vec!["config.py".into()],
            },
            ..resolve("What is in config.py?")
        };
        for (posture, reading) in [
            (Posture::AskReadOnly, Reading::Settled),
            (Posture::PlanReadOnly, Reading::Settled),
            (
                Posture::Agent,
                Reading::Uncertain {
                    targets: vec!["config.py".into()],
                },
            ),
        ] {
            assert_eq!(apply(posture, uncertain()).contract.reading, reading);
        }
    }

    #[test]
    fn agent_keeps_the_contract_and_starts_in_apply() {
        let turn = apply(
            Posture::Agent,
            resolve("In settings.py, change TIMEOUT from 30 to 60."),
        );
        assert!(turn.contract.mutation_allowed);
        assert_eq!(turn.phase, Phase::Apply);
    }
}

//! Where each target ended: the per-target view of a turn's mutation records that the
//! classification and the per-file statement read. A target that ended changed is done
//! whatever was refused or failed before it; a target the request did not need is reported
//! but never makes a finished task partial; an expected target with no record is "not
//! attempted".

use super::{MutationResult, TurnFacts};

/// How one target ended this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetEnd {
    /// Changed (its last successful write's read-back `verified` or not).
    Changed { verified: bool },
    /// Attempted and failed after approval (IO, checkpoint, stale bytes, read-back).
    Failed { reason: String },
    /// Refused before approval (policy, a pre-approval check, a bad edit).
    Refused { reason: String },
    /// The person did not approve it.
    Denied,
    /// An expected target no call touched.
    NotAttempted,
}

/// One target's final state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetState {
    pub target: String,
    pub end: TargetEnd,
    /// The request needs this target (it names it, or it names none).
    pub needed: bool,
    /// Attempts that did not succeed, including those before a success.
    pub unsuccessful: usize,
    /// Why a change to it that came after it changed failed or was refused (issue 27): the
    /// target is not where the turn meant it to end, though it did change.
    pub later_failure: Option<String>,
}

impl TargetState {
    pub fn changed(&self) -> bool {
        matches!(self.end, TargetEnd::Changed { .. })
    }

    /// A target that did not end changed and counts against the task: one the request needs,
    /// or any whose write failed after approval (it may be half-done). A refusal or a denial on
    /// a target the request does not need is only reported.
    pub fn unfinished(&self) -> bool {
        (!self.changed() && (self.needed || matches!(self.end, TargetEnd::Failed { .. })))
            || self.later_failure.is_some()
    }
}

/// The targets in the order the turn first touched them, then the expected targets it never
/// touched.
pub fn target_states(facts: &TurnFacts) -> Vec<TargetState> {
    let needed = |target: &str| {
        facts.expected_targets.is_empty()
            || facts
                .expected_targets
                .iter()
                .any(|e| same_target(e, target))
    };
    let mut states: Vec<TargetState> = Vec::new();
    for record in &facts.mutations {
        let index = match states
            .iter()
            .position(|s| same_target(&s.target, &record.target))
        {
            Some(index) => index,
            None => {
                states.push(TargetState {
                    target: record.target.clone(),
                    end: TargetEnd::NotAttempted,
                    needed: needed(&record.target),
                    unsuccessful: 0,
                    later_failure: None,
                });
                states.len() - 1
            }
        };
        let state = &mut states[index];
        match &record.result {
            MutationResult::Succeeded { verified } => {
                state.end = TargetEnd::Changed {
                    verified: *verified,
                };
                state.later_failure = None;
            }
            other => {
                state.unsuccessful += 1;
                if state.changed()
                    && let MutationResult::Failed { reason } | MutationResult::Blocked { reason } =
                        other
                {
                    state.later_failure = Some(reason.clone());
                }
                if !state.changed() {
                    state.end = match other {
                        MutationResult::Denied => TargetEnd::Denied,
                        MutationResult::Blocked { reason } => TargetEnd::Refused {
                            reason: reason.clone(),
                        },
                        MutationResult::Failed { reason } => TargetEnd::Failed {
                            reason: reason.clone(),
                        },
                        MutationResult::Succeeded { .. } => TargetEnd::NotAttempted,
                    };
                }
            }
        }
    }
    if facts.mutation_allowed {
        for target in &facts.unmet_targets {
            if !states.iter().any(|s| same_target(&s.target, target)) {
                states.push(TargetState {
                    target: target.clone(),
                    end: TargetEnd::NotAttempted,
                    needed: true,
                    unsuccessful: 0,
                    later_failure: None,
                });
            }
        }
    }
    states
}

/// Two spellings of one workspace-relative target (`./a.txt` and `a.txt`).
fn same_target(left: &str, right: &str) -> bool {
    left.trim_start_matches("./") == right.trim_start_matches("./")
}

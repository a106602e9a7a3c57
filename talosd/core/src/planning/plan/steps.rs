//! The plan as steps a person can follow: what the turn will read, change and answer, in
//! order. Editors show them (ACP's `plan` update); nothing is decided from them.

use super::{Expectation, RequestedResult, TurnPlan};

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// e.g. `Change settings.py (30 → 60)`.
    pub text: String,
    /// The workspace-relative file the step is about, when it is about one.
    pub target: Option<String>,
    /// What the step is.
    pub kind: StepKind,
}

/// What a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Read,
    Change,
    Verify,
    Answer,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Read => "read",
            StepKind::Change => "change",
            StepKind::Verify => "verify",
            StepKind::Answer => "answer",
        }
    }
}

/// The plan's steps: each target to read, each target to change (with its replacement when
/// the request named one), a verification when the contract asks for one, and the answer.
pub fn steps(plan: &TurnPlan) -> Vec<PlanStep> {
    let mut out = Vec::new();
    for result in plan.requested_results() {
        match result {
            RequestedResult::Read { target } => {
                out.push(step(format!("Read {target}"), Some(target), StepKind::Read))
            }
            RequestedResult::Changed { target } => {
                use crate::request::change::ChangeAsk;
                let text = match change_of(plan.expectations(), target) {
                    Some(ChangeAsk::Replace { from, to, .. }) => {
                        format!("Change {target} ({from} → {to})")
                    }
                    Some(ask) => format!("Change {target} ({})", ask.describe()),
                    None => format!("Change {target}"),
                };
                out.push(step(text, Some(target), StepKind::Change));
            }
            RequestedResult::Answer => {}
        }
    }
    if plan.contract().verification_required {
        out.push(step("Verify the result".into(), None, StepKind::Verify));
    }
    out.push(step("Answer".into(), None, StepKind::Answer));
    out
}

fn step(text: String, target: Option<&String>, kind: StepKind) -> PlanStep {
    PlanStep {
        text,
        target: target.cloned(),
        kind,
    }
}

fn change_of<'a>(
    expectations: &'a [Expectation],
    target: &str,
) -> Option<&'a crate::request::change::ChangeAsk> {
    expectations.iter().find_map(|e| match e {
        Expectation::Change { target: t, ask } if t == target => Some(ask),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::posture::{Posture, apply};
    use crate::request::contract::resolve;

    fn texts(request: &str, posture: Posture) -> Vec<(String, Option<String>, StepKind)> {
        steps(&TurnPlan::from_turn(apply(posture, resolve(request))))
            .into_iter()
            .map(|s| (s.text, s.target, s.kind))
            .collect()
    }

    #[test]
    fn each_request_shape_has_its_steps() {
        let some = |t: &str| Some(t.to_string());
        let rows: Vec<(&str, Posture, Vec<(String, Option<String>, StepKind)>)> = vec![
            (
                "In settings.py, change TIMEOUT from 30 to 60.",
                Posture::Agent,
                vec![
                    (
                        "Change settings.py (30 → 60)".into(),
                        some("settings.py"),
                        StepKind::Change,
                    ),
                    ("Answer".into(), None, StepKind::Answer),
                ],
            ),
            (
                "Explain settings.py",
                Posture::Agent,
                vec![
                    (
                        "Read settings.py".into(),
                        some("settings.py"),
                        StepKind::Read,
                    ),
                    ("Answer".into(), None, StepKind::Answer),
                ],
            ),
            (
                "What is the capital of France?",
                Posture::Agent,
                vec![("Answer".into(), None, StepKind::Answer)],
            ),
        ];
        for (request, posture, expected) in rows {
            let got = texts(request, posture);
            assert_eq!(got.last().map(|s| s.2), Some(StepKind::Answer), "{request}");
            let without_verify: Vec<_> = got
                .into_iter()
                .filter(|s| s.2 != StepKind::Verify)
                .collect();
            assert_eq!(without_verify, expected, "{request}");
        }
    }

    #[test]
    fn a_change_in_ask_mode_is_planned_as_a_read() {
        let got = texts(
            "In settings.py, change TIMEOUT from 30 to 60.",
            Posture::AskReadOnly,
        );
        assert!(
            got.iter().all(|s| s.2 != StepKind::Change),
            "ask mode never plans a change: {got:?}"
        );
    }
}

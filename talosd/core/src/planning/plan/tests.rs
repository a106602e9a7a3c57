//! Rows for the turn plan: components per request and posture, and the constructor refusing
//! claims that disagree with the contract.

use super::*;
use crate::planning::posture::{Posture, apply};
use crate::request::contract::resolve;
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
            Expectation::Change {
                target: "settings.py".into(),
                ask: crate::request::change::ChangeAsk::Replace {
                    from: "30".into(),
                    to: "60".into(),
                    key: Some("TIMEOUT".into()),
                },
            },
        ]
    );
    assert_eq!(plan.obligation(), ActionObligation::MutatingToolRequired);
}

#[test]
fn the_constructor_refuses_claims_that_disagree_with_the_contract() {
    let edit = turn(
        "In settings.py, change TIMEOUT from 30 to 60.",
        Posture::Agent,
    );
    let right = TurnPlan::claims_for(&edit);
    assert!(TurnPlan::new(edit.clone(), right.clone(), PlanSettings::default()).is_ok());
    let wrong_target = PlanClaims {
        expectations: vec![Expectation::MustChange {
            target: "other.py".into(),
        }],
        ..right.clone()
    };
    assert!(matches!(
        TurnPlan::new(edit.clone(), wrong_target, PlanSettings::default()),
        Err(PlanError::ExpectationsDisagree { .. })
    ));
    let wrong_obligation = PlanClaims {
        action_obligation: ActionObligation::None,
        ..right.clone()
    };
    assert!(matches!(
        TurnPlan::new(edit.clone(), wrong_obligation, PlanSettings::default()),
        Err(PlanError::ObligationDisagrees { .. })
    ));
    let wrong_results = PlanClaims {
        requested_results: vec![RequestedResult::Answer],
        ..right.clone()
    };
    assert!(matches!(
        TurnPlan::new(edit.clone(), wrong_results, PlanSettings::default()),
        Err(PlanError::RequestedResultsDisagree { .. })
    ));
    let no_budget = PlanSettings {
        iteration_budget: 0,
        ..PlanSettings::default()
    };
    assert_eq!(
        TurnPlan::new(edit, right.clone(), no_budget),
        Err(PlanError::NoIterationBudget)
    );
    let ask = turn(
        "In settings.py, change TIMEOUT from 30 to 60.",
        Posture::AskReadOnly,
    );
    assert!(
        TurnPlan::new(ask, right, PlanSettings::default()).is_err(),
        "a read-only turn expects no change"
    );
}

#[test]
fn exact_literals_become_an_exact_content_expectation() {
    for (request, literal) in [
        ("Overwrite index.html with exactly AFTER", Some("AFTER")),
        (
            "Overwrite notes.txt with exactly \"hello world\"",
            Some("hello world"),
        ),
        ("Overwrite notes.txt with exactly: `a\\nb`", Some("a\nb")),
        ("In settings.py, change TIMEOUT from 30 to 60.", None),
    ] {
        assert_eq!(exact_literal(request).as_deref(), literal, "{request}");
    }
    let plan = TurnPlan::from_turn(turn(
        "Overwrite index.html with exactly AFTER",
        Posture::Agent,
    ));
    assert!(
        plan.expectations().contains(&Expectation::ExactContent {
            target: "index.html".into(),
            content: "AFTER".into()
        }),
        "{:?}",
        plan.expectations()
    );
}

#[test]
fn plan_components_rows() {
    let rows: &[(&str, Posture, &str, &str, &str)] = &[
        (
            "In settings.py, change TIMEOUT from 30 to 60.",
            Posture::Agent,
            "APPLY",
            "VERIFY",
            "MUTATING_TOOL_REQUIRED",
        ),
        (
            "In settings.py, change TIMEOUT from 30 to 60.",
            Posture::PlanReadOnly,
            "INSPECT",
            "INSPECT",
            "INSPECT_REQUIRED",
        ),
        (
            "hello",
            Posture::Agent,
            "INSPECT",
            "INSPECT",
            "DIRECT_ANSWER_ONLY",
        ),
        (
            "list files",
            Posture::Agent,
            "INSPECT",
            "INSPECT",
            "LIST_DIR_ONLY",
        ),
        (
            "did you make the changes?",
            Posture::Agent,
            "VERIFY",
            "VERIFY",
            "VERIFY_FROM_EVIDENCE",
        ),
    ];
    for (request, posture, initial, last, obligation) in rows {
        let plan = TurnPlan::from_turn(turn(request, *posture));
        assert_eq!(
            (
                plan.initial_phase().as_str(),
                plan.final_phase().as_str(),
                plan.obligation().as_str()
            ),
            (*initial, *last, *obligation),
            "{request}"
        );
        assert_eq!(
            plan.blocked_tools().len() + plan.surface().tools().len(),
            ToolId::ALL.len()
        );
    }
    let read = TurnPlan::from_turn(turn("What does settings.py configure?", Posture::Agent));
    assert_eq!(
        read.evidence_obligation(),
        EvidenceObligation::ReadTargetRequired
    );
    assert_eq!(
        read.requested_results(),
        &[
            RequestedResult::Read {
                target: "settings.py".into()
            },
            RequestedResult::Answer
        ]
    );
    assert_eq!(read.output_obligation(), OutputObligation::Answer);
}

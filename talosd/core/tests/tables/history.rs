//! The follow-up table: every row of `history_rows.tsv` is a prior turn (its request, the
//! posture it ran under and how it ended) and a new request, with the contract
//! `resolve_in_context` must give. All mismatching rows are reported in one failure.

use talos_core::contract::{TaskContract, resolve};
use talos_core::history::{PriorOutcome, PriorTurn, resolve_in_context};
use talos_core::intent::TargetSource;
use talos_core::posture::{Posture, apply};

const ROWS: &str = include_str!("history_rows.tsv");

fn outcome(text: &str) -> PriorOutcome {
    match text {
        "VERIFIED" => PriorOutcome::Verified,
        "UNVERIFIED" => PriorOutcome::Unverified,
        "INCOMPLETE" => PriorOutcome::Incomplete,
        "DENIED" => PriorOutcome::Denied,
        "BLOCKED" => PriorOutcome::Blocked,
        "FAILED" => PriorOutcome::Failed,
        "READ_ONLY" => PriorOutcome::ReadOnly,
        other => panic!("unknown outcome {other:?}"),
    }
}

fn posture(text: &str) -> Posture {
    match text {
        "agent" => Posture::Agent,
        "ask" => Posture::AskReadOnly,
        "plan" => Posture::PlanReadOnly,
        other => panic!("unknown posture {other:?}"),
    }
}

fn prior(request: &str, posture_name: &str, outcome_name: &str) -> PriorTurn {
    let contract = apply(posture(posture_name), resolve(request)).contract;
    let outcome = outcome(outcome_name);
    assert_eq!(outcome.as_str(), outcome_name);
    PriorTurn {
        contract,
        outcome,
        changed: Vec::new(),
    }
}

fn yn(b: bool) -> &'static str {
    if b { "y" } else { "n" }
}

fn joined(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}

fn roleful(c: &TaskContract) -> Vec<String> {
    c.roleful_targets
        .iter()
        .map(|t| match t.source {
            TargetSource::UserRequest => format!("{}:{}", t.path, t.role.as_str()),
            other => format!("{}:{}@{}", t.path, t.role.as_str(), other.as_str()),
        })
        .collect()
}

/// Every follow-up row resolves to its contract.
#[test]
fn history_table() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (index, line) in ROWS.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        count += 1;
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            f.len(),
            11,
            "line {}: 11 fields expected: {line:?}",
            index + 1
        );
        let history = if f[0] == "-" {
            Vec::new()
        } else {
            vec![prior(f[0], f[1], f[2])]
        };
        let c = resolve_in_context(&history, f[3]);
        let actual = [
            c.task_type.as_str().to_string(),
            yn(c.mutation_requested).into(),
            yn(c.mutation_allowed).into(),
            joined(&c.expected_targets),
            joined(&c.forbidden_targets),
            joined(&roleful(&c)),
            c.classification_reason(),
        ];
        let expected: Vec<String> = f[4..].iter().map(|s| s.to_string()).collect();
        if actual.as_slice() != expected.as_slice() {
            failures.push(format!(
                "line {} {:?} after {:?} ({}):\n    expected {}\n    actual   {}",
                index + 1,
                f[3],
                f[0],
                f[2],
                expected.join("\t"),
                actual.join("\t")
            ));
        }
    }
    assert!(count >= 25, "only {count} rows");
    assert!(
        failures.is_empty(),
        "{} rows mismatch:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Only the latest turn is followed up, and the inherited request keeps the prior wording.
#[test]
fn the_latest_turn_is_inherited_with_its_wording() {
    let history = vec![
        prior("Fix app.js", "agent", "INCOMPLETE"),
        prior(
            "In settings.py, change TIMEOUT from 30 to 60.",
            "ask",
            "READ_ONLY",
        ),
    ];
    let c = resolve_in_context(&history, "go ahead");
    assert_eq!(c.expected_targets, vec!["settings.py".to_string()]);
    assert_eq!(
        c.original_request,
        "In settings.py, change TIMEOUT from 30 to 60.\n\nConfirmation follow-up: go ahead"
    );
    assert!(c.mutation_allowed && c.verification_required);
}

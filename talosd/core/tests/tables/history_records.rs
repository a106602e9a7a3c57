//! The records table: every row of `history_records_rows.tsv` is a session's remembered turns
//! (request, how each ended, the files each changed) and a follow-up that must be resolved
//! from those records: "change it back" and "undo that" to the recorded replacement the other
//! way round (or a checkpoint restore, or nothing to undo), "what did you change in the last
//! two turns" to the turns it names. All mismatching rows are reported in one failure.

use talos_core::change::ChangeAsk;
use talos_core::contract::TaskContract;
use talos_core::history::{
    ChangeScope, PriorOutcome, PriorTurn, changes_scope, resolve_in_context,
};
use talos_core::intent::TargetSource;
use talos_core::plan::{Expectation, compile_expectations};

const ROWS: &str = include_str!("history_records_rows.tsv");

/// "request => OUTCOME [a.txt,b.txt]" turns separated by " || ", each resolved in the context
/// of the ones before it as the live session resolves them.
fn history(field: &str, line: usize) -> Vec<PriorTurn> {
    let mut history: Vec<PriorTurn> = Vec::new();
    if field == "-" {
        return history;
    }
    for turn in field.split(" || ") {
        let (request, rest) = turn
            .split_once(" => ")
            .unwrap_or_else(|| panic!("line {line}: no ' => ' in {turn:?}"));
        let (outcome, files) = rest
            .split_once(" [")
            .unwrap_or_else(|| panic!("line {line}: no ' [' in {rest:?}"));
        let outcome = PriorOutcome::parse(outcome)
            .unwrap_or_else(|| panic!("line {line}: unknown outcome {outcome:?}"));
        let changed = files
            .trim_end_matches(']')
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        let contract = resolve_in_context(&history, request);
        history.push(PriorTurn {
            contract,
            outcome,
            changed,
        });
    }
    history
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

/// The replacement the plan pins, as `target:from->to`.
fn pin(c: &TaskContract) -> String {
    let pins: Vec<String> = compile_expectations(c)
        .into_iter()
        .filter_map(|e| match e {
            Expectation::Change {
                target,
                ask: ChangeAsk::Replace { from, to, .. },
            } => Some(format!("{target}:{from}->{to}")),
            Expectation::Change { .. }
            | Expectation::MustChange { .. }
            | Expectation::ExactContent { .. } => None,
        })
        .collect();
    joined(&pins)
}

/// The turns a changes question names, for a status question.
fn scope(c: &TaskContract) -> String {
    if c.reason.as_str() != "prior-change-status-question" {
        return "-".into();
    }
    match changes_scope(&c.original_request) {
        ChangeScope::LastTurns(n) => format!("last:{n}"),
        ChangeScope::Session => "session".into(),
    }
}

/// Every follow-up row resolves from the records to its contract, pin and scope.
#[test]
fn history_records_table() {
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
            10,
            "line {}: 10 fields expected: {line:?}",
            index + 1
        );
        let c = resolve_in_context(&history(f[0], index + 1), f[1]);
        let actual = [
            c.task_type.as_str().to_string(),
            yn(c.mutation_requested).into(),
            joined(&c.expected_targets),
            joined(&c.forbidden_targets),
            joined(&roleful(&c)),
            c.classification_reason(),
            pin(&c),
            scope(&c),
        ];
        let expected: Vec<String> = f[2..].iter().map(|s| s.to_string()).collect();
        if actual.as_slice() != expected.as_slice() {
            failures.push(format!(
                "line {} {:?} after {:?}:\n    expected {}\n    actual   {}",
                index + 1,
                f[1],
                f[0],
                expected.join("\t"),
                actual.join("\t")
            ));
        }
    }
    assert!(count >= 40, "only {count} rows");
    assert!(
        failures.is_empty(),
        "{} rows mismatch:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A revert never takes its target from the words: whatever the punctuation around "change it
/// back", the target is the recorded file or there is none.
#[test]
fn a_revert_never_reads_a_target_from_punctuation() {
    let history = history(
        "In settings.py, change TIMEOUT from 30 to 60. => VERIFIED [settings.py]",
        0,
    );
    for request in [
        "Now, change it back.",
        ", change it back ,",
        "change it back...",
        "change it back!?",
        "\"change it back\"",
        "`change it back`",
        "Now change it back , please .",
    ] {
        let c = resolve_in_context(&history, request);
        assert_eq!(
            c.expected_targets,
            vec!["settings.py".to_string()],
            "{request:?}"
        );
        assert_eq!(pin(&c), "settings.py:60->30", "{request:?}");
    }
    for request in [", change it back ,", "change it back..."] {
        let c = resolve_in_context(&[], request);
        assert!(c.expected_targets.is_empty(), "{request:?}: {c:?}");
        assert_eq!(c.reason.as_str(), "revert-without-recorded-change");
    }
}

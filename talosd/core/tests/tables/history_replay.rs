//! Persisted sessions rebuild their history by replaying requests (`history::replay`): each row
//! is a session's remembered requests with their outcomes, and the replayed history must equal
//! the one the live session built turn by turn with `resolve_in_context`.

use talos_core::history::{PriorOutcome, PriorTurn, replay, resolve_in_context};
use talos_core::turn::route;

/// What a live session remembers after these turns (the daemon's order in `turn::run`).
fn live(turns: &[(&str, PriorOutcome)]) -> Vec<PriorTurn> {
    let mut history = Vec::new();
    for (request, outcome) in turns {
        let resolved = resolve_in_context(&history, request);
        if route::remembered(&resolved) {
            history.push(PriorTurn {
                contract: resolved,
                outcome: *outcome,
            });
        }
    }
    history
}

/// One row: the replay of the remembered requests equals the live history.
fn check(turns: &[(&str, PriorOutcome)], expected_len: usize) {
    let history = live(turns);
    assert_eq!(history.len(), expected_len, "{turns:?}");
    let remembered: Vec<(String, PriorOutcome)> = turns
        .iter()
        .filter(|(request, _)| {
            // A status question is answered from the records and not remembered.
            route::remembered(&talos_core::contract::resolve(request))
        })
        .map(|(request, outcome)| (request.to_string(), *outcome))
        .collect();
    assert_eq!(replay(&remembered), history, "{turns:?}");
}

#[test]
fn replayed_history_equals_the_live_one() {
    use PriorOutcome::{Denied, Incomplete, ReadOnly, Unverified, Verified};
    check(&[], 0);
    check(&[("create index.html with a heading", Verified)], 1);
    check(
        &[
            ("change the title in index.html to Hello", Denied),
            ("yes", Verified),
        ],
        2,
    );
    check(
        &[
            ("fix the bug in app.js", Unverified),
            ("still broken, fix it", Incomplete),
            ("did you make the change?", ReadOnly),
            ("fix it", Verified),
        ],
        3,
    );
    check(
        &[
            ("what does this project do?", ReadOnly),
            ("this folder", ReadOnly),
            ("build a landing page in index.html", Incomplete),
            ("but there is no css", Verified),
        ],
        4,
    );
}

#[test]
fn outcomes_parse_back_from_their_names_and_nothing_else_parses() {
    for outcome in PriorOutcome::ALL {
        assert_eq!(PriorOutcome::parse(outcome.as_str()), Some(outcome));
    }
    for text in ["", "verified", "CANCELLED", "VERIFIED ", "READ-ONLY"] {
        assert_eq!(PriorOutcome::parse(text), None, "{text:?}");
    }
}

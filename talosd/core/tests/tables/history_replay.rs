//! Persisted sessions rebuild their history by replaying requests (`history::replay`): each row
//! is a session's remembered requests with their outcomes, and the replayed history must equal
//! the one the live session built turn by turn with `resolve_in_context`.

use talos_core::history::{PriorOutcome, PriorTurn, Remembered, replay, resolve_in_context};
use talos_core::turn::route;

/// A turn as a row gives it: the request, how it ended, the files it changed.
type Row<'a> = (&'a str, PriorOutcome, &'a [&'a str]);

fn changed(files: &[&str]) -> Vec<String> {
    files.iter().map(|f| f.to_string()).collect()
}

/// What a live session remembers after these turns (the daemon's order in `turn::run`).
fn live(turns: &[Row<'_>]) -> Vec<PriorTurn> {
    let mut history = Vec::new();
    for (request, outcome, files) in turns {
        let resolved = resolve_in_context(&history, request);
        if route::remembered(&resolved) {
            history.push(PriorTurn {
                contract: resolved,
                outcome: *outcome,
                changed: changed(files),
            });
        }
    }
    history
}

/// One row: the replay of the remembered requests equals the live history.
fn check(turns: &[Row<'_>], expected_len: usize) {
    let history = live(turns);
    assert_eq!(history.len(), expected_len, "{turns:?}");
    let remembered: Vec<Remembered> = turns
        .iter()
        .filter(|(request, _, _)| {
            // A status question is answered from the records and not remembered.
            route::remembered(&talos_core::contract::resolve(request))
        })
        .map(|(request, outcome, files)| Remembered {
            request: request.to_string(),
            outcome: *outcome,
            changed: changed(files),
        })
        .collect();
    assert_eq!(replay(&remembered), history, "{turns:?}");
}

#[test]
fn replayed_history_equals_the_live_one() {
    use PriorOutcome::{Denied, Incomplete, ReadOnly, Unverified, Verified};
    check(&[], 0);
    check(
        &[(
            "create index.html with a heading",
            Verified,
            &["index.html"],
        )],
        1,
    );
    check(
        &[
            ("change the title in index.html to Hello", Denied, &[]),
            ("yes", Verified, &["index.html"]),
        ],
        2,
    );
    check(
        &[
            ("fix the bug in app.js", Unverified, &["app.js"]),
            ("still broken, fix it", Incomplete, &[]),
            ("did you make the change?", ReadOnly, &[]),
            ("fix it", Verified, &["app.js"]),
        ],
        3,
    );
    check(
        &[
            ("what does this project do?", ReadOnly, &[]),
            ("this folder", ReadOnly, &[]),
            (
                "build a landing page in index.html",
                Incomplete,
                &["index.html"],
            ),
            ("but there is no css", Verified, &["style.css"]),
        ],
        4,
    );
    // A revert is resolved from the changes recorded before it, live and replayed alike.
    check(
        &[
            (
                "In settings.py, change TIMEOUT from 30 to 60.",
                Verified,
                &["settings.py"],
            ),
            ("what did you change so far?", ReadOnly, &[]),
            ("Now change it back.", Denied, &[]),
            ("change it back", Verified, &["settings.py"]),
            ("undo that", Verified, &["settings.py"]),
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

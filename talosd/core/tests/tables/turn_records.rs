//! Questions about the session's changes and reverts with nothing to undo are answered from
//! the records, before any model call (`turn/route/records.rs`): the route each takes, the
//! answer the records give, and that the turn ends with that answer unchanged and nothing
//! changed.

use crate::turn_support::{plan_for, settings};
use pretty_assertions::assert_eq;
use talos_core::contract::resolve;
use talos_core::history::{ChangeScope, PriorOutcome, RecordedChange, resolve_in_context};
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::Fine;
use talos_core::turn::Turn;
use talos_core::turn::conversation::EarlierTurn;
use talos_core::turn::machine::{TurnEffect, TurnInput};
use talos_core::turn::route::{self, Route, changes_from_records};

fn earlier(request: &str, outcome: PriorOutcome, changed: &[&str]) -> EarlierTurn {
    EarlierTurn {
        request: request.into(),
        answer: "Done.".into(),
        changed: changed.iter().map(|c| c.to_string()).collect(),
        outcome,
        replaced: None,
    }
}

/// Three remembered turns: a replacement in settings.py, a question, a new file.
fn session() -> Vec<EarlierTurn> {
    let mut timeout = earlier(
        "In settings.py, change TIMEOUT from 30 to 60.",
        PriorOutcome::Verified,
        &["settings.py"],
    );
    timeout.replaced = Some(RecordedChange {
        target: "settings.py".into(),
        from: "30".into(),
        to: "60".into(),
    });
    vec![
        timeout,
        earlier(
            "What does settings.py configure?",
            PriorOutcome::ReadOnly,
            &[],
        ),
        earlier(
            "Create notes.md with a todo list",
            PriorOutcome::Verified,
            &["notes.md"],
        ),
    ]
}

/// Proves each question names its turns and the answer lists every one of them from the records.
#[test]
fn the_answer_lists_every_turn_the_question_names() {
    let rows: Vec<(ChangeScope, &str)> = vec![
        (
            ChangeScope::LastTurns(2),
            "From Talos's records of the last 2 turns, oldest first:\n- \"What does settings.py configure?\" (answered without changes): no file changed.\n- \"Create notes.md with a todo list\" (completed and verified): changed notes.md.\nFiles changed: notes.md.",
        ),
        (
            ChangeScope::LastTurns(3),
            "From Talos's records of the last 3 turns, oldest first:\n- \"In settings.py, change TIMEOUT from 30 to 60.\" (completed and verified): changed settings.py (30 -> 60).\n- \"What does settings.py configure?\" (answered without changes): no file changed.\n- \"Create notes.md with a todo list\" (completed and verified): changed notes.md.\nFiles changed: settings.py, notes.md.",
        ),
        (
            ChangeScope::LastTurns(5),
            "From Talos's records of the last 5 turns (only 3 turns remembered), oldest first:\n- \"In settings.py, change TIMEOUT from 30 to 60.\" (completed and verified): changed settings.py (30 -> 60).\n- \"What does settings.py configure?\" (answered without changes): no file changed.\n- \"Create notes.md with a todo list\" (completed and verified): changed notes.md.\nFiles changed: settings.py, notes.md.",
        ),
        (
            ChangeScope::Session,
            "From Talos's records of this session's 3 remembered turns, oldest first:\n- \"In settings.py, change TIMEOUT from 30 to 60.\" (completed and verified): changed settings.py (30 -> 60).\n- \"What does settings.py configure?\" (answered without changes): no file changed.\n- \"Create notes.md with a todo list\" (completed and verified): changed notes.md.\nFiles changed: settings.py, notes.md.",
        ),
    ];
    for (scope, expected) in rows {
        assert_eq!(
            changes_from_records(&session(), scope),
            expected,
            "{scope:?}"
        );
    }
    assert_eq!(
        changes_from_records(&session()[1..2], ChangeScope::LastTurns(1)),
        "From Talos's records of the last turn, oldest first:\n- \"What does settings.py configure?\" (answered without changes): no file changed.\nNo file was changed in them."
    );
    assert_eq!(
        changes_from_records(&[], ChangeScope::Session),
        "Talos's records hold no earlier turn of this session, so no file was changed in it."
    );
}

/// Proves the route: a question naming several turns or the session is answered from the
/// records with or without a previous outcome, the last turn alone keeps the status answer,
/// and a revert with nothing recorded gets its fixed answer.
#[test]
fn questions_about_changes_are_routed_to_the_records() {
    let rows: Vec<(&str, bool, Route)> = vec![
        (
            "What did you change in the last two turns?",
            true,
            Route::ChangesFromRecords(ChangeScope::LastTurns(2)),
        ),
        (
            "which files did you touch so far",
            false,
            Route::ChangesFromRecords(ChangeScope::Session),
        ),
        ("Which files did you touch?", true, Route::StatusFromRecords),
        ("show me what you changed", true, Route::StatusFromRecords),
        (
            "Show me what you changed today.",
            true,
            Route::ChangesFromRecords(ChangeScope::Session),
        ),
    ];
    for (request, prior, expected) in rows {
        let plan = plan_for(resolve(request), SessionMode::Agent);
        assert_eq!(
            route::route(SessionMode::Agent, &plan, request, prior),
            expected,
            "{request}"
        );
    }
    let nothing = plan_for(
        resolve_in_context(&[], "Now change it back."),
        SessionMode::Agent,
    );
    assert_eq!(
        route::route(SessionMode::Agent, &nothing, "Now change it back.", false),
        Route::Fixed(route::NOTHING_TO_REVERT_ANSWER.into())
    );
}

/// Proves the turn ends, before any model call, with the records' answer as it is, and
/// read-only: the guards find no claim the records do not show.
#[test]
fn the_turn_ends_with_the_records_answer_unchanged() {
    let rows = [
        (
            "What did you change in the last two turns?",
            changes_from_records(&session(), ChangeScope::LastTurns(2)),
        ),
        (
            "What have you changed so far?",
            changes_from_records(&session(), ChangeScope::Session),
        ),
    ];
    for (request, expected) in rows {
        let mut turn = Turn::new(
            plan_for(resolve(request), SessionMode::Agent),
            settings(SessionMode::Agent),
            Grants::default(),
        )
        .with_context(None, session());
        let TurnEffect::Finish(done) = turn.step(TurnInput::Start) else {
            panic!("{request}: the turn asked for an effect");
        };
        assert_eq!(done.answer, expected, "{request}");
        assert_eq!(done.fine, Fine::ReadOnlyAnswered, "{request}");
    }
    let mut turn = Turn::new(
        plan_for(
            resolve_in_context(&[], "change it back"),
            SessionMode::Agent,
        ),
        settings(SessionMode::Agent),
        Grants::default(),
    );
    let TurnEffect::Finish(done) = turn.step(TurnInput::Start) else {
        panic!("a revert with nothing recorded asked for an effect");
    };
    assert_eq!(done.answer, route::NOTHING_TO_REVERT_ANSWER);
}

//! The turn's routes, one row each (`turn/route.rs`): which way a request goes before any
//! model call (the viewer, the records, a fixed answer, a capability note, the model), the
//! texts those routes answer with, the context a follow-up carries, and whether a turn is
//! the one a later "try again" continues.

use crate::turn_support::EDIT;
use pretty_assertions::assert_eq;
use talos_core::contract::{Reason, TaskContract, resolve};
use talos_core::modes::{SessionMode, Structural};
use talos_core::outcome::Fine;
use talos_core::plan::TurnPlan;
use talos_core::posture::apply;
use talos_core::turn::record::FileResult;
use talos_core::turn::route::{
    self, PriorRecord, Route, active_task_context, document_note, remembered, status_from_records,
};

const CHAT: &str = "hi";

/// Proves the route of a turn for every kind of request, before any model call.
#[test]
fn every_route_is_decided_before_the_model() {
    let rows: Vec<(&str, SessionMode, bool, Route)> = vec![
        (
            "ls",
            SessionMode::Auto,
            false,
            Route::Viewer(Structural::List { path: ".".into() }),
        ),
        (
            "show me README.md",
            SessionMode::Auto,
            false,
            Route::Viewer(Structural::Show {
                path: "README.md".into(),
            }),
        ),
        ("ls", SessionMode::Agent, false, Route::Model),
        (
            "did you make the changes?",
            SessionMode::Agent,
            true,
            Route::StatusFromRecords,
        ),
        (
            "did you make the changes?",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
        (
            "Run pytest",
            SessionMode::Agent,
            false,
            Route::Fixed(route::UNSUPPORTED_COMMAND_ANSWER.into()),
        ),
        (
            "undo your last change",
            SessionMode::Agent,
            false,
            Route::Fixed(route::RESTORE_ANSWER.into()),
        ),
        (
            "Summarise report.doc and notes.ppt",
            SessionMode::Agent,
            false,
            Route::UnreadableDocuments(vec!["report.doc".into(), "notes.ppt".into()]),
        ),
        // pdf, docx and xlsx text is extracted (issue 16): the model reads them.
        (
            "Summarise report.pdf and notes.docx",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
        (
            "Summarize report.pdf. If PDF is unsupported, read report.md instead.",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
        (
            "Create summary.md from report.pdf",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
        (EDIT, SessionMode::Agent, false, Route::Model),
        (CHAT, SessionMode::Agent, false, Route::Model),
        (
            "Who are you?",
            SessionMode::Agent,
            false,
            Route::Fixed(route::ABOUT_TALOS_ANSWER.into()),
        ),
        (
            "what can you do",
            SessionMode::Ask,
            false,
            Route::Fixed(route::ABOUT_TALOS_ANSWER.into()),
        ),
        (
            "What is Talos?",
            SessionMode::Agent,
            true,
            Route::Fixed(route::ABOUT_TALOS_ANSWER.into()),
        ),
        (
            "What can you do with index.html?",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
        (
            "What is talos.run_command?",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
    ];
    for (request, mode, prior, expected) in rows {
        let plan = TurnPlan::from_turn(apply(mode.posture(), resolve(request)));
        assert_eq!(
            route::route(mode, &plan, request, prior),
            expected,
            "{request} ({mode:?}, prior {prior})"
        );
    }
}

/// Proves the fixed texts a route answers with: the capability note and the status from the
/// records, listing what changed and what did not.
#[test]
fn route_answers_come_from_the_records() {
    let note = document_note(&["report.pdf".into(), "notes.docx".into()]);
    assert!(
        note.starts_with("[Capability note: Talos's file tools read text files; they cannot extract the text of report.pdf, notes.docx (PDF,"),
        "{note}"
    );
    let file = |path: &str, changed: bool, detail: &str| FileResult {
        path: path.into(),
        changed,
        detail: detail.into(),
    };
    let rows = [
        (
            Fine::ReadOnlyAnswered,
            vec![],
            "From Talos's records of the previous turn (trace trc-1): READ_ONLY_ANSWERED.\nNo file was changed.",
        ),
        (
            Fine::Partial,
            vec![
                file("a.py", true, "Edited (10 bytes, +1 -1), verified"),
                file("b.py", false, "approval denied (by the user)"),
            ],
            "From Talos's records of the previous turn (trace trc-1): PARTIAL.\nChanged:\n- a.py: Edited (10 bytes, +1 -1), verified\nNot changed:\n- b.py: approval denied (by the user)\nLeft to do: b.py. Say \"do it\" to try the change again.",
        ),
        (
            Fine::BlockedByApproval,
            vec![file("b.py", false, "approval denied (by the user)")],
            "From Talos's records of the previous turn (trace trc-1): BLOCKED_BY_APPROVAL.\nNo file was changed.\nNot changed:\n- b.py: approval denied (by the user)\nLeft to do: b.py. Say \"do it\" to try the change again.",
        ),
    ];
    for (classification, files, expected) in rows {
        let last = PriorRecord {
            trace_id: "trc-1".into(),
            classification,
            files,
        };
        assert_eq!(status_from_records(&last), expected);
    }
}

fn contract(request: &str, reason: Reason, read_only_posture: bool) -> TaskContract {
    TaskContract {
        reason,
        read_only_posture,
        ..resolve(request)
    }
}

/// Proves a follow-up carries the contract it continues and the last findings, a fresh request
/// carries nothing, and a status question is not remembered as the turn to continue.
#[test]
fn a_follow_up_carries_its_context_and_a_status_question_is_not_remembered() {
    // (reason, read-only posture, findings, context, remembered)
    let rows: Vec<(Reason, bool, Vec<String>, Option<&str>, bool)> = vec![
        (Reason::MutationMarker, false, vec!["x".into()], None, true),
        (
            Reason::ConfirmationInherited,
            false,
            vec![],
            Some("continues the previous turn's contract (confirmation-follow-up-inherited)"),
            true,
        ),
        (
            Reason::RepairInherited,
            false,
            vec![
                "index.html: missing id".into(),
                "app.js: bad selector".into(),
            ],
            Some(
                "continues the previous turn's contract (repair-follow-up-inherited); the last verification found: index.html: missing id; app.js: bad selector",
            ),
            true,
        ),
        (
            Reason::CorrectionInherited,
            true,
            vec![],
            Some(
                "continues the previous turn's contract (correction-follow-up-inherited; capability-posture-read-only)",
            ),
            true,
        ),
        (
            Reason::DeicticInherited,
            false,
            vec![],
            Some("continues the previous turn's contract (deictic-follow-up-inherited)"),
            true,
        ),
        (
            Reason::PriorChangeStatusQuestion,
            false,
            vec![],
            None,
            false,
        ),
    ];
    for (reason, read_only, findings, context, remember) in rows {
        let resolved = contract(EDIT, reason, read_only);
        assert_eq!(
            active_task_context(&resolved, &findings).as_deref(),
            context,
            "{reason:?}"
        );
        assert_eq!(remembered(&resolved), remember, "{reason:?}");
    }
}

/// Proves the fixed text about Talos passes the answer guards unchanged (it claims no change,
/// no verdict, no denial a guard would correct).
#[test]
fn the_fixed_text_about_talos_passes_the_guards_unchanged() {
    let facts = talos_core::outcome::TurnFacts::default();
    assert_eq!(
        talos_core::guard::guard_answer(route::ABOUT_TALOS_ANSWER, &facts),
        route::ABOUT_TALOS_ANSWER
    );
}

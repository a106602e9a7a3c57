//! The turn state machine's rules, one row each: a scripted conversation between the core and a
//! pretend daemon (each effect answered from the row's script), and what the core decided:
//! the effects it asked for, the report, and the records. Proves the rules that used to live
//! in the daemon's turn code (checks before IO, ladder, discipline, the format rung, exact
//! literals, checkpoint-before-write, stale bytes, protected and private reads, commands,
//! workspace operations, the APPLY to VERIFY move, routes, guards and evidence).

use crate::turn_support::{
    EDIT, Reply, Row, answer, check, drive, edit_settings, proposal, read_settings, row, turn,
};
use pretty_assertions::assert_eq;
use talos_core::contract::resolve;
use talos_core::ladder::Grants;
use talos_core::modes::{SessionMode, Structural};
use talos_core::outcome::{Fine, MutationResult};
use talos_core::plan::{Phase, TurnPlan};
use talos_core::posture::apply;
use talos_core::turn::Notice;
use talos_core::turn::call::{Effect, Input, Proposal};
use talos_core::turn::record::WarningCode;
use talos_core::turn::route::{self, PriorRecord, Route};

#[test]
fn every_call_rule_holds() {
    let none = Grants::default();
    let rows = vec![
        Row {
            says: "Invalid tool-call payload",
            effects: &["finish"],
            ..row(
                "a payload that is not JSON is rejected before any IO",
                EDIT,
                Proposal {
                    args: Err("expected value".into()),
                    ..proposal("talos.read_file", &[])
                },
            )
        },
        Row {
            says: "Unknown tool",
            effects: &["finish"],
            ..row(
                "an unknown tool is rejected before any IO",
                EDIT,
                proposal("shell", &[("cmd", "ls")]),
            )
        },
        Row {
            says: "Current-turn tool surface did not allow talos.write_file",
            effects: &["finish"],
            ..row(
                "a write outside the read-only surface is rejected before any IO",
                "What does settings.py do?",
                proposal(
                    "talos.write_file",
                    &[("path", "settings.py"), ("content", "x")],
                ),
            )
        },
        Row {
            says: "Permission policy denied the talos.write_file call",
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            ..row(
                "an escaping path is denied by the ladder after the kernel resolved it",
                "Create link/notes.txt with hello.",
                proposal(
                    "talos.write_file",
                    &[("path", "link/notes.txt"), ("content", "hello")],
                ),
            )
        },
        Row {
            says: "Read settings.py with talos.read_file before editing it",
            script: vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 45\n"))],
            effects: &["resolve", "current", "finish"],
            ..row(
                "an edit of an unread file that does not match is answered with read-first",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "is a symlink",
            before: vec![read_settings()],
            script: vec![Reply::SymlinkPaths],
            effects: &["resolve", "finish"],
            ..row(
                "a symlink as the final component is refused before approval",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "[verification: PASS]",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Approve,
                Reply::Checkpoint,
                Reply::Written,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            ..row(
                "an approved edit is checkpointed before it is written, then verified",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "User did not approve the talos.edit_file call",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Deny,
            ],
            effects: &["resolve", "current", "ask", "finish"],
            stops: true,
            ..row(
                "a denied edit writes nothing and stops the loop",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "Required checkpoint failed before mutation: disk full",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Approve,
                Reply::CheckpointFails,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "finish"],
            stops: true,
            ..row("no checkpoint, no write", EDIT, edit_settings())
        },
        Row {
            says: "settings.py changed since the change was approved; nothing written",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Approve,
                Reply::Checkpoint,
                Reply::Stale,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            stops: true,
            ..row(
                "bytes that changed after approval are not overwritten",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "old_string was not found in settings.py",
            before: vec![read_settings()],
            script: vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 45\n"))],
            effects: &["resolve", "current", "finish"],
            ..row(
                "an edit whose old text is absent is refused before approval",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "not UTF-8",
            before: vec![read_settings()],
            script: vec![Reply::Paths, Reply::Bytes(&[0xff, 0xfe, 0x00])],
            effects: &["resolve", "current", "finish"],
            ..row(
                "binary pre-images are not edited",
                EDIT,
                Proposal {
                    args: Ok([
                        ("path".to_string(), "settings.py".to_string()),
                        ("old_string".into(), "a".into()),
                        ("new_string".into(), "b".into()),
                    ]
                    .into_iter()
                    .collect()),
                    ..edit_settings()
                },
            )
        },
        Row {
            says: "User did not approve the talos.read_file call",
            script: vec![Reply::Paths, Reply::Deny],
            effects: &["resolve", "ask", "finish"],
            stops: true,
            ..row(
                "a protected read asks, and a denial stops the loop",
                "Show me .env",
                proposal("talos.read_file", &[("path", ".env")]),
            )
        },
        Row {
            says: "shown to the user only (private mode)",
            mode: SessionMode::Private,
            script: vec![
                Reply::Paths,
                Reply::Approve,
                Reply::Output("1 | API_KEY=abcdefgh1234"),
            ],
            effects: &["resolve", "ask", "read", "finish"],
            ..row(
                "private mode shows a protected read to the person only",
                "Show me .env",
                proposal("talos.read_file", &[("path", ".env")]),
            )
        },
        Row {
            says: "User did not approve running cargo_test",
            script: vec![Reply::Paths, Reply::Planned("cargo_test"), Reply::Deny],
            effects: &["resolve", "plan-command", "ask", "finish"],
            stops: true,
            ..row(
                "a command always asks, and a denial stops the loop",
                "Run the cargo_test command profile.",
                proposal("talos.run_command", &[("profile", "cargo_test")]),
            )
        },
        Row {
            says: "the workspace declaration changed after approval",
            script: vec![
                Reply::Paths,
                Reply::Planned("ws:check"),
                Reply::Approve,
                Reply::Planned("ws:other"),
            ],
            effects: &["resolve", "plan-command", "ask", "plan-command", "finish"],
            ..row(
                "a workspace profile whose declaration changed after approval does not run",
                "Run the command profile ws:check",
                proposal("talos.run_command", &[("profile", "ws:check")]),
            )
        },
        Row {
            says: "Command succeeded: ws:check exited with code 0",
            script: vec![
                Reply::Paths,
                Reply::Planned("ws:check"),
                Reply::Approve,
                Reply::Planned("ws:check"),
                Reply::Ran(0),
            ],
            effects: &[
                "resolve",
                "plan-command",
                "ask",
                "plan-command",
                "run-command",
                "finish",
            ],
            ..row(
                "an approved workspace profile is planned again and runs when unchanged",
                "Run the command profile ws:check",
                proposal("talos.run_command", &[("profile", "ws:check")]),
            )
        },
        Row {
            says: "Command succeeded: cargo_test exited with code 0",
            script: vec![
                Reply::Paths,
                Reply::Planned("cargo_test"),
                Reply::Approve,
                Reply::Ran(0),
            ],
            effects: &["resolve", "plan-command", "ask", "run-command", "finish"],
            ..row(
                "an approved built-in command runs as approved (no second plan)",
                "Run the cargo_test command profile.",
                proposal("talos.run_command", &[("profile", "cargo_test")]),
            )
        },
        Row {
            says: "Destination already exists: b. No approval was requested",
            script: vec![
                Reply::Paths,
                Reply::OpsRefused("Destination already exists: b"),
            ],
            effects: &["resolve", "check-ops", "finish"],
            ..row(
                "a workspace operation that cannot run is refused before approval",
                "Move a.txt to b.",
                proposal("talos.move_path", &[("from", "a.txt"), ("to", "b")]),
            )
        },
        Row {
            says: "Workspace operation failed: gone. Nothing was changed.",
            script: vec![
                Reply::Paths,
                Reply::OpsOk,
                Reply::Approve,
                Reply::Checkpoint,
                Reply::OpsApplied(&[Err("gone")]),
            ],
            effects: &[
                "resolve",
                "check-ops",
                "ask",
                "checkpoint",
                "apply-ops",
                "finish",
            ],
            stops: true,
            ..row(
                "a workspace operation is checkpointed, applied and verified",
                "Move a.txt to b.txt.",
                proposal("talos.move_path", &[("from", "a.txt"), ("to", "b.txt")]),
            )
        },
    ];
    for r in rows {
        check(r, none);
    }
}

#[test]
fn the_format_rung_turns_a_remembered_allow_into_an_ask() {
    let grants = Grants {
        remember_writes: true,
    };
    let r = Row {
        says: "[verification: PASS]",
        before: vec![read_settings()],
        script: vec![
            Reply::Paths,
            Reply::Current(Some("TIMEOUT = 30\r\n")),
            Reply::Approve,
            Reply::Checkpoint,
            Reply::Written,
        ],
        effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
        mutated: true,
        ..row(
            "a CRLF file rewritten with LF asks even under a grant",
            "Overwrite settings.py with TIMEOUT = 60.",
            proposal(
                "talos.write_file",
                &[("path", "settings.py"), ("content", "TIMEOUT = 60\n")],
            ),
        )
    };
    let turn = check(r, grants);
    let codes: Vec<&str> = turn
        .record()
        .permission_decisions
        .iter()
        .map(|p| p.reason_code.as_str())
        .collect();
    assert!(codes.contains(&"FORMAT_CHANGE_ASK"), "{codes:?}");
}

#[test]
fn approve_for_session_remembers_writes_for_the_next_call() {
    let r = Row {
        says: "[verification: PASS]",
        before: vec![read_settings()],
        script: vec![
            Reply::Paths,
            Reply::Current(Some("TIMEOUT = 30\n")),
            Reply::ApproveForSession,
            Reply::Ack,
            Reply::Checkpoint,
            Reply::Written,
        ],
        effects: &[
            "resolve",
            "current",
            "ask",
            "remember",
            "checkpoint",
            "write",
            "finish",
        ],
        mutated: true,
        ..row("approve for session", EDIT, edit_settings())
    };
    let turn = check(r, Grants::default());
    assert!(turn.grants.remember_writes);
}

#[test]
fn an_exact_literal_replaces_what_the_model_proposed() {
    let mut turn = turn(
        "Overwrite index.html with exactly AFTER",
        SessionMode::Agent,
        Grants::default(),
    );
    let call = proposal(
        "talos.write_file",
        &[("path", "index.html"), ("content", "something else")],
    );
    let script = [
        Reply::Paths,
        Reply::Current(Some("BEFORE")),
        Reply::Approve,
        Reply::Checkpoint,
    ];
    let mut call = turn.propose(call);
    let mut input = Input::Start;
    let mut written = None;
    for reply in script.iter().chain([&Reply::Written]) {
        let effect = call.step(&mut turn, input);
        if let Effect::Write { bytes, .. } = &effect {
            written = Some(bytes.clone());
        }
        input = answer(reply, &effect);
    }
    assert_eq!(written.as_deref(), Some(&b"AFTER"[..]));
    assert!(
        turn.record()
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::ExactLiteralWriteCorrected)
    );
}

#[test]
fn the_phase_moves_to_verify_once_every_named_target_changed_at_the_end_of_the_reply() {
    let mut turn = turn(EDIT, SessionMode::Agent, Grants::default());
    assert_eq!(turn.phase, Phase::Apply);
    let (call, script) = read_settings();
    drive(&mut turn, call, &script);
    let script = [
        Reply::Paths,
        Reply::Current(Some("TIMEOUT = 30\n")),
        Reply::Approve,
        Reply::Checkpoint,
        Reply::Written,
    ];
    let (_, last) = drive(&mut turn, edit_settings(), &script);
    let Effect::Finish(_report) = last else {
        unreachable!()
    };
    // Still APPLY for the rest of the reply's calls (issue 27); the reply's end moves it.
    assert_eq!(turn.phase, Phase::Apply);
    turn.reply_done();
    assert_eq!(turn.phase, Phase::Verify);
    assert!(
        turn.record()
            .facts
            .mutations
            .iter()
            .any(|m| m.result == MutationResult::Succeeded { verified: true })
    );
}

#[test]
fn private_reads_never_reach_the_model_and_never_echo_in_the_answer() {
    let mut turn = turn("Show me .env", SessionMode::Private, Grants::default());
    let call = proposal("talos.read_file", &[("path", ".env")]);
    let script = [
        Reply::Paths,
        Reply::Approve,
        Reply::Output("1 | API_KEY=abcdefgh1234"),
    ];
    drive(&mut turn, call, &script);
    let notices = turn.drain_notices();
    assert!(
        notices.iter().any(
            |n| matches!(n, Notice::TrustedInfo(text) if text.contains("API_KEY=abcdefgh1234"))
        )
    );
    turn.settle();
    let done = turn.finish("The key is API_KEY=abcdefgh1234.", None);
    assert!(!done.answer.contains("abcdefgh1234"), "{}", done.answer);
    assert!(
        turn.record()
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::ProtectedContentWithheld)
    );
}

#[test]
fn outcomes_come_from_the_records() {
    // A change requested and never attempted: the named target is unmet.
    let mut t = turn(EDIT, SessionMode::Agent, Grants::default());
    t.settle();
    assert_eq!(
        t.record().facts.unmet_targets,
        vec!["settings.py".to_string()]
    );
    assert_eq!(
        t.finish("Done! I changed it.", None).fine,
        Fine::BlockedByPolicy
    );
    // A question about a file answered without reading it.
    let mut t = turn(
        "Is the TIMEOUT in settings.py consistent with README.md?",
        SessionMode::Agent,
        Grants::default(),
    );
    t.record_for_rows()
        .model_calls
        .push(talos_core::turn::record::ModelCallRecord {
            context_tokens: None,
            budgeted_tokens: None,
            cut: Vec::new(),
            index: 0,
            finish_reason: "stop".into(),
            content: Default::default(),
            tool_calls: 0,
            prompt_tokens: None,
            completion_tokens: None,
            cached_tokens: None,
            error: None,
        });
    t.settle();
    assert!(
        t.record()
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::EvidenceTargetNotRead)
    );
}

#[test]
fn routes_are_decided_before_any_model_call() {
    let plan = |request: &str, mode: SessionMode| {
        TurnPlan::from_turn(apply(mode.posture(), resolve(request)))
    };
    let rows: Vec<(&str, SessionMode, bool, Route)> = vec![
        (
            "ls",
            SessionMode::Auto,
            false,
            Route::Viewer(Structural::List { path: ".".into() }),
        ),
        (
            "did you make the changes?",
            SessionMode::Agent,
            true,
            Route::StatusFromRecords,
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
            "did you make the changes?",
            SessionMode::Agent,
            false,
            Route::Model,
        ),
        (
            "Summarise report.doc",
            SessionMode::Agent,
            false,
            Route::UnreadableDocuments(vec!["report.doc".into()]),
        ),
        (EDIT, SessionMode::Agent, false, Route::Model),
    ];
    for (request, mode, prior, expected) in rows {
        let p = plan(request, mode);
        assert_eq!(
            route::route(mode, &p, request, prior),
            expected,
            "{request}"
        );
    }
    let status = route::status_from_records(&PriorRecord {
        trace_id: "trc-1".into(),
        classification: Fine::Partial,
        files: Vec::new(),
    });
    assert!(
        status.starts_with("From Talos's records of the previous turn (trace trc-1): PARTIAL.")
    );
}

/// Proves an answer that does not fit the effect ends the call with nothing done, the loop
/// stopped, and the call recorded as failed.
#[test]
fn a_protocol_break_fails_closed_and_is_recorded() {
    let mut turn = turn(EDIT, SessionMode::Agent, Grants::default());
    let mut call = turn.propose(proposal("talos.read_file", &[("path", "settings.py")]));
    let first = call.step(&mut turn, Input::Start);
    assert!(matches!(first, Effect::Resolve(_)));
    let Effect::Finish(report) = call.step(&mut turn, Input::Done) else {
        panic!("a broken answer must end the call");
    };
    assert!(report.stop.is_some());
    let last = turn
        .record()
        .tool_calls
        .last()
        .expect("the call is recorded");
    assert_eq!(last.stage, talos_core::turn::record::CallStage::Failed);
    assert!(
        last.rejection
            .as_deref()
            .is_some_and(|r| r.starts_with("internal:"))
    );
}

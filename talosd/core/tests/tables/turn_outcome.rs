//! Issue 12's outcome rules through the turn state machine, one row each: read-before-edit
//! refined (an unread edit that matches once runs with the hint; one that does not match, or
//! matches twice, is answered with read-first), a refused identical call repeated stops the
//! loop, and the end of a turn decided by where each target ended (a refusal on a target the
//! request does not need, a partial change then "all done", a clean verdict the checks
//! contradict, an unsolicited change blocked on a read-only turn, a model that did not act).

use crate::turn_support;

use crate::turn_support::{
    EDIT, Reply, Row, check, drive, edit_settings, proposal, read_settings, row,
};
use talos_core::discipline::UNREAD_EDIT_HINT;
use talos_core::guard::{CLEAN_VERDICT_CONTRADICTED, READ_ONLY_BLOCK_NOTE};
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::Fine;
use talos_core::turn::Turn;

const CREATE_THREE: &str =
    "Create alpha.txt, beta.txt and gamma.txt, each containing the word hello";
const QUESTION: &str = "What does settings.py do?";
const DIAGNOSE_WEB: &str = "What is wrong with index.html?";

fn approved_edit() -> Vec<Reply> {
    vec![
        Reply::Paths,
        Reply::Current(Some("TIMEOUT = 30\n")),
        Reply::Approve,
        Reply::Checkpoint,
        Reply::Written,
    ]
}

#[test]
fn read_before_edit_is_decided_from_the_files_bytes() {
    let none = Grants::default();
    let rows = vec![
        Row {
            says: UNREAD_EDIT_HINT,
            script: approved_edit(),
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            ..row(
                "an unread edit whose old_string matches once runs, with the hint",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "[verification: PASS]",
            before: vec![read_settings()],
            script: approved_edit(),
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            holds: |t| {
                let report = &t.record().tool_calls;
                match report.last().and_then(|c| c.rejection.as_ref()) {
                    None => Ok(()),
                    Some(r) => Err(format!("unexpected rejection {r}")),
                }
            },
            ..row("a read edit runs as before", EDIT, edit_settings())
        },
        Row {
            says: "old_string found 2 times in settings.py, and settings.py was not read in this turn. Read settings.py with talos.read_file before editing it",
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\nTIMEOUT = 30\n")),
            ],
            effects: &["resolve", "current", "finish"],
            ..row(
                "an unread edit that matches twice is answered with read-first",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "old_string was not found in settings.py. Read the file",
            before: vec![read_settings()],
            script: vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 45\n"))],
            effects: &["resolve", "current", "finish"],
            ..row(
                "a read edit that does not match keeps its own answer",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "already been refused",
            before: vec![
                read_settings(),
                (
                    edit_settings(),
                    vec![
                        Reply::Paths,
                        Reply::Current(Some("TIMEOUT = 30\n")),
                        Reply::Deny,
                    ],
                ),
                (edit_settings(), vec![Reply::Paths]),
            ],
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            stops: true,
            stop_says: "repeated a talos.edit_file call that had already been refused",
            ..row(
                "a refused identical call repeated stops the loop like a failed one",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "settings.py already exists and was not read in this turn. Read settings.py with talos.read_file before replacing it with talos.write_file",
            script: vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 30\n"))],
            effects: &["resolve", "current", "finish"],
            ..row(
                "a full write replacing an unread existing file is read-first",
                "Rewrite settings.py so TIMEOUT is 60",
                write_settings(),
            )
        },
        Row {
            says: "[verification: PASS]",
            before: vec![read_settings()],
            script: approved_edit(),
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            ..row(
                "a full write of a file read this turn runs",
                "Rewrite settings.py so TIMEOUT is 60",
                write_settings(),
            )
        },
        Row {
            says: "[verification: PASS]",
            script: vec![
                Reply::Paths,
                Reply::Current(None),
                Reply::Approve,
                Reply::Checkpoint,
                Reply::Written,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            ..row(
                "a full write of a new file needs no read",
                "Rewrite settings.py so TIMEOUT is 60",
                write_settings(),
            )
        },
    ];
    for r in rows {
        check(r, none);
    }
}

fn write_settings() -> talos_core::turn::call::Proposal {
    proposal(
        "talos.write_file",
        &[("path", "settings.py"), ("content", "TIMEOUT = 60\n")],
    )
}

/// What the final answer must hold.
struct Says {
    starts: &'static str,
    contains: &'static [&'static str],
    lacks: &'static str,
}

struct EndRow {
    what: &'static str,
    request: &'static str,
    mode: SessionMode,
    /// Drives the turn's calls (and sets what the daemon would report).
    setup: fn(&mut Turn),
    answer: &'static str,
    says: Says,
    fine: Fine,
    mutation_status: &'static str,
}

fn check_end(row: EndRow) {
    let mut t = turn_support::turn(row.request, row.mode, Grants::default());
    (row.setup)(&mut t);
    t.settle();
    let done = t.finish(row.answer, None);
    let what = row.what;
    assert!(
        done.answer.starts_with(row.says.starts),
        "{what}: {:?}",
        done.answer
    );
    for part in row.says.contains {
        assert!(
            done.answer.contains(part),
            "{what}: {:?} lacks {part:?}",
            done.answer
        );
    }
    assert!(
        row.says.lacks.is_empty() || !done.answer.contains(row.says.lacks),
        "{what}: {:?} has {:?}",
        done.answer,
        row.says.lacks
    );
    assert_eq!(done.fine, row.fine, "{what}: classification");
    assert_eq!(
        done.mutation_status, row.mutation_status,
        "{what}: mutation"
    );
}

fn write(t: &mut Turn, path: &str, current: Option<&'static str>) {
    let call = proposal(
        "talos.write_file",
        &[("path", path), ("content", "hello\n")],
    );
    let script = [
        Reply::Paths,
        Reply::Current(current),
        Reply::Approve,
        Reply::Checkpoint,
        Reply::Written,
    ];
    drive(t, call, &script);
}

#[test]
fn the_end_of_a_turn_follows_where_each_target_ended() {
    fn unneeded_refused_then_done(t: &mut Turn) {
        let notes = proposal(
            "talos.write_file",
            &[("path", "notes.txt"), ("content", "x")],
        );
        drive(t, notes, &[Reply::Paths]);
        let (read, script) = read_settings();
        drive(t, read, &script);
        drive(t, edit_settings(), &approved_edit());
    }
    fn two_of_three(t: &mut Turn) {
        write(t, "alpha.txt", None);
        write(t, "beta.txt", None);
    }
    fn found_problems(t: &mut Turn) {
        let (read, script) = read_settings();
        drive(t, read, &script);
        t.record_for_rows()
            .facts
            .task_findings
            .push("index.html: #list is not in the page".into());
    }
    fn unsolicited_write(t: &mut Turn) {
        let call = proposal(
            "talos.write_file",
            &[("path", "settings.py"), ("content", "x")],
        );
        drive(t, call, &[]);
    }
    fn did_not_act(t: &mut Turn) {
        t.record_for_rows().facts.obligation_retries = 1;
        t.record_for_rows().facts.action_not_taken = true;
    }
    fn denied_capability(t: &mut Turn) {
        t.record_for_rows().facts.obligation_retries = 1;
        t.record_for_rows().facts.capability_denied = true;
    }
    let rows = vec![
        EndRow {
            what: "a refused call on a target the request does not need, then success",
            request: EDIT,
            mode: SessionMode::Agent,
            setup: unneeded_refused_then_done,
            answer: "Done. TIMEOUT is now 60.",
            says: Says {
                starts: "Done. TIMEOUT is now 60.",
                contains: &[
                    "- notes.txt: refused: ",
                    "(not needed by the request)",
                    "- settings.py: changed and verified",
                ],
                lacks: "Truth check",
            },
            fine: Fine::CompletedVerified,
            mutation_status: "SUCCEEDED",
        },
        EndRow {
            what: "a partial change then \"all done\"",
            request: CREATE_THREE,
            mode: SessionMode::Agent,
            setup: two_of_three,
            answer: "Done! I created all three files.",
            says: Says {
                starts: "[Truth check: the task is only partly done: 2 of 3 required file(s) changed. The model's claim that the task was complete was removed.]",
                contains: &[
                    "- gamma.txt: not attempted",
                    "Remaining target(s): gamma.txt",
                ],
                lacks: "Done!",
            },
            fine: Fine::Partial,
            mutation_status: "SUCCEEDED",
        },
        EndRow {
            what: "a verify turn saying it is all correct while the checks found a problem",
            request: DIAGNOSE_WEB,
            mode: SessionMode::Ask,
            setup: found_problems,
            // Only a sentence naming what a finding is about (#list, index.html) stands.
            answer: "The page is wired correctly. It has one list. The #list element is in index.html.",
            says: Says {
                starts: CLEAN_VERDICT_CONTRADICTED,
                contains: &["The #list element is in index.html."],
                lacks: "one list.",
            },
            fine: Fine::ReadOnlyAnswered,
            mutation_status: "NOT_REQUESTED",
        },
        EndRow {
            what: "a read-only turn that blocked an unsolicited change keeps its answer",
            request: QUESTION,
            mode: SessionMode::Agent,
            setup: unsolicited_write,
            answer: "It sets TIMEOUT to 30 seconds.",
            says: Says {
                starts: "It sets TIMEOUT to 30 seconds.",
                contains: &[READ_ONLY_BLOCK_NOTE],
                lacks: "Truth check",
            },
            fine: Fine::ReadOnlyAnswered,
            mutation_status: "NOT_REQUESTED",
        },
        EndRow {
            what: "a model that did not act after the retry",
            request: EDIT,
            mode: SessionMode::Agent,
            setup: did_not_act,
            answer: "Sure! Set TIMEOUT = 60 in settings.py and you are done.",
            says: Says {
                starts: "[Action not taken: the request needs a change to settings.py",
                contains: &["No file was changed."],
                lacks: "you are done",
            },
            fine: Fine::Failed,
            mutation_status: "NOT_ATTEMPTED",
        },
        EndRow {
            what: "a capability denial the loop recorded, whatever its wording",
            request: EDIT,
            mode: SessionMode::Agent,
            setup: denied_capability,
            answer: "That is something you should do in your editor.",
            says: Says {
                starts: "[Capability correction: Talos can create and edit files",
                contains: &[],
                lacks: "",
            },
            fine: Fine::Failed,
            mutation_status: "NOT_ATTEMPTED",
        },
    ];
    for r in rows {
        check_end(r);
    }
}

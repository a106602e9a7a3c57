//! What a turn reports at its end (issue 34), one row each, driven through the call machine:
//! `COMPLETED_VERIFIED` only when the request's own check held (a change rule on a changed
//! target, a workspace operation's postcondition, a web or command check), a change with
//! nothing checkable is `COMPLETED_UNVERIFIED` and says why, and a finished file rename counts
//! its destination as changed.

use crate::turn_support::{EDIT, Reply, drive, edit_settings, proposal, read_settings, turn};
use pretty_assertions::assert_eq;
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::Fine;
use talos_core::turn::Turn;
use talos_core::turn::finish::NOTHING_CHECKABLE;

/// One turn's end: the calls it made, the model's answer, and what the end must report.
struct EndRow {
    what: &'static str,
    request: &'static str,
    setup: fn(&mut Turn),
    answer: &'static str,
    fine: Fine,
    /// Parts the final answer holds, and one it must not ("" for none).
    says: &'static [&'static str],
    lacks: &'static str,
    /// The trace's verification: (status, summary) pairs it must hold.
    verification: &'static [(&'static str, &'static str)],
    unmet: &'static [&'static str],
}

fn check(row: EndRow) {
    let mut t = turn(row.request, SessionMode::Agent, Grants::default());
    (row.setup)(&mut t);
    t.settle();
    let done = t.finish(row.answer, None);
    let what = row.what;
    assert_eq!(
        done.fine, row.fine,
        "{what}: classification ({:?})",
        done.answer
    );
    for part in row.says {
        assert!(
            done.answer.contains(part),
            "{what}: {:?} lacks {part:?}",
            done.answer
        );
    }
    assert!(
        row.lacks.is_empty() || !done.answer.contains(row.lacks),
        "{what}: {:?} has {:?}",
        done.answer,
        row.lacks
    );
    let verification: Vec<(&str, &str)> = t
        .record()
        .verification
        .iter()
        .map(|v| (v.status.as_str(), v.summary.as_str()))
        .collect();
    for wanted in row.verification {
        assert!(
            verification.contains(wanted),
            "{what}: verification {verification:?} lacks {wanted:?}"
        );
    }
    assert_eq!(t.record().facts.unmet_targets, row.unmet, "{what}: unmet");
}

fn approved(current: Option<&'static str>) -> Vec<Reply> {
    vec![
        Reply::Paths,
        Reply::Current(current),
        Reply::Approve,
        Reply::Checkpoint,
        Reply::Written,
    ]
}

fn demo_edit(t: &mut Turn) {
    let (read, script) = read_settings();
    drive(t, read, &script);
    drive(t, edit_settings(), &approved(Some("TIMEOUT = 30\n")));
}

fn wrong_value(t: &mut Turn) {
    let (read, script) = read_settings();
    drive(t, read, &script);
    let edit = proposal(
        "talos.edit_file",
        &[
            ("path", "settings.py"),
            ("old_string", "TIMEOUT = 30"),
            ("new_string", "TIMEOUT = 45"),
        ],
    );
    drive(t, edit, &approved(Some("TIMEOUT = 30\n")));
}

fn write_notes(t: &mut Turn) {
    let write = proposal(
        "talos.write_file",
        &[("path", "notes.txt"), ("content", "hello")],
    );
    drive(t, write, &approved(None));
}

fn ops(t: &mut Turn, call: (&str, &[(&str, &str)]), touched: &'static [&'static [&'static str]]) {
    let script = [
        Reply::Paths,
        Reply::OpsTouched(touched),
        Reply::Approve,
        Reply::Checkpoint,
        Reply::OpsApplied(&[Ok("done")]),
    ];
    drive(t, proposal(call.0, call.1), &script);
}

fn rename(t: &mut Turn) {
    let call = (
        "talos.rename_path",
        &[("path", "old.txt"), ("new_name", "new.txt")][..],
    );
    ops(t, call, &[&["old.txt", "new.txt"]]);
}

fn delete(t: &mut Turn) {
    ops(
        t,
        ("talos.delete_path", &[("path", "old.txt")]),
        &[&["old.txt"]],
    );
}

fn web_checked_edit(t: &mut Turn) {
    let write = proposal(
        "talos.write_file",
        &[("path", "index.html"), ("content", "<p>hi</p>\n")],
    );
    drive(t, write, &approved(None));
    t.record_for_rows()
        .verification
        .push(talos_core::turn::record::VerificationRecord {
            call_id: "task".into(),
            path: ".".into(),
            status: talos_core::turn::record::CheckStatus::Pass,
            summary: "static web checks found no problem in 1 file(s)".into(),
        });
}

const VAGUE: &str = "Update settings.py so the timeout is longer.";

/// Proves COMPLETED_VERIFIED needs the request's own check, and a change with nothing to check
/// is COMPLETED_UNVERIFIED with the plain sentence in the answer and the trace.
#[test]
fn verified_means_the_requests_own_check_held() {
    let base = || EndRow {
        what: "",
        request: EDIT,
        setup: demo_edit,
        answer: "TIMEOUT is now 60.",
        fine: Fine::CompletedVerified,
        says: &[],
        lacks: NOTHING_CHECKABLE,
        verification: &[],
        unmet: &[],
    };
    let rows = vec![
        EndRow {
            what: "the demo: the rule held, and the trace names what was checked",
            verification: &[("PASS", "request check: settings.py has 30 replaced by 60")],
            ..base()
        },
        EndRow {
            what: "the rule did not hold: changed, not verified",
            setup: wrong_value,
            fine: Fine::CompletedUnverified,
            verification: &[("FAIL", "settings.py does not have 30 replaced by 60")],
            ..base()
        },
        EndRow {
            what: "a change whose request gives nothing checkable is unverified, and says why",
            request: VAGUE,
            fine: Fine::CompletedUnverified,
            says: &[
                "[Not verified: written and read back as approved; nothing in the request could be checked.]",
            ],
            lacks: "",
            verification: &[("NOT_CHECKED", NOTHING_CHECKABLE)],
            ..base()
        },
        EndRow {
            what: "exact content the request gave is its own check",
            request: "Overwrite notes.txt with exactly: hello",
            setup: write_notes,
            verification: &[(
                "PASS",
                "request check: notes.txt holds exactly the requested text",
            )],
            ..base()
        },
        EndRow {
            what: "content described, not given, is unverified",
            request: "Create notes.txt with a short greeting",
            setup: write_notes,
            fine: Fine::CompletedUnverified,
            says: &[NOTHING_CHECKABLE],
            lacks: "",
            ..base()
        },
        EndRow {
            what: "a delete is checked by its postcondition",
            request: "Delete the file old.txt",
            setup: delete,
            ..base()
        },
        EndRow {
            what: "a web change is checked by the static web verifier",
            request: "Update index.html to say hi",
            setup: web_checked_edit,
            ..base()
        },
    ];
    for row in rows {
        check(row);
    }
}

/// Proves a finished file rename counts its destination as changed: nothing is unmet, and the
/// turn is COMPLETED_VERIFIED (it was PARTIAL, and the loop asked the model again).
#[test]
fn a_finished_rename_counts_its_destination() {
    check(EndRow {
        what: "rename old.txt to new.txt",
        request: "Rename old.txt to new.txt.",
        setup: rename,
        answer: "Renamed.",
        fine: Fine::CompletedVerified,
        says: &["Renamed."],
        lacks: "Remaining target",
        verification: &[],
        unmet: &[],
    });
}

fn nothing(_: &mut Turn) {}

fn blocked_write(t: &mut Turn) {
    let call = proposal(
        "talos.write_file",
        &[("path", "settings.py"), ("content", "TIMEOUT = 60\n")],
    );
    drive(t, call, &[]);
}

/// Proves a turn whose records show no successful write never keeps a change claim, in any
/// of its shapes ("I have updated", "was changed", "I fixed", a bare "Done."), and the runtime
/// says why from the records: the contract's reading, or the change the model never proposed.
#[test]
fn a_no_change_turn_never_keeps_a_change_claim() {
    let base = || EndRow {
        what: "",
        request: "What does config.py do?",
        setup: nothing,
        answer: "",
        fine: Fine::ReadOnlyAnswered,
        says: &[],
        lacks: "",
        verification: &[],
        unmet: &[],
    };
    let rows = vec![
        EndRow {
            what: "a question answered with a claimed change",
            answer: "I have updated config.py. It sets DEBUG.",
            says: &[
                "Nothing was changed: the request was read as a question about config.py.",
                "It sets DEBUG.",
            ],
            lacks: "I have updated",
            ..base()
        },
        EndRow {
            what: "a passive claim about a file",
            answer: "config.py was changed to turn DEBUG off. DEBUG is a flag.",
            says: &[
                "Nothing was changed: the request was read as a question about config.py.",
                "DEBUG is a flag.",
            ],
            lacks: "to turn DEBUG off",
            ..base()
        },
        EndRow {
            what: "a first-person claim past a filler word",
            answer: "I've just fixed the bug.",
            says: &["Nothing was changed: the request was read as a question about config.py."],
            lacks: "fixed",
            ..base()
        },
        EndRow {
            what: "an answer describing the file is left alone",
            answer: "config.py is loaded first. DEBUG is set to True in config.py.",
            says: &["config.py is loaded first. DEBUG is set to True in config.py."],
            lacks: "Nothing was changed",
            ..base()
        },
        EndRow {
            what: "a question, a change nobody asked for blocked, and the model's Done.",
            request: "What is TIMEOUT in settings.py?",
            setup: blocked_write,
            answer: "Done.",
            says: &["Nothing was changed: the request was read as a question about settings.py."],
            lacks: "Done.",
            ..base()
        },
        EndRow {
            what: "a change asked for and never proposed, and the model's Done.",
            request: EDIT,
            answer: "Done.",
            fine: Fine::BlockedByPolicy,
            says: &[
                "Nothing was changed: the request asked for a change to settings.py, and the model proposed none.",
                "Remaining target(s): settings.py",
            ],
            lacks: "Done.",
            unmet: &["settings.py"],
            ..base()
        },
    ];
    for row in rows {
        check(row);
    }
}

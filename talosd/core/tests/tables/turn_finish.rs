//! The end of a turn (`turn/finish.rs`), one row each over records the row builds: the targets
//! that had to change and did not, the evidence a read-only answer had to rest on, and the
//! final answer after the guards (a claimed change, a contradicted clean verdict, protected
//! lines) with the classification and the mutation and approval status. The static web
//! verifier's part is in `tables/turn_web_finish.rs`.

use crate::turn_support::{EDIT, model_answered, mutated, turn, turn_with, warnings};
use pretty_assertions::assert_eq;
use talos_core::contract::TaskType;
use talos_core::guard::CLEAN_VERDICT_CONTRADICTED;
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::{Fine, MutationResult};
use talos_core::turn::Turn;
use talos_core::turn::record::WarningCode;

const QUESTION: &str = "What does settings.py do?";
const CONSISTENT: &str = "Is the TIMEOUT in settings.py consistent with README.md?";
const DIAGNOSE_WEB: &str = "What is wrong with index.html?";

fn agent(request: &str) -> Turn {
    turn(request, SessionMode::Agent, Grants::default())
}

/// Proves the targets that had to change and did not are unmet, and the classification,
/// mutation status and approval status follow from the records alone.
#[test]
fn unmet_targets_and_the_outcome_come_from_the_records() {
    let verified = || MutationResult::Succeeded { verified: true };
    // (what, request, mutations, unmet, classification, mutation status, approval status)
    type Made = Vec<(&'static str, MutationResult)>;
    let rows: Vec<(&str, &str, Made, &[&str], Fine, &str, &str)> = vec![
        (
            "a change never attempted leaves its target unmet",
            EDIT,
            vec![],
            &["settings.py"],
            Fine::BlockedByPolicy,
            "NOT_ATTEMPTED",
            "NONE",
        ),
        (
            "a verified change meets its target",
            EDIT,
            vec![("settings.py", verified())],
            &[],
            Fine::CompletedVerified,
            "SUCCEEDED",
            "GRANTED_OR_NOT_REQUIRED",
        ),
        (
            "a change read back unverified is complete but unverified",
            EDIT,
            vec![("settings.py", MutationResult::Succeeded { verified: false })],
            &[],
            Fine::CompletedUnverified,
            "SUCCEEDED",
            "GRANTED_OR_NOT_REQUIRED",
        ),
        (
            "a change to another file leaves the named target unmet",
            EDIT,
            vec![("other.py", verified())],
            &["settings.py"],
            Fine::Partial,
            "SUCCEEDED",
            "GRANTED_OR_NOT_REQUIRED",
        ),
        (
            "a denied change leaves its target unmet and is blocked by approval",
            EDIT,
            vec![("settings.py", MutationResult::Denied)],
            &["settings.py"],
            Fine::BlockedByApproval,
            "DENIED",
            "DENIED",
        ),
        (
            "a change refused before approval is blocked by policy",
            EDIT,
            vec![(
                "settings.py",
                MutationResult::Blocked {
                    reason: "old_string was not found".into(),
                },
            )],
            &["settings.py"],
            Fine::BlockedByPolicy,
            "FAILED",
            "NONE",
        ),
        (
            "a change that failed after approval fails the turn",
            EDIT,
            vec![(
                "settings.py",
                MutationResult::Failed {
                    reason: "disk full".into(),
                },
            )],
            &["settings.py"],
            Fine::Failed,
            "FAILED",
            "NONE",
        ),
        (
            "one change made and one failed is partial",
            EDIT,
            vec![
                ("settings.py", verified()),
                (
                    "other.py",
                    MutationResult::Failed {
                        reason: "stale".into(),
                    },
                ),
            ],
            &[],
            Fine::Partial,
            "PARTIAL",
            "GRANTED_OR_NOT_REQUIRED",
        ),
        (
            "a question has no target to change",
            QUESTION,
            vec![],
            &[],
            Fine::ReadOnlyAnswered,
            "NOT_REQUESTED",
            "NONE",
        ),
    ];
    for (what, request, mutations, unmet, fine, mutation_status, approval_status) in rows {
        let mut t = agent(request);
        for (target, result) in mutations {
            mutated(&mut t, target, result);
        }
        t.settle();
        assert_eq!(t.record().facts.unmet_targets, unmet, "{what}: unmet");
        let done = t.finish("", None);
        assert_eq!(done.fine, fine, "{what}: classification");
        assert_eq!(done.mutation_status, mutation_status, "{what}: mutation");
        assert_eq!(done.approval_status, approval_status, "{what}: approval");
    }
}

/// Proves every file a request named to read and that was not read is warned about with
/// EVIDENCE_TARGET_NOT_READ, and becomes missing evidence only when the model answered, the
/// plan required reading and no change was requested; small talk is exempt.
#[test]
fn evidence_the_answer_had_to_rest_on_must_be_read() {
    fn ask(request: &str) -> Turn {
        agent(request)
    }
    fn small_talk_naming_readme(_: &str) -> Turn {
        turn_with("hi", |c| {
            c.source_evidence_targets = vec!["README.md".into()]
        })
    }
    fn question_naming_readme(_: &str) -> Turn {
        turn_with("hi", |c| {
            c.source_evidence_targets = vec!["README.md".into()];
            c.task_type = TaskType::ReadOnlyQa;
        })
    }
    // (what, how the turn is built, request, model answered, paths read, warned, missing)
    type Build = fn(&str) -> Turn;
    let rows: Vec<(&str, Build, &str, bool, &[&str], &[&str], &[&str])> = vec![
        (
            "an answer that read neither named file",
            ask,
            CONSISTENT,
            true,
            &[],
            &["settings.py", "README.md"],
            &["settings.py", "README.md"],
        ),
        (
            "an answer that read one of two named files",
            ask,
            CONSISTENT,
            true,
            &["settings.py"],
            &["README.md"],
            &["README.md"],
        ),
        (
            "an answer that read both named files",
            ask,
            CONSISTENT,
            true,
            &["README.md", "settings.py"],
            &[],
            &[],
        ),
        (
            "no model answer: warned, but nothing is missing from an answer",
            ask,
            CONSISTENT,
            false,
            &[],
            &["settings.py", "README.md"],
            &[],
        ),
        (
            "a verification rests on the file too (issue 12): missing",
            ask,
            "Verify that settings.py sets TIMEOUT to 60.",
            true,
            &[],
            &["settings.py"],
            &["settings.py"],
        ),
        (
            "a requested change with a source to read: warned only",
            ask,
            "Create summary.md from notes.txt",
            true,
            &[],
            &["notes.txt"],
            &[],
        ),
        (
            "small talk that names a file is exempt",
            small_talk_naming_readme,
            "",
            true,
            &[],
            &[],
            &[],
        ),
        (
            "the same file named by a question is not exempt",
            question_naming_readme,
            "",
            true,
            &[],
            &["README.md"],
            &["README.md"],
        ),
    ];
    for (what, build, request, answered, read, warned, missing) in rows {
        let mut t = build(request);
        if answered {
            model_answered(&mut t);
        }
        t.record_for_rows().read_paths = read.iter().map(|p| p.to_string()).collect();
        t.settle();
        let expected: Vec<String> = warned
            .iter()
            .map(|p| format!("{p} was named by the request but not read this turn"))
            .collect();
        assert_eq!(
            warnings(&t, WarningCode::EvidenceTargetNotRead),
            expected,
            "{what}: warnings"
        );
        assert_eq!(
            t.record().facts.evidence_missing,
            missing,
            "{what}: missing"
        );
    }
}

#[derive(Debug)]
enum Says {
    Exactly(&'static str),
    StartsWith(&'static str),
}

struct FinishRow {
    what: &'static str,
    request: &'static str,
    setup: fn(&mut Turn),
    answer: &'static str,
    diagnostics: Option<&'static str>,
    says: Says,
    /// The warnings `finish` adds, with what each message says.
    warned: Vec<(WarningCode, &'static str)>,
    fine: Fine,
}

fn check_finish(row: FinishRow) {
    let mut t = agent(row.request);
    (row.setup)(&mut t);
    t.settle();
    let before = t.record().warnings.len();
    let done = t.finish(row.answer, row.diagnostics.map(str::to_string));
    let ok = match &row.says {
        Says::Exactly(text) => done.answer == *text,
        Says::StartsWith(text) => done.answer.starts_with(text),
    };
    assert!(
        ok,
        "{}: answer {:?}, expected {:?}",
        row.what, done.answer, row.says
    );
    let added: Vec<(WarningCode, &str)> = t.record().warnings[before..]
        .iter()
        .map(|w| (w.code, w.message.as_str()))
        .collect();
    assert_eq!(added, row.warned, "{}: warnings", row.what);
    assert_eq!(done.fine, row.fine, "{}: classification", row.what);
}

/// Proves the answer the person sees: the guards' corrections, a contradicted clean verdict,
/// protected lines withheld, and the verifier's diagnostics appended.
#[test]
fn the_final_answer_is_guarded_against_the_records() {
    fn nothing(_: &mut Turn) {}
    fn one_finding(t: &mut Turn) {
        t.record_for_rows()
            .facts
            .task_findings
            .push("index.html: #list is not in the page".into());
    }
    fn two_findings(t: &mut Turn) {
        one_finding(t);
        t.record_for_rows()
            .facts
            .task_findings
            .push("app.js: .add matches nothing".into());
    }
    fn denied(t: &mut Turn) {
        mutated(t, "settings.py", MutationResult::Denied);
    }
    fn changed(t: &mut Turn) {
        mutated(
            t,
            "settings.py",
            MutationResult::Succeeded { verified: true },
        );
    }
    fn protected(t: &mut Turn) {
        t.record_for_rows()
            .protected_lines
            .push("API_KEY=abcdefgh1234".into());
    }
    fn cancelled(t: &mut Turn) {
        t.record_for_rows().facts.cancelled = true;
    }
    fn cancelled_after_the_write(t: &mut Turn) {
        changed(t);
        cancelled(t);
    }
    let base = || FinishRow {
        what: "",
        request: QUESTION,
        setup: nothing,
        answer: "It sets TIMEOUT.",
        diagnostics: None,
        says: Says::Exactly("It sets TIMEOUT."),
        warned: Vec::new(),
        fine: Fine::ReadOnlyAnswered,
    };
    let rows = vec![
        FinishRow {
            what: "an answer the records agree with is unchanged",
            ..base()
        },
        FinishRow {
            what: "a claimed change that did not happen is corrected",
            request: EDIT,
            answer: "I have updated settings.py.",
            says: Says::StartsWith(
                "[Truth check: Nothing was changed: the request asked for a change to settings.py, and the model proposed none.",
            ),
            fine: Fine::BlockedByPolicy,
            ..base()
        },
        FinishRow {
            what: "a denied change replaces the answer",
            request: EDIT,
            setup: denied,
            answer: "I have updated settings.py.",
            says: Says::StartsWith(
                "[Truth check: no file was changed in this turn because the requested write was not approved.]",
            ),
            fine: Fine::BlockedByApproval,
            ..base()
        },
        FinishRow {
            what: "a change that happened is told as the model said it",
            request: EDIT,
            setup: changed,
            answer: "I have updated settings.py.",
            says: Says::Exactly("I have updated settings.py."),
            fine: Fine::CompletedVerified,
            ..base()
        },
        FinishRow {
            what: "a cancelled turn says so",
            setup: cancelled,
            says: Says::Exactly(
                "[Turn cancelled: the turn was stopped before it finished.]\nNo file was changed.",
            ),
            fine: Fine::Cancelled,
            ..base()
        },
        FinishRow {
            what: "a cancel after the write names the write and the undo",
            request: EDIT,
            setup: cancelled_after_the_write,
            says: Says::Exactly(
                "[Turn cancelled: the turn was stopped before it finished.]\nThe cancel came after a change was written; it stays on disk: settings.py (written and read back as approved). `talos undo` (or /undo) restores what this turn wrote.",
            ),
            fine: Fine::Cancelled,
            ..base()
        },
        FinishRow {
            what: "a clean verdict the checks contradict is flagged and warned about",
            request: DIAGNOSE_WEB,
            setup: two_findings,
            answer: "Everything looks good.",
            says: Says::StartsWith(CLEAN_VERDICT_CONTRADICTED),
            warned: vec![(
                WarningCode::CleanVerdictContradicted,
                "the answer said nothing was wrong; Talos's checks found 2 problem(s)",
            )],
            ..base()
        },
        FinishRow {
            what: "an answer that names the problems is not contradicted",
            request: DIAGNOSE_WEB,
            setup: one_finding,
            answer: "The #list element is missing.",
            says: Says::Exactly("The #list element is missing."),
            ..base()
        },
        FinishRow {
            what: "a clean verdict with no findings stands",
            request: DIAGNOSE_WEB,
            answer: "Everything looks good.",
            says: Says::Exactly("Everything looks good."),
            ..base()
        },
        FinishRow {
            what: "protected lines echoed in the answer are withheld, with the prefix",
            setup: protected,
            answer: "The key is API_KEY=abcdefgh1234.",
            says: Says::Exactly(
                "[Protected content check: lines of a protected file in the answer were withheld. The file's contents are withheld from answers; `--mode private` shows it on your screen only.]\n\nThe key is [protected content withheld].",
            ),
            warned: vec![(
                WarningCode::ProtectedContentWithheld,
                "the answer echoed lines of a protected file; they were withheld",
            )],
            ..base()
        },
        FinishRow {
            what: "protected lines not echoed leave the answer alone",
            setup: protected,
            says: Says::Exactly("It sets TIMEOUT."),
            ..base()
        },
        FinishRow {
            what: "a refusal after an approved protected read says why the content is not shown",
            setup: protected,
            answer: "I can't share the contents of .env.",
            says: Says::Exactly(
                "I can't share the contents of .env.\n\n[Protected content: the protected file was read with your approval, but its contents are withheld from answers. `--mode private` shows an approved protected read on your screen, never to the model.]",
            ),
            ..base()
        },
        FinishRow {
            what: "the verifier's diagnostics follow the answer",
            request: DIAGNOSE_WEB,
            answer: "Here is what I found.",
            diagnostics: Some(
                "Static web diagnostics (checked by Talos, not the model) found:\n- x",
            ),
            says: Says::Exactly(
                "Here is what I found.\n\nStatic web diagnostics (checked by Talos, not the model) found:\n- x",
            ),
            ..base()
        },
        FinishRow {
            what: "an empty answer is the diagnostics alone",
            request: DIAGNOSE_WEB,
            answer: "",
            diagnostics: Some(
                "Static web diagnostics (checked by Talos, not the model) found:\n- x",
            ),
            says: Says::Exactly(
                "Static web diagnostics (checked by Talos, not the model) found:\n- x",
            ),
            ..base()
        },
    ];
    for row in rows {
        check_finish(row);
    }
}

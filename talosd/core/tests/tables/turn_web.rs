//! The web verifier's decisions from the turn's own records (`turn/web.rs`): the check is due
//! when the turn changed a web file, or a diagnosis read one, whatever words the request used;
//! its focus is those files; and after a failed check one bounded repair of the files the turn
//! already changed runs, at most once per turn.

use crate::turn_support;

use crate::turn_support::{mutated, turn_with, warnings};
use pretty_assertions::assert_eq;
use talos_core::contract::TaskContract;
use talos_core::outcome::MutationResult;
use talos_core::turn::Turn;
use talos_core::turn::record::WarningCode;
use talos_core::turn::web::{Interaction, WebFinding, WebReport};

const DONE: MutationResult = MutationResult::Succeeded { verified: true };

fn keep(_: &mut TaskContract) {}

/// A turn over `request` whose records hold these changes and reads.
fn recorded(request: &str, changed: &[(&str, MutationResult)], read: &[&str]) -> Turn {
    let mut t = turn_with(request, keep);
    for (target, result) in changed {
        mutated(&mut t, target, result.clone());
    }
    t.record_for_rows().read_paths = read.iter().map(|p| p.to_string()).collect();
    t.settle();
    t
}

/// Proves due-ness and focus come from the records' files, not from the request's words.
#[test]
fn the_check_is_due_from_the_files_the_turn_changed_or_a_diagnosis_read() {
    let failed = MutationResult::Failed {
        reason: "stale".into(),
    };
    // (what, request, changes, reads, focus, due)
    type Row<'a> = (
        &'a str,
        &'a str,
        Vec<(&'a str, MutationResult)>,
        Vec<&'a str>,
        Vec<&'a str>,
        bool,
    );
    let rows: Vec<Row> = vec![
        (
            "a change of a page whose request never says web",
            "Make the heading say Welcome back",
            vec![("index.html", DONE)],
            vec![],
            vec!["index.html"],
            true,
        ),
        (
            "a change of a script and a stylesheet, upper-case extension",
            "Rename the counter variable",
            vec![("app.js", DONE), ("Theme.CSS", DONE), ("app.js", DONE)],
            vec![],
            vec!["app.js", "Theme.CSS"],
            true,
        ),
        (
            "a change of a file that is not web",
            "Make the heading say Welcome back",
            vec![("notes.md", DONE)],
            vec![],
            vec![],
            false,
        ),
        (
            "a failed change of a page",
            "Make the heading say Welcome back",
            vec![("index.html", failed)],
            vec![],
            vec![],
            false,
        ),
        (
            "a diagnosis that read a script",
            "What is wrong with counter.js?",
            vec![],
            vec!["counter.js", "README.md"],
            vec!["counter.js"],
            true,
        ),
        (
            "a question that read a page is not a diagnosis",
            "What does index.html say?",
            vec![],
            vec!["index.html"],
            vec![],
            false,
        ),
    ];
    for (what, request, changed, read, focus, due) in rows {
        let t = recorded(request, &changed, &read);
        assert_eq!(
            (t.web_focus(), t.web_check_due()),
            (focus.iter().map(|f| f.to_string()).collect(), due),
            "{what}"
        );
    }
}

fn finding(file: &str) -> WebFinding {
    WebFinding {
        file: file.into(),
        code: "UNTERMINATED_CLOSING_TAG".into(),
        message: format!("{file} line 3: the closing tag </div is never terminated by `>`"),
    }
}

fn report(findings: Vec<WebFinding>, interaction: Interaction) -> WebReport {
    WebReport {
        checked: 2,
        findings,
        interaction,
    }
}

const FIX: &str = "Fix the heading in index.html";

/// Proves one bounded repair of the changed files is decided after a failed check of those
/// files, never twice, and not when the findings are elsewhere, nothing failed, a target is
/// unmet or the turn may not change files.
#[test]
fn one_bounded_repair_of_the_changed_files_after_a_failed_check() {
    fn read_only(c: &mut TaskContract) {
        c.mutation_allowed = false;
    }
    // (what, request, contract change, changes, report, repair files)
    type Change = fn(&mut TaskContract);
    let rows: Vec<(&str, &str, Change, Vec<&str>, WebReport, Option<Vec<&str>>)> = vec![
        (
            "a finding in the changed page",
            FIX,
            keep,
            vec!["index.html", "style.css"],
            report(
                vec![finding("index.html"), finding("other.html")],
                Interaction::NotRequested,
            ),
            Some(vec!["index.html", "style.css"]),
        ),
        (
            "a failed interaction",
            FIX,
            keep,
            vec!["index.html"],
            report(
                vec![],
                Interaction::Failed("no element #out in any page".into()),
            ),
            Some(vec!["index.html"]),
        ),
        (
            "findings only in files the turn did not change",
            FIX,
            keep,
            vec!["index.html"],
            report(vec![finding("other.html")], Interaction::NotRequested),
            None,
        ),
        (
            "a clean check",
            FIX,
            keep,
            vec!["index.html"],
            report(vec![], Interaction::Passed),
            None,
        ),
        (
            "an expected target that did not change",
            FIX,
            keep,
            vec!["style.css"],
            report(vec![finding("style.css")], Interaction::NotRequested),
            None,
        ),
        (
            "a turn that may not change files",
            FIX,
            read_only,
            vec!["index.html"],
            report(vec![finding("index.html")], Interaction::NotRequested),
            None,
        ),
    ];
    for (what, request, change, changed, report, want) in rows {
        let mut t = turn_with(request, change);
        for target in &changed {
            mutated(&mut t, target, DONE);
        }
        t.settle();
        t.record_web(&report);
        let first = t.web_repair_due(&report);
        assert_eq!(
            first.as_ref().map(|r| r.files.clone()),
            want.as_ref()
                .map(|w| w.iter().map(|f| f.to_string()).collect::<Vec<_>>()),
            "{what}"
        );
        let repairs = warnings(&t, WarningCode::WebRepairRun).len();
        assert_eq!(repairs, usize::from(want.is_some()), "{what}: traced once");
        if let Some(repair) = first {
            assert!(
                report
                    .findings
                    .iter()
                    .filter(|f| repair.files.contains(&f.file))
                    .all(|f| repair.prompt.contains(&f.message)),
                "{what}: the prompt says what failed: {}",
                repair.prompt
            );
            assert!(
                repair.prompt.contains(&repair.files.join(", ")),
                "{what}: the prompt names the files: {}",
                repair.prompt
            );
            assert!(
                !repair.prompt.contains("other.html"),
                "{what}: only the changed files' findings: {}",
                repair.prompt
            );
            assert_eq!(
                t.record().facts.task_findings,
                Vec::<String>::new(),
                "{what}: the check after the repair decides"
            );
            t.record_web(&report);
            assert_eq!(t.web_repair_due(&report), None, "{what}: at most once");
        }
    }
}

/// Proves the repair round the core starts goes back to APPLY, refuses before approval a
/// change of any file the repair does not name (even where the request named no targets), and
/// that the work counts as done only once the repair changed a file.
#[test]
fn a_repair_round_changes_only_its_files_and_is_done_only_after_a_change() {
    let mut t = turn_with("Make the site look nicer", |c| c.expected_targets.clear());
    mutated(&mut t, "index.html", DONE);
    t.settle();
    let failed = report(vec![finding("index.html")], Interaction::NotRequested);
    t.record_web(&failed);
    let repair = t.web_repair_due(&failed).expect("a repair of index.html");
    assert_eq!(repair.files, ["index.html"]);
    t.begin_repair(&repair);
    assert_eq!(t.phase, talos_core::plan::Phase::Apply);
    let write = |path: &str| {
        turn_support::proposal(
            "talos.write_file",
            &[("path", path), ("content", "<p>x</p>\n")],
        )
    };
    let (seen, last) = turn_support::drive(&mut t, write("about.html"), &[]);
    assert_eq!(seen, ["finish"], "refused before any IO or approval");
    let talos_core::turn::call::Effect::Finish(report) = last else {
        unreachable!()
    };
    assert!(
        report
            .text
            .contains("not one of the files this repair may edit (index.html)"),
        "{}",
        report.text
    );
    let mut call = t.propose(write("./index.html"));
    let effect = call.step(&mut t, talos_core::turn::call::Input::Start);
    assert!(
        matches!(effect, talos_core::turn::call::Effect::Resolve(_)),
        "the repair's own file goes on to the ladder: {effect:?}"
    );
    // With the page as the request's target: done before the repair, not during it until
    // the repair changed the page again.
    let mut t = turn_with(FIX, keep);
    mutated(&mut t, "index.html", DONE);
    t.settle();
    assert!(t.work_done_summary().is_some());
    t.record_web(&failed);
    let repair = t.web_repair_due(&failed).expect("a repair of index.html");
    t.begin_repair(&repair);
    assert_eq!(
        t.work_done_summary(),
        None,
        "nothing changed in the repair yet"
    );
    mutated(&mut t, "index.html", DONE);
    assert!(
        t.work_done_summary().is_some(),
        "the repair changed its file"
    );
}

//! Whether the static web verifier is due at the end of a turn, and what its report records
//! and adds to the answer (`turn/web.rs`), one row each over records the row builds. The
//! rest of the turn's end is in `tables/turn_finish.rs`.

use crate::turn_support::{EDIT, mutated, turn, turn_with, warnings};
use pretty_assertions::assert_eq;
use talos_core::contract::TaskContract;
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::MutationResult;
use talos_core::turn::record::{CheckStatus, WarningCode};
use talos_core::turn::web::{Interaction, WebFinding, WebReport};

const DIAGNOSE_WEB: &str = "What is wrong with index.html?";
const FIX_WEB: &str = "Fix the todo app in index.html";

/// Proves the static web verifier is due on static web work that changed a web file or asked
/// for a diagnosis, and on nothing else (due-ness from the records' own files is in
/// `tables/turn_web.rs`).
#[test]
fn the_web_check_is_due_on_static_web_changes_and_diagnoses() {
    fn keep(_: &mut TaskContract) {}
    fn not_web(c: &mut TaskContract) {
        c.web.is_static_web = false;
    }
    fn explain_web(c: &mut TaskContract) {
        c.web.is_static_web = true;
    }
    // (what, request, contract change, the change's result, due); the change is of
    // index.html, or of settings.py on the request that names it.
    type Change = fn(&mut TaskContract);
    let rows: Vec<(&str, &str, Change, Option<MutationResult>, bool)> = vec![
        ("a web diagnosis", DIAGNOSE_WEB, keep, None, true),
        (
            "a web verification",
            "Verify that index.html shows the todo list",
            keep,
            None,
            true,
        ),
        (
            "a workspace explanation of a web project",
            "Explain this workspace",
            explain_web,
            None,
            true,
        ),
        (
            "a web question is not a diagnosis",
            "Explain index.html",
            keep,
            None,
            false,
        ),
        (
            "a web fix that changed the page",
            FIX_WEB,
            keep,
            Some(MutationResult::Succeeded { verified: true }),
            true,
        ),
        ("a web fix that changed nothing", FIX_WEB, keep, None, false),
        (
            "a web fix whose change failed",
            FIX_WEB,
            keep,
            Some(MutationResult::Failed {
                reason: "stale".into(),
            }),
            false,
        ),
        (
            "a change that is not web work",
            EDIT,
            keep,
            Some(MutationResult::Succeeded { verified: true }),
            false,
        ),
        (
            "a diagnosis that is not web work",
            DIAGNOSE_WEB,
            not_web,
            None,
            false,
        ),
    ];
    for (what, request, change, result, due) in rows {
        let mut t = turn_with(request, change);
        if let Some(result) = result {
            let target = if request == EDIT {
                "settings.py"
            } else {
                "index.html"
            };
            mutated(&mut t, target, result);
        }
        assert_eq!(t.web_check_due(), due, "{what}");
    }
}

fn finding(file: &str, code: &str, message: &str) -> WebFinding {
    WebFinding {
        file: file.into(),
        code: code.into(),
        message: message.into(),
    }
}

const HEADER: &str = "Static web diagnostics (checked by Talos, not the model) found:";

/// One row of `record_web`.
struct WebRow {
    what: &'static str,
    findings: Vec<WebFinding>,
    interaction: Interaction,
    /// (path, status, summary) of each verification record, in order.
    verification: Vec<(&'static str, CheckStatus, &'static str)>,
    task_findings: &'static [&'static str],
    unverified: bool,
    not_run: &'static [&'static str],
    /// The lines after the header, when the answer gains any.
    lines: Option<&'static str>,
}

fn check_web(row: WebRow) {
    let mut t = turn(DIAGNOSE_WEB, SessionMode::Agent, Grants::default());
    let text = t.record_web(&WebReport {
        checked: 3,
        findings: row.findings,
        interaction: row.interaction,
    });
    let verification: Vec<(&str, CheckStatus, &str)> = t
        .record()
        .verification
        .iter()
        .map(|v| {
            assert_eq!(v.call_id, "task", "{}: call id", row.what);
            (v.path.as_str(), v.status, v.summary.as_str())
        })
        .collect();
    assert_eq!(verification, row.verification, "{}: verification", row.what);
    let facts = &t.record().facts;
    assert_eq!(
        facts.task_findings, row.task_findings,
        "{}: findings",
        row.what
    );
    assert_eq!(
        facts.task_unverified, row.unverified,
        "{}: unverified",
        row.what
    );
    assert_eq!(
        warnings(&t, WarningCode::InteractionCheckNotRun),
        row.not_run,
        "{}: warnings",
        row.what
    );
    let expected = row.lines.map(|lines| format!("{HEADER}\n{lines}"));
    assert_eq!(text, expected, "{}: text", row.what);
}

/// Proves what the verifier's report records for each interaction state and for findings,
/// and the diagnostics the runtime adds to the answer.
#[test]
fn the_web_report_is_recorded_and_told() {
    const CLEAN: (&str, CheckStatus, &str) = (
        ".",
        CheckStatus::Pass,
        "static web checks found no problem in 3 file(s)",
    );
    let base = || WebRow {
        what: "",
        findings: Vec::new(),
        interaction: Interaction::NotRequested,
        verification: vec![CLEAN],
        task_findings: &[],
        unverified: false,
        not_run: &[],
        lines: None,
    };
    let rows = vec![
        WebRow {
            what: "a clean report passes and adds nothing to the answer",
            ..base()
        },
        WebRow {
            what: "each finding fails its file, becomes a task finding and a line",
            findings: vec![
                finding("index.html", "MISSING_ID", "#list is not in the page"),
                finding("app.js", "BAD_SELECTOR", ".add matches nothing"),
            ],
            verification: vec![
                (
                    "index.html",
                    CheckStatus::Fail,
                    "MISSING_ID: #list is not in the page",
                ),
                (
                    "app.js",
                    CheckStatus::Fail,
                    "BAD_SELECTOR: .add matches nothing",
                ),
            ],
            task_findings: &[
                "index.html: #list is not in the page",
                "app.js: .add matches nothing",
            ],
            lines: Some("- index.html: #list is not in the page\n- app.js: .add matches nothing"),
            ..base()
        },
        WebRow {
            what: "an interaction that passed in a browser is recorded as a pass",
            interaction: Interaction::Passed,
            verification: vec![
                CLEAN,
                (
                    ".",
                    CheckStatus::Pass,
                    "INTERACTION: checked in a headless browser",
                ),
            ],
            ..base()
        },
        WebRow {
            what: "an interaction not run is not a pass: unverified, warned and told",
            interaction: Interaction::NotRun("no headless browser is installed".into()),
            unverified: true,
            not_run: &["no headless browser is installed"],
            lines: Some(
                "- the interaction you described was not checked in a browser: no headless browser is installed (not a pass)",
            ),
            ..base()
        },
        WebRow {
            what: "a failed interaction fails, becomes a finding and a line",
            interaction: Interaction::Failed("clicking Add did nothing".into()),
            verification: vec![
                CLEAN,
                (
                    ".",
                    CheckStatus::Fail,
                    "INTERACTION: clicking Add did nothing",
                ),
            ],
            task_findings: &["clicking Add did nothing"],
            lines: Some("- interaction: clicking Add did nothing"),
            ..base()
        },
        WebRow {
            what: "a failed interaction comes before the file findings",
            findings: vec![finding("app.js", "BAD_SELECTOR", ".add matches nothing")],
            interaction: Interaction::Failed("clicking Add did nothing".into()),
            verification: vec![
                (
                    "app.js",
                    CheckStatus::Fail,
                    "BAD_SELECTOR: .add matches nothing",
                ),
                (
                    ".",
                    CheckStatus::Fail,
                    "INTERACTION: clicking Add did nothing",
                ),
            ],
            task_findings: &["clicking Add did nothing", "app.js: .add matches nothing"],
            lines: Some("- app.js: .add matches nothing\n- interaction: clicking Add did nothing"),
            ..base()
        },
    ];
    for row in rows {
        check_web(row);
    }
}

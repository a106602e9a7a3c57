//! A scripted model that lies in one way per test; the outcome, the answer and the disk tell
//! the truth.

use serde_json::json;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{Reply, read_call, scripted, write_call};
use talos_tests::harness::{agent_turn, timeout_workspace};

/// One turn in agent mode with every approval granted; the outcome and the trace.
async fn turn(ws: &std::path::Path, steps: Vec<Reply>, prompt: &str) -> (TurnOutcome, TraceRecord) {
    let run = agent_turn(ws, scripted(steps), prompt).await;
    (run.outcome, run.trace)
}

#[tokio::test]
async fn a_claimed_edit_that_failed_is_reported_as_failed() {
    let ws = timeout_workspace();
    let (outcome, _) = turn(
        ws.path(),
        vec![
            read_call("settings.py"),
            Reply::ToolCalls(vec![(
                "talos.edit_file".into(),
                json!({"path": "settings.py", "old_string": "TIMEOUT = 45", "new_string": "TIMEOUT = 60"})
                    .to_string(),
            )]),
            Reply::Text("I have updated settings.py: TIMEOUT is now 60.".into()),
        ],
        "In settings.py, change TIMEOUT from 30 to 60.",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
    let answer = &outcome.final_answer;
    assert!(
        answer.starts_with("[Truth check: no file was changed in this turn"),
        "{answer}"
    );
    assert!(!answer.contains("TIMEOUT is now 60"), "{answer}");
    // The edit was refused before approval (its old_string is not in the file) and the action
    // obligation is unmet: BLOCKED_BY_POLICY (docs/outcomes.md, "Obligations").
    assert_eq!(outcome.status, CompletionStatus::Blocked, "{outcome:?}");
    assert_eq!(
        outcome.classification,
        Classification::BlockedByPolicy,
        "{outcome:?}"
    );
    assert!(!outcome.files[0].changed, "{outcome:?}");
}

#[tokio::test]
async fn two_of_three_files_written_is_partial_and_names_the_third() {
    let ws = tempfile::tempdir().unwrap();
    let (outcome, trace) = turn(
        ws.path(),
        vec![
            write_call("alpha.txt", "hello\n"),
            write_call("beta.txt", "hello\n"),
            Reply::Text("Done! I created all three files.".into()),
        ],
        "Create alpha.txt, beta.txt and gamma.txt, each containing the word hello",
    )
    .await;
    assert!(ws.path().join("alpha.txt").exists() && ws.path().join("beta.txt").exists());
    assert!(!ws.path().join("gamma.txt").exists());
    let answer = &outcome.final_answer;
    assert!(
        answer.contains("Remaining target(s): gamma.txt"),
        "the unmet target is named as the person wrote it: {answer}"
    );
    assert_eq!(outcome.status, CompletionStatus::Partial, "{outcome:?}");
    assert_eq!(
        trace.outcome.classification,
        Classification::Partial,
        "{trace:?}"
    );
}

#[tokio::test]
/// The runtime reads both named files before the first model call (issue 24), so the verdict
/// is judged against Talos's own check of them: "no mismatches" does not stand. (Without the
/// pre-read, the same verdict said without reading is replaced by what was not inspected: the
/// guard's rows in talos-core hold that.)
async fn a_no_mismatches_verdict_the_checks_contradict_does_not_stand() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("index.html"), "<p id=\"a\">x</p>\n").unwrap();
    std::fs::write(ws.path().join("styles.css"), "#b { color: red }\n").unwrap();
    let (outcome, _) = turn(
        ws.path(),
        vec![Reply::Text(
            "There are no mismatches between the files.".into(),
        )],
        "Explain whether the selectors in styles.css match the ids in index.html",
    )
    .await;
    let answer = &outcome.final_answer;
    assert!(answer.starts_with("[Verification check:"), "{answer}");
    assert!(
        answer.contains("does not stand") && !answer.contains("There are no mismatches"),
        "the contradicted verdict is gone and the finding named: {answer}"
    );
}

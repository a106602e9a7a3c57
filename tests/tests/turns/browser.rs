//! The interaction check through the socket: a real headless chromium when one is installed
//! (CI installs Debian's), "not run" when none is. Never a pass without a browser.

use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{Reply, scripted, write_call};
use talos_tests::harness::agent_turn;

const PAGE: &str = "<!doctype html><html><head><title>Go</title></head><body><button id=\"go\">Go</button><p id=\"status\">idle</p><script src=\"app.js\"></script></body></html>\n";
const REQUEST: &str = "Create index.html and app.js so that clicking #go updates #status";

async fn turn(script: &str) -> (TurnOutcome, TraceRecord, tempfile::TempDir) {
    let model = scripted(vec![
        write_call("index.html", PAGE),
        write_call("app.js", script),
        Reply::Text("Done: clicking Go updates the status.".into()),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let run = agent_turn(ws.path(), model, REQUEST).await;
    (run.outcome, run.trace, ws)
}

fn interaction(trace: &TraceRecord) -> Option<(String, String)> {
    trace
        .verification
        .iter()
        .find(|v| v.summary.starts_with("INTERACTION"))
        .map(|v| (v.status.clone(), v.summary.clone()))
}

fn browser_installed() -> bool {
    std::path::Path::new("/usr/bin/chromium").exists()
}

#[tokio::test]
async fn a_working_handler_passes_in_the_browser_or_is_reported_not_run() {
    let (outcome, trace, ws) = turn(
        "document.getElementById('go').addEventListener('click', () => { document.getElementById('status').textContent = 'clicked'; });\n",
    )
    .await;
    assert!(ws.path().join("app.js").exists());
    let answer = &outcome.final_answer;
    if browser_installed() {
        assert_eq!(
            interaction(&trace).map(|(s, _)| s),
            Some("PASS".to_string()),
            "{trace:?}"
        );
        assert_eq!(
            outcome.classification,
            Classification::CompletedVerified,
            "{outcome:?}"
        );
    } else {
        assert!(
            answer.contains("not checked in a browser"),
            "without a browser the check is not run, not passed: {answer}"
        );
        assert_eq!(interaction(&trace), None, "{trace:?}");
        assert_eq!(
            outcome.classification,
            Classification::CompletedUnverified,
            "{outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_handler_that_changes_nothing_fails_in_the_browser() {
    let (outcome, trace, _ws) = turn(
        "document.getElementById('go').addEventListener('click', () => { console.log('clicked'); });\n",
    )
    .await;
    let answer = &outcome.final_answer;
    if browser_installed() {
        let (status, summary) = interaction(&trace).expect("an interaction verdict");
        assert_eq!(status, "FAIL", "{trace:?}");
        assert!(summary.contains("did not change #status"), "{summary}");
        assert!(
            answer.contains("clicking #go did not change #status in a headless browser"),
            "{answer}"
        );
        assert_eq!(outcome.status, CompletionStatus::Failed, "{outcome:?}");
    } else {
        assert!(answer.contains("not checked in a browser"), "{answer}");
        assert_eq!(
            outcome.classification,
            Classification::CompletedUnverified,
            "an interaction not run leaves the task unverified: {outcome:?}"
        );
    }
}

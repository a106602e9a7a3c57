//! The interaction check through the socket: a real headless chromium when one is installed
//! (CI installs Debian's), "not run" when none is. Never a pass without a browser.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

use serde_json::{Value, json};
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{TestDaemon, approve_all};

const PAGE: &str = "<!doctype html><html><head><title>Go</title></head><body><button id=\"go\">Go</button><p id=\"status\">idle</p><script src=\"app.js\"></script></body></html>\n";
const REQUEST: &str = "Create index.html and app.js so that clicking #go updates #status";

async fn turn(script: &str) -> (Value, Value, tempfile::TempDir) {
    let write = |path: &str, content: &str| {
        (
            "talos.write_file".to_string(),
            json!({"path": path, "content": content}).to_string(),
        )
    };
    let model = scripted(vec![
        Reply::ToolCalls(vec![write("index.html", PAGE)]),
        Reply::ToolCalls(vec![write("app.js", script)]),
        Reply::Text("Done: clicking Go updates the status.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (response, _) = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": REQUEST}),
            approve_all("approve"),
        )
        .await
        .unwrap();
    let outcome = response.result.unwrap();
    let trace = daemon.traces()[0].clone();
    daemon.stop().await;
    (outcome, trace, ws)
}

fn interaction(trace: &Value) -> Option<(String, String)> {
    trace["verification"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| {
            v["summary"]
                .as_str()
                .unwrap_or("")
                .starts_with("INTERACTION")
        })
        .map(|v| {
            (
                v["status"].as_str().unwrap().to_string(),
                v["summary"].as_str().unwrap().to_string(),
            )
        })
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
    let answer = outcome["finalAnswer"].as_str().unwrap();
    if browser_installed() {
        assert_eq!(
            interaction(&trace).map(|(s, _)| s),
            Some("PASS".to_string()),
            "{trace}"
        );
        assert_eq!(outcome["classification"], "COMPLETED_VERIFIED", "{outcome}");
    } else {
        assert!(
            answer.contains("not checked in a browser"),
            "without a browser the check is not run, not passed: {answer}"
        );
        assert_eq!(interaction(&trace), None, "{trace}");
        assert_eq!(
            outcome["classification"], "COMPLETED_UNVERIFIED",
            "{outcome}"
        );
    }
}

#[tokio::test]
async fn a_handler_that_changes_nothing_fails_in_the_browser() {
    let (outcome, trace, _ws) = turn(
        "document.getElementById('go').addEventListener('click', () => { console.log('clicked'); });\n",
    )
    .await;
    let answer = outcome["finalAnswer"].as_str().unwrap();
    if browser_installed() {
        let (status, summary) = interaction(&trace).expect("an interaction verdict");
        assert_eq!(status, "FAIL", "{trace}");
        assert!(summary.contains("did not change #status"), "{summary}");
        assert!(
            answer.contains("clicking #go did not change #status in a headless browser"),
            "{answer}"
        );
        assert_eq!(outcome["status"], "FAILED", "{outcome}");
    } else {
        assert!(answer.contains("not checked in a browser"), "{answer}");
        assert_eq!(
            outcome["classification"], "COMPLETED_UNVERIFIED",
            "an interaction not run leaves the task unverified: {outcome}"
        );
    }
}

//! The static web verifier through the socket (issue 12, item 7 and item 8's default web
//! targets): it runs on a turn that changed a page whatever words the request used, checks the
//! changed files and what they link to (not the rest of the site), reports a script no page
//! loads as unused rather than broken, and a site request takes the workspace's existing
//! `styles.css` instead of creating `style.css`. Native and text tool calls.

use serde_json::json;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, call, scripted};
use talos_tests::harness::TestDaemon;

/// A page whose `</div` is never closed, linking a stylesheet with a selector missing its dot.
const BROKEN_PAGE: &str = "<!doctype html><html><head><title>Home</title><link rel=\"stylesheet\" href=\"site.css\"></head>\n<body><div class=\"card\"><h1>Helo</h1></div\n</body></html>\n";
const SITE_CSS: &str = "card { padding: 1rem }\n";
/// Another page of the site with a problem of its own, which the turn never touches.
const OTHER_PAGE: &str = "<!doctype html><html><head><title>About</title></head><body><p id=\"x\">a</p><p id=\"x\">b</p></body></html>\n";

/// One agent-mode turn in `ws` with every approval granted.
async fn turn(
    ws: &std::path::Path,
    native: bool,
    steps: Vec<Reply>,
    prompt: &str,
) -> (TurnOutcome, TraceRecord) {
    let llama = FakeLlama::start(native, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, native)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws, "agent").await;
    let outcome = client.turn(&session, prompt, "approve").await;
    let trace = daemon.traces().into_iter().next().expect("a trace");
    daemon.stop().await;
    (outcome, trace)
}

/// Proves an edit of index.html asked for without any web word runs the check, which finds
/// the page's unterminated tag and its stylesheet's type selector, and never reports the
/// untouched about.html.
#[tokio::test]
async fn an_edit_of_a_page_runs_the_check_whatever_the_words() {
    for native in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("index.html"), BROKEN_PAGE).unwrap();
        std::fs::write(ws.path().join("site.css"), SITE_CSS).unwrap();
        std::fs::write(ws.path().join("about.html"), OTHER_PAGE).unwrap();
        let steps = vec![
            call(native, "talos.read_file", json!({"path": "index.html"})),
            call(
                native,
                "talos.edit_file",
                json!({"path": "index.html", "old_string": "<h1>Helo</h1>", "new_string": "<h1>Hello</h1>"}),
            ),
            Reply::Text("Fixed the heading; everything is fine.".into()),
        ];
        let (outcome, trace) = turn(
            ws.path(),
            native,
            steps,
            "Change the heading text from Helo to Hello",
        )
        .await;
        let disk = std::fs::read_to_string(ws.path().join("index.html")).unwrap();
        assert!(disk.contains("<h1>Hello</h1>"), "native {native}: {disk}");
        let answer = &outcome.final_answer;
        assert!(
            answer.contains("Static web diagnostics (checked by Talos, not the model) found:"),
            "native {native}: the check ran: {answer}"
        );
        assert!(
            answer.contains("the closing tag </div is never terminated by `>`"),
            "native {native}: {answer}"
        );
        assert!(
            answer.contains("names the element <card>") && answer.contains("missing `.`"),
            "native {native}: the linked stylesheet is checked: {answer}"
        );
        assert!(
            !answer.contains("about.html"),
            "native {native}: a page the turn did not touch is not checked: {answer}"
        );
        assert!(
            trace
                .verification
                .iter()
                .any(|v| v.status == "FAIL" && v.summary.starts_with("UNTERMINATED_CLOSING_TAG")),
            "native {native}: {trace:?}"
        );
        assert_ne!(
            outcome.status,
            CompletionStatus::Complete,
            "native {native}: a change the checks found broken is not complete: {outcome:?}"
        );
    }
}

/// Proves a script no page loads is reported as unused, and its lookups are not judged
/// against pages that never run it.
#[tokio::test]
async fn a_script_no_page_loads_is_reported_unused_not_broken() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("index.html"),
        "<!doctype html><html><head><title>Home</title></head><body><h1>Hello</h1></body></html>\n",
    )
    .unwrap();
    let steps = vec![
        call(
            true,
            "talos.write_file",
            json!({"path": "app.js", "content": "document.getElementById('nope').textContent = 'hi';\n"}),
        ),
        Reply::Text("Created app.js.".into()),
    ];
    let (outcome, _trace) =
        turn(ws.path(), true, steps, "Create app.js that sets a greeting").await;
    assert!(ws.path().join("app.js").exists());
    let answer = &outcome.final_answer;
    assert!(
        answer.contains("app.js: no page loads this script, so it has no effect"),
        "{answer}"
    );
    assert!(
        !answer.contains("#nope"),
        "an unused script's lookups are not judged: {answer}"
    );
}

/// Proves a site request in a workspace that already has `styles.css` changes that file and
/// never creates `style.css`, and the turn completes with the targets it reconciled.
#[tokio::test]
async fn default_site_targets_take_the_workspace_names() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("styles.css"), "body { margin: 0 }\n").unwrap();
    let page = "<!doctype html><html><head><title>T</title><link rel=\"stylesheet\" href=\"styles.css\"></head><body><h1 class=\"title\">Hi</h1><script src=\"script.js\"></script></body></html>\n";
    let steps = vec![
        call(
            true,
            "talos.write_file",
            json!({"path": "index.html", "content": page}),
        ),
        call(true, "talos.read_file", json!({"path": "styles.css"})),
        call(
            true,
            "talos.write_file",
            json!({"path": "styles.css", "content": "body { margin: 0 }\n.title { color: navy }\n"}),
        ),
        call(
            true,
            "talos.write_file",
            json!({"path": "script.js", "content": "document.querySelector('.title').textContent = 'Hello';\n"}),
        ),
        Reply::Text("Built the site.".into()),
    ];
    let (outcome, trace) = turn(
        ws.path(),
        true,
        steps,
        "Create a modern website with css and javascript",
    )
    .await;
    assert_eq!(
        trace.task_contract.expected_targets,
        vec!["index.html", "script.js", "styles.css"],
        "the trace lists them sorted: {trace:?}"
    );
    assert!(!ws.path().join("style.css").exists());
    assert!(
        std::fs::read_to_string(ws.path().join("styles.css"))
            .unwrap()
            .contains(".title")
    );
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
}

/// Proves a failed check after the last change gets one bounded repair in the same turn: the
/// model is told what failed and which files it may edit, a change of any other file is
/// refused before approval, the check runs again, and the turn ends on the second check's
/// result (COMPLETED_VERIFIED here), with WEB_REPAIR_RUN in the trace.
#[tokio::test]
async fn a_failed_check_gets_one_bounded_repair_and_is_checked_again() {
    for native in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let page = "<!doctype html><html><head><title>Home</title></head>\n<body><div><h1>Helo</h1></div>\n</body></html>\n";
        std::fs::write(ws.path().join("index.html"), page).unwrap();
        std::fs::write(ws.path().join("about.html"), OTHER_PAGE).unwrap();
        let steps = vec![
            call(native, "talos.read_file", json!({"path": "index.html"})),
            // The change breaks the closing tag: the check fails after the last target changed.
            call(
                native,
                "talos.edit_file",
                json!({"path": "index.html", "old_string": "<h1>Helo</h1></div>", "new_string": "<h1>Hello</h1></div"}),
            ),
            // The repair round: a change outside the repair is refused, then the fix.
            call(
                native,
                "talos.write_file",
                json!({"path": "about.html", "content": "<p>gone</p>\n"}),
            ),
            call(
                native,
                "talos.edit_file",
                json!({"path": "index.html", "old_string": "<h1>Hello</h1></div\n", "new_string": "<h1>Hello</h1></div>\n"}),
            ),
            Reply::Text("unused".into()),
        ];
        let llama = FakeLlama::start(native, scripted(steps)).await;
        let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, native)).await;
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        let outcome = client
            .turn(
                &session,
                "Fix the typo in the heading of index.html",
                "approve",
            )
            .await;
        let trace = daemon.traces().into_iter().next().expect("a trace");
        daemon.stop().await;
        let disk = std::fs::read_to_string(ws.path().join("index.html")).unwrap();
        assert_eq!(disk, page.replace("Helo", "Hello"), "native {native}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("about.html")).unwrap(),
            OTHER_PAGE,
            "native {native}: the repair may not touch another file"
        );
        let requests = llama.requests();
        assert_eq!(
            requests.len(),
            4,
            "native {native}: read, edit, two repair calls"
        );
        let repair_prompt = requests[2]["messages"].to_string();
        assert!(
            repair_prompt.contains("Talos checked the files you changed and found problems")
                && repair_prompt.contains("You may edit only these files: index.html"),
            "native {native}: {repair_prompt}"
        );
        assert!(
            trace.warnings.iter().any(|w| w.code == "WEB_REPAIR_RUN"),
            "native {native}: {:?}",
            trace.warnings
        );
        assert!(
            trace
                .tool_calls
                .iter()
                .any(|c| c.stage == "rejected" && c.path_hint.as_deref() == Some("about.html")),
            "native {native}: {:?}",
            trace.tool_calls
        );
        assert_eq!(
            (outcome.status, outcome.classification),
            (
                CompletionStatus::Complete,
                talos_protocol::Classification::CompletedVerified
            ),
            "native {native}: {outcome:?}"
        );
        assert!(
            !outcome.final_answer.contains("never terminated"),
            "native {native}: the second check's result stands: {}",
            outcome.final_answer
        );
    }
}

//! Issue 12 through the socket, with scripted models that err in one way each, native and
//! text calls: a partial change then "all done", a refused call on a target the request does
//! not need then success, an edit without a read that matches once, a verify turn saying "no
//! problems" while the checks find some, and a read-only turn whose model also tried to change
//! a file. Each asserts the disk, the status and classification, and the answer text.

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, call, scripted};
use talos_tests::harness::{TestDaemon, approvals, approve_all, timeout_workspace};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const UNCHANGED: &str = "TIMEOUT = 30\nRETRIES = 3\n";
const CHANGED: &str = "TIMEOUT = 60\nRETRIES = 3\n";

fn read(native: bool, path: &str) -> Reply {
    call(native, "talos.read_file", json!({"path": path}))
}

fn write(native: bool, path: &str, content: &str) -> Reply {
    call(
        native,
        "talos.write_file",
        json!({"path": path, "content": content}),
    )
}

fn edit(native: bool, old: &str, new: &str) -> Reply {
    call(
        native,
        "talos.edit_file",
        json!({"path": "settings.py", "old_string": old, "new_string": new}),
    )
}

/// One turn: what the person saw, the trace, and every request the model received.
struct Run {
    outcome: TurnOutcome,
    approvals: usize,
    trace: TraceRecord,
    requests: Vec<Value>,
}

async fn run(
    ws: &std::path::Path,
    native: bool,
    mode: &str,
    steps: Vec<Reply>,
    prompt: &str,
) -> Run {
    let llama = FakeLlama::start(native, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, native)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws, mode).await;
    let (outcome, seen) = client
        .turn_with(&session, prompt, approve_all("approve"))
        .await;
    let trace = daemon.traces().pop().unwrap();
    daemon.stop().await;
    Run {
        outcome,
        approvals: approvals(&seen).len(),
        trace,
        requests: llama.requests(),
    }
}

fn has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} not in {text}");
}

fn lacks(text: &str, part: &str) {
    assert!(!text.contains(part), "{part:?} in {text}");
}

#[tokio::test]
async fn a_partial_change_then_all_done_is_partial_and_the_claim_is_corrected() {
    for native in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let steps = vec![
            write(native, "alpha.txt", "hello\n"),
            write(native, "beta.txt", "hello\n"),
            Reply::Text("Done! I created all three files.".into()),
        ];
        let prompt = "Create alpha.txt, beta.txt and gamma.txt, each containing the word hello";
        let r = run(ws.path(), native, "agent", steps, prompt).await;
        assert!(ws.path().join("alpha.txt").exists() && ws.path().join("beta.txt").exists());
        assert!(!ws.path().join("gamma.txt").exists());
        assert_eq!(
            r.outcome.status,
            CompletionStatus::Partial,
            "native={native}"
        );
        assert_eq!(r.outcome.classification, Classification::Partial);
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with(
                "[Truth check: the task is only partly done: 2 of 3 required file(s) changed."
            ),
            "native={native}: {answer}"
        );
        lacks(answer, "Done!");
        has(answer, "- alpha.txt: changed and verified");
        has(answer, "- gamma.txt: not attempted");
        has(answer, "Remaining target(s): gamma.txt");
    }
}

#[tokio::test]
async fn a_refused_call_on_an_unneeded_target_then_success_is_complete_and_reported() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            write(native, "notes.txt", "scratch\n"),
            read(native, "settings.py"),
            edit(native, "TIMEOUT = 30", "TIMEOUT = 60"),
            Reply::Text("Done. TIMEOUT is now 60.".into()),
        ];
        let r = run(ws.path(), native, "agent", steps, EDIT_REQUEST).await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            CHANGED
        );
        assert!(!ws.path().join("notes.txt").exists());
        assert_eq!(r.approvals, 1, "the refused call asked nothing");
        assert_eq!(
            r.outcome.status,
            CompletionStatus::Complete,
            "native={native}: {:?}",
            r.outcome
        );
        assert_eq!(r.outcome.classification, Classification::CompletedVerified);
        let answer = &r.outcome.final_answer;
        has(
            answer,
            "Per-file results (from Talos's records, not the model):",
        );
        has(answer, "- notes.txt: refused: ");
        has(answer, "(not needed by the request)");
        has(answer, "- settings.py: changed and verified");
        lacks(answer, "Truth check");
        assert_eq!(
            r.trace.outcome.classification,
            Classification::CompletedVerified
        );
    }
}

#[tokio::test]
async fn an_edit_without_a_read_that_matches_once_runs_with_the_hint() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            edit(native, "TIMEOUT = 30", "TIMEOUT = 60"),
            Reply::Text("Changed TIMEOUT to 60.".into()),
        ];
        // Asking for an explanation keeps the model's final answer (so it reads the result).
        let request = "In settings.py, change TIMEOUT from 30 to 60 and tell me what you changed.";
        let r = run(ws.path(), native, "agent", steps, request).await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            CHANGED,
            "native={native}"
        );
        assert_eq!(r.approvals, 1);
        assert_eq!(r.outcome.classification, Classification::CompletedVerified);
        assert_eq!(r.outcome.final_answer, "Changed TIMEOUT to 60.");
        has(
            &r.requests[1]["messages"].to_string(),
            "Hint: You did not read this file before editing. Call talos.read_file first",
        );
    }
}

#[tokio::test]
async fn an_edit_without_a_read_that_does_not_match_is_told_to_read_first() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            edit(native, "TIMEOUT = 45", "TIMEOUT = 60"),
            read(native, "settings.py"),
            edit(native, "TIMEOUT = 30", "TIMEOUT = 60"),
            Reply::Text("Done.".into()),
        ];
        let r = run(ws.path(), native, "agent", steps, EDIT_REQUEST).await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            CHANGED
        );
        assert_eq!(r.approvals, 1, "the unmatched edit asked nothing");
        has(
            &r.requests[1]["messages"].to_string(),
            "Read settings.py with talos.read_file before editing it",
        );
        assert_eq!(
            r.outcome.classification,
            Classification::CompletedVerified,
            "native={native}: the target ended changed and verified"
        );
    }
}

/// Proves the read-before-write rule is kept: a full write replacing an existing file not read
/// this turn is refused before approval with read-first, and the write after the read runs.
#[tokio::test]
async fn a_full_write_of_an_unread_file_is_told_to_read_first() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            write(native, "settings.py", CHANGED),
            read(native, "settings.py"),
            write(native, "settings.py", CHANGED),
            Reply::Text("Done.".into()),
        ];
        // A request with no small change to check: a whole-file write is a fair proposal, and
        // nothing in the request can be checked beyond the read-back.
        let request = "Rewrite settings.py so TIMEOUT is 60.";
        let r = run(ws.path(), native, "agent", steps, request).await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            CHANGED,
            "native={native}"
        );
        assert_eq!(
            r.approvals, 1,
            "native={native}: the unread write asked nothing"
        );
        has(
            &r.requests[1]["messages"].to_string(),
            "settings.py already exists and was not read in this turn. Read settings.py with talos.read_file before replacing it",
        );
        assert_eq!(
            r.outcome.classification,
            Classification::CompletedUnverified,
            "native={native}"
        );
    }
}

#[tokio::test]
async fn a_verify_turn_saying_no_problems_while_the_checks_find_some_is_replaced() {
    for native in [true, false] {
        let ws = selector_site();
        let steps = vec![
            read(native, "index.html"),
            read(native, "styles.css"),
            Reply::Text(
                "No problems: the stylesheet is wired correctly. It styles one element. The rule for #missing is in styles.css.".into(),
            ),
        ];
        let prompt = "Verify that the selectors in styles.css match the ids in index.html";
        let r = run(ws.path(), native, "ask", steps, prompt).await;
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with("[Verification check: the model's verdict was removed because Talos's own checks found"),
            "native={native}: {answer}"
        );
        lacks(answer, "No problems");
        lacks(answer, "wired correctly");
        // Only what names a finding's file, selector or id stands (issue 27).
        lacks(answer, "It styles one element.");
        has(answer, "The rule for #missing is in styles.css.");
        has(
            answer,
            "Static web diagnostics (checked by Talos, not the model) found:",
        );
        has(answer, "missing");
        assert!(
            r.trace
                .warnings
                .iter()
                .any(|w| w.code == "CLEAN_VERDICT_CONTRADICTED"),
            "{:?}",
            r.trace.warnings
        );
        assert_ne!(r.outcome.classification, Classification::CompletedVerified);
        assert_eq!(
            std::fs::read_to_string(ws.path().join("styles.css")).unwrap(),
            "#missing { color: red; }\n"
        );
    }
}

/// A page whose stylesheet styles an id the page does not have.
fn selector_site() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("index.html"),
        "<html><head><link rel=\"stylesheet\" href=\"styles.css\"></head><body><p id=\"status\">x</p></body></html>\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("styles.css"), "#missing { color: red; }\n").unwrap();
    ws
}

/// Proves a verdict in words no list knows ("Splendid work") that admits no problem and names
/// no file the findings are in is still removed on a verify turn whose checks found problems.
#[tokio::test]
async fn a_verdict_in_other_words_is_removed_when_the_checks_find_problems() {
    for native in [true, false] {
        let ws = selector_site();
        let steps = vec![
            read(native, "index.html"),
            read(native, "styles.css"),
            Reply::Text("Splendid work overall, ship it.".into()),
        ];
        let prompt = "Verify that the selectors in styles.css match the ids in index.html";
        let r = run(ws.path(), native, "ask", steps, prompt).await;
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with(
                "[Verification check: Talos's own checks found 1 problem (listed below); the model's text that names none"
            ),
            "native={native}: {answer}"
        );
        lacks(answer, "Splendid");
        has(answer, "missing");
    }
}

#[tokio::test]
async fn a_read_only_turn_that_blocked_an_unsolicited_change_keeps_its_answer() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            read(native, "settings.py"),
            write(native, "settings.py", "TIMEOUT = 60\n"),
            Reply::Text("settings.py sets TIMEOUT to 30 and RETRIES to 3.".into()),
        ];
        let r = run(
            ws.path(),
            native,
            "agent",
            steps,
            "What does settings.py set?",
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
            UNCHANGED
        );
        assert_eq!(r.approvals, 0);
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with("settings.py sets TIMEOUT to 30 and RETRIES to 3."),
            "native={native}: {answer}"
        );
        has(
            answer,
            "[Note: the model also tried to change files, but this turn only answers your question, so Talos blocked the change",
        );
        assert_eq!(r.outcome.status, CompletionStatus::Complete);
        assert_eq!(r.outcome.classification, Classification::ReadOnlyAnswered);
        assert!(
            r.trace.tool_calls.iter().any(|c| c
                .rejection
                .as_deref()
                .is_some_and(|x| x.contains("talos.write_file"))),
            "the block is recorded: {:?}",
            r.trace.tool_calls
        );
    }
}

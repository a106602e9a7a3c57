//! Answers decided from records (issue 27, items 1 and 2), end to end through the socket with
//! a scripted model: a diagnosis whose checks found problems keeps only the model's sentences
//! about what the findings are about; a turn the records call a capability denial keeps none
//! of the model's text; a claim opened by a past-tense change verb on a partly done turn is
//! taken as the claim it is.

use talos_protocol::{Classification, CompletionStatus};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted, write_call};
use talos_tests::harness::{TestDaemon, agent_turn};

#[tokio::test]
async fn a_diagnosis_keeps_only_what_names_a_finding() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("index.html"),
        "<html><body><button class=\"cta-button\">Go</button><script src=\"app.js\"></script></body></html>\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("app.js"),
        "document.getElementById('start').addEventListener('click', () => {});\n",
    )
    .unwrap();
    let model = scripted(vec![
        read_call("index.html"),
        read_call("app.js"),
        Reply::Text(
            "The class `cta-button` is present in both HTML and JavaScript. This response should not be reached. No further action is needed."
                .into(),
        ),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let outcome = client
        .turn(
            &session,
            "Verify that the ids app.js uses match index.html",
            "deny",
        )
        .await;
    let answer = &outcome.final_answer;
    assert!(
        answer.starts_with("[Verification check: Talos's own checks found"),
        "{answer}"
    );
    for gone in ["cta-button", "should not be reached", "No further action"] {
        assert!(!answer.contains(gone), "{gone:?} kept: {answer}");
    }
    assert!(answer.contains("#start"), "the findings follow: {answer}");
}

#[tokio::test]
async fn a_capability_denial_keeps_none_of_the_models_text() {
    let ws = tempfile::tempdir().unwrap();
    let model = scripted(vec![Reply::Text(
        "I still do not have access to the underlying file system. Here is a recipe instead: flour, water."
            .into(),
    )]);
    let run = agent_turn(ws.path(), model, "Create notes.txt with a shopping list").await;
    let answer = &run.outcome.final_answer;
    assert!(answer.starts_with("[Capability correction:"), "{answer}");
    assert!(!answer.contains("recipe"), "{answer}");
    assert!(!answer.contains("do not have access"), "{answer}");
    assert!(!ws.path().join("notes.txt").exists());
}

#[tokio::test]
async fn a_past_tense_claim_on_a_partly_done_turn_is_corrected() {
    let ws = tempfile::tempdir().unwrap();
    let model = scripted(vec![
        write_call("index.html", "<html><body><h1>BMI</h1></body></html>\n"),
        Reply::Text("Created the BMI calculator website files.".into()),
    ]);
    let run = agent_turn(
        ws.path(),
        model,
        "Create index.html and style.css for a BMI calculator",
    )
    .await;
    let answer = &run.outcome.final_answer;
    assert_eq!(
        run.outcome.classification,
        Classification::Partial,
        "{answer}"
    );
    assert!(!answer.contains("Created the BMI calculator"), "{answer}");
    assert!(
        answer.contains("style.css"),
        "what is left is named: {answer}"
    );
}

fn edit(old: &str, new: &str) -> (String, String) {
    (
        "talos.edit_file".into(),
        serde_json::json!({"path": "settings.py", "old_string": old, "new_string": new})
            .to_string(),
    )
}

/// Proves every call of one reply is judged in the phase the reply was made in (issue 27,
/// item 4): two edits of settings.py in one reply both land, though the first already changed
/// the only target.
#[tokio::test]
async fn two_edits_in_one_reply_both_land() {
    let ws = talos_tests::harness::timeout_workspace();
    let model = scripted(vec![
        Reply::ToolCalls(vec![
            edit("TIMEOUT = 30", "TIMEOUT = 60"),
            edit("RETRIES = 3", "RETRIES = 5"),
        ]),
        Reply::Text("Both set.".into()),
    ]);
    let run = agent_turn(
        ws.path(),
        model,
        "In settings.py, change TIMEOUT to 60 and RETRIES to 5.",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 5\n",
        "{:?}",
        run.outcome
    );
    // Both landed: the turn is complete, not PARTIAL (whether it is verified depends on the
    // request's own checks, which "change KEY to VALUE" may or may not give).
    assert_eq!(
        run.outcome.status,
        CompletionStatus::Complete,
        "{:?}",
        run.outcome
    );
}

/// Proves a failed change after a success on the same target still counts: the turn is
/// PARTIAL, not COMPLETED_VERIFIED.
#[tokio::test]
async fn a_failed_edit_after_a_success_on_the_target_makes_the_turn_partial() {
    let ws = talos_tests::harness::timeout_workspace();
    let model = scripted(vec![
        Reply::ToolCalls(vec![
            edit("TIMEOUT = 30", "TIMEOUT = 60"),
            edit("RETRIES = 9", "RETRIES = 5"),
        ]),
        Reply::Text("Both set.".into()),
    ]);
    let run = agent_turn(
        ws.path(),
        model,
        "In settings.py, change TIMEOUT to 60 and RETRIES to 5.",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n"
    );
    assert_eq!(
        run.outcome.classification,
        Classification::Partial,
        "{:?}",
        run.outcome
    );
}

/// Proves the same call twice in one reply is run once: the copy is answered, not applied or
/// counted as a failure, and the turn is COMPLETED_VERIFIED with one approval.
#[tokio::test]
async fn the_same_edit_twice_in_one_reply_runs_once() {
    let ws = talos_tests::harness::timeout_workspace();
    let model = scripted(vec![
        Reply::ToolCalls(vec![
            edit("TIMEOUT = 30", "TIMEOUT = 60"),
            edit("TIMEOUT = 30", "TIMEOUT = 60"),
        ]),
        Reply::Text("Set.".into()),
    ]);
    let run = agent_turn(
        ws.path(),
        model,
        "In settings.py, change TIMEOUT from 30 to 60.",
    )
    .await;
    assert_eq!(
        run.outcome.classification,
        Classification::CompletedVerified,
        "{:?}",
        run.outcome
    );
    assert_eq!(run.trace.approvals.len(), 1, "{:?}", run.trace.approvals);
}

/// Proves a refusal after an approved protected read says why its content is not shown, and
/// points to `--mode private` (issue 27, item 5).
#[tokio::test]
async fn a_refusal_after_an_approved_protected_read_says_why() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join(".env"), "API_KEY=abcdefgh1234\n").unwrap();
    let model = scripted(vec![
        read_call(".env"),
        Reply::Text("I can't share the contents of .env.".into()),
    ]);
    let run = agent_turn(ws.path(), model, "Show me what is in .env").await;
    let answer = &run.outcome.final_answer;
    assert!(
        answer.contains("its contents are withheld from answers")
            && answer.contains("`--mode private`"),
        "{answer}"
    );
    assert!(!answer.contains("abcdefgh1234"), "{answer}");
}

/// Proves a status question after an unfinished turn says what is left, from the records.
#[tokio::test]
async fn a_status_answer_says_what_is_left() {
    let ws = talos_tests::harness::timeout_workspace();
    let model = scripted(vec![
        Reply::ToolCalls(vec![edit("TIMEOUT = 30", "TIMEOUT = 60")]),
        Reply::Text("Done.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let denied = client
        .turn(
            &session,
            "In settings.py, change TIMEOUT from 30 to 60.",
            "deny",
        )
        .await;
    assert_eq!(denied.classification, Classification::BlockedByApproval);
    let status = client
        .turn(&session, "Did you make the change?", "deny")
        .await;
    assert!(
        status.final_answer.contains("Left to do: settings.py."),
        "{}",
        status.final_answer
    );
}

/// Proves a partly done change whose checks also found problems gets both guards: the claim of
/// completion is corrected and what is left is named.
#[tokio::test]
async fn a_partial_change_with_findings_is_still_held_to_what_is_left() {
    let ws = tempfile::tempdir().unwrap();
    let model = scripted(vec![
        write_call(
            "index.html",
            "<html><body><button id=\"go\">Go</button><script src=\"app.js\"></script></body></html>\n",
        ),
        write_call(
            "app.js",
            "document.getElementById('start').addEventListener('click', () => {});\n",
        ),
        Reply::Text("All done! I created all three files and everything works.".into()),
    ]);
    let run = agent_turn(
        ws.path(),
        model,
        "Create index.html, app.js and style.css for a start button",
    )
    .await;
    let answer = &run.outcome.final_answer;
    assert_eq!(
        run.outcome.classification,
        Classification::Partial,
        "{answer}"
    );
    assert!(
        answer.starts_with("[Truth check: the task is only partly done"),
        "{answer}"
    );
    assert!(!answer.contains("All done"), "{answer}");
    assert!(answer.contains("style.css"), "{answer}");
    assert!(
        answer.contains("#start"),
        "the checks' finding follows: {answer}"
    );
}

/// Proves a document whose text could not be extracted is carried to the outcome (issue 27,
/// item 3): the turn that named only it ends ADVISORY_ONLY with the document note once the
/// runtime's read found it, without a model call and without reading files nobody named.
#[tokio::test]
async fn a_document_that_could_not_be_extracted_ends_the_turn_with_the_note() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("report.pdf"),
        b"%PDF-1.4 this is not a real pdf\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("notes.txt"), "unrelated\n").unwrap();
    let model = scripted(vec![
        read_call("report.pdf"),
        read_call("notes.txt"),
        Reply::Text("The report is empty.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let outcome = client.turn(&session, "Summarize report.pdf", "deny").await;
    let answer = &outcome.final_answer;
    assert_eq!(
        outcome.classification,
        Classification::AdvisoryOnly,
        "{answer}"
    );
    assert!(
        answer.contains(
            "report.pdf (its text could not be extracted, so its contents were not seen)"
        ),
        "{answer}"
    );
    // The runtime's own read (the pre-read) found the document unreadable: no model call.
    assert_eq!(
        llama.requests().len(),
        0,
        "no model call after the failed extraction"
    );
    let trace = daemon.traces().pop().unwrap();
    assert!(
        !trace
            .executions
            .iter()
            .any(|e| e.path.as_deref() == Some("notes.txt")),
        "no file nobody named is read"
    );
}

/// The same when the model reads the document itself (the runtime's pre-read off): one model
/// call, then the note.
#[tokio::test]
async fn a_document_the_model_read_but_could_not_be_extracted_ends_the_turn() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("report.pdf"),
        b"%PDF-1.4 this is not a real pdf\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("notes.txt"), "unrelated\n").unwrap();
    let model = scripted(vec![
        read_call("report.pdf"),
        read_call("notes.txt"),
        Reply::Text("The report is empty.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "ask").await;
    let outcome = client.turn(&session, "Summarize report.pdf", "deny").await;
    let answer = &outcome.final_answer;
    assert_eq!(
        outcome.classification,
        Classification::AdvisoryOnly,
        "{answer}"
    );
    assert!(answer.contains("its contents were not seen"), "{answer}");
    assert!(!answer.contains("The report is empty."), "{answer}");
    assert_eq!(llama.requests().len(), 1, "no second model call");
}

/// Proves a repair follow-up does not inherit the targets the previous turn already changed
/// (issue 27, item 5): after index.html and app.js were written and style.css was not, "fix
/// the remaining problems" is a turn about style.css.
#[tokio::test]
async fn a_repair_follow_up_works_on_what_is_left() {
    let ws = tempfile::tempdir().unwrap();
    let model = std::sync::Arc::new(|request: &serde_json::Value| {
        let text = request.to_string();
        let results = text.matches("[tool_result:").count();
        if text.contains("fix the remaining problems") {
            return if results > 0 {
                Reply::Text("style.css is there now.".into())
            } else {
                write_call("style.css", "button { color: blue; }\n")
            };
        }
        match results {
            0 => write_call(
                "index.html",
                "<html><head><title>Start</title></head><body><button id=\"go\">Go</button><script src=\"app.js\"></script></body></html>\n",
            ),
            1 => write_call(
                "app.js",
                "document.getElementById('go').addEventListener('click', () => {});\n",
            ),
            _ => Reply::Text("Done.".into()),
        }
    });
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client
        .turn(
            &session,
            "Create index.html, app.js and style.css for a start button",
            "approve",
        )
        .await;
    assert_eq!(first.classification, Classification::Partial, "{first:?}");
    let second = client
        .turn(&session, "fix the remaining problems", "approve")
        .await;
    let trace = daemon
        .traces()
        .into_iter()
        .find(|t| t.trace_id == second.trace_id)
        .unwrap();
    assert_eq!(
        trace.task_contract.expected_targets,
        ["style.css"],
        "{:?}",
        trace.task_contract
    );
    assert!(ws.path().join("style.css").exists(), "{second:?}");
}

/// A repair follow-up's fix may go in the file that can carry it, not only the file a finding
/// is filed under: "scripts.js: no page loads this script" is fixed in index.html, which the
/// previous turn wrote; the rewrite is allowed and the repaired site is verified.
#[tokio::test]
async fn a_repair_may_fix_a_finding_in_the_file_that_carries_the_fix() {
    let ws = tempfile::tempdir().unwrap();
    let page =
        "<html><head><title>Hi</title></head><body><h1 id=\"greeting\">Hello</h1></body></html>\n";
    let model = std::sync::Arc::new(move |request: &serde_json::Value| {
        let text = request.to_string();
        let results = text.matches("[tool_result:").count();
        if let Some(at) = text.rfind("fix the remaining problems") {
            return match text[at..].matches("[tool_result:").count() {
                0 => read_call("index.html"),
                1 => write_call(
                    "index.html",
                    "<html><head><title>Hi</title></head><body><h1 id=\"greeting\">Hello</h1><script src=\"scripts.js\"></script></body></html>\n",
                ),
                _ => Reply::Text("index.html now loads scripts.js.".into()),
            };
        }
        match results {
            0 => write_call("index.html", page),
            1 => write_call(
                "scripts.js",
                "document.getElementById('greeting').textContent = 'Hi there';\n",
            ),
            _ => Reply::Text("Done.".into()),
        }
    });
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let first = client
        .turn(
            &session,
            "Create index.html and scripts.js for a greeting",
            "approve",
        )
        .await;
    assert_ne!(
        first.classification,
        Classification::CompletedVerified,
        "{first:?}"
    );
    let second = client
        .turn(&session, "fix the remaining problems", "approve")
        .await;
    let index = std::fs::read_to_string(ws.path().join("index.html")).unwrap();
    assert!(index.contains("<script src=\"scripts.js\">"), "{second:?}");
    assert_eq!(
        second.classification,
        Classification::CompletedVerified,
        "{second:?}"
    );
    daemon.stop().await;
}

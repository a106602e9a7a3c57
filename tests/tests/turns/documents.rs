//! Documents the text tools cannot read (doc, xls, ppt: formats Talos does not extract; pdf,
//! docx and xlsx text is extracted since issue 16, see turns/index.rs): an honest capability
//! note, an ADVISORY_ONLY outcome, and no speculative reads of other files.

use talos_protocol::{Classification, CompletionStatus};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, agent_turn};

#[tokio::test]
async fn a_legacy_document_question_gets_a_capability_note_and_no_guessing() {
    // A model that would read the neighbouring notes and make up a summary.
    let model = scripted(vec![
        read_call("notes.txt"),
        Reply::Text("The report says revenue grew 40%.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("report.doc"), b"\xd0\xcf\x11\xe0binary").unwrap();
    std::fs::write(ws.path().join("notes.txt"), "unrelated notes\n").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    for prompt in [
        "Summarize report.doc",
        "What does the table in budget.xls say about Q3?",
        "Explain the main points of proposal.ppt",
    ] {
        let outcome = client.turn(&session, prompt, "approve").await;
        let answer = &outcome.final_answer;
        assert!(
            answer.starts_with("[Capability note: Talos's file tools read text files; they cannot extract the text of"),
            "{prompt}: {answer}"
        );
        assert!(!answer.contains("40%"), "no made-up summary: {answer}");
        assert_eq!(
            outcome.status,
            CompletionStatus::AdvisoryOnly,
            "{prompt}: {outcome:?}"
        );
        assert_eq!(
            outcome.classification,
            Classification::AdvisoryOnly,
            "{outcome:?}"
        );
    }
    assert!(
        llama.requests().is_empty(),
        "the model is not asked to guess, so nothing else is read"
    );
    let traces = daemon.traces();
    assert_eq!(traces.len(), 3);
    for trace in &traces {
        assert!(trace.tool_calls.is_empty(), "{trace:?}");
        assert!(
            trace
                .warnings
                .iter()
                .any(|w| w.code == "DOCUMENT_NOT_READABLE"),
            "{trace:?}"
        );
    }
    daemon.stop().await;
}

#[tokio::test]
async fn a_text_file_next_to_a_pdf_is_still_read_normally() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "unrelated notes\n").unwrap();
    let model = scripted(vec![
        read_call("notes.txt"),
        Reply::Text("The notes are unrelated.".into()),
    ]);
    let run = agent_turn(ws.path(), model, "Summarize notes.txt").await;
    assert_eq!(
        run.outcome.status,
        CompletionStatus::Complete,
        "{:?}",
        run.outcome
    );
    assert!(!run.requests.is_empty());
}

#[tokio::test]
async fn a_read_of_a_broken_pdf_returns_a_capability_note_not_its_bytes() {
    let ws = tempfile::tempdir().unwrap();
    // No NUL byte in the first 8000 bytes: the binary sniff alone would show this.
    std::fs::write(
        ws.path().join("report.pdf"),
        "%PDF-1.7\nSECRET-STREAM-TEXT\n",
    )
    .unwrap();
    let model = scripted(vec![
        read_call("report.pdf"),
        Reply::Text("I could not read it.".into()),
    ]);
    let run = agent_turn(ws.path(), model, "Create summary.md from report.pdf").await;
    let sent = serde_json::to_string(&run.requests).unwrap();
    assert!(
        sent.contains("report.pdf is a binary document"),
        "the model is told the document cannot be read: {sent}"
    );
    assert!(!sent.contains("SECRET-STREAM-TEXT"), "{sent}");
    assert!(!ws.path().join("summary.md").exists());
}

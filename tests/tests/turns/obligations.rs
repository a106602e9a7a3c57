//! Issue 12 items 1, 3 and 5, and two of item 8's bullets, through the socket with scripted
//! models that err in one way each, native and text calls:
//! - a model that refuses a change, or pastes code, is re-prompted once (the re-prompt names
//!   the change and the tools); a second failure ends in the runtime's statement, never
//!   COMPLETE or READ_ONLY_ANSWERED, and the retry is in the trace;
//! - a workspace question answered without reading is re-prompted once for the file; answered
//!   unread again, the answer says what was not inspected;
//! - on these turns no answer text streams before the guards decided (the corrected text never
//!   reaches the client), while chat turns stream as they always did;
//! - an edit turn ends after the verified change without another model call;
//! - a listing turn whose answer invents files answers from the listing;
//! - a protected read the person approved, echoed by the model, is withheld with the reason.

use serde_json::{Value, json};
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, call, scripted};
use talos_tests::harness::{TestDaemon, approve_all, events, timeout_workspace};

const CREATE: &str = "Create notes.md containing the line hello";

/// One turn: the outcome, the events in order, the trace and every model request.
struct Run {
    outcome: TurnOutcome,
    events: Vec<TurnEvent>,
    trace: TraceRecord,
    requests: Vec<Value>,
}

async fn run(ws: &std::path::Path, native: bool, steps: Vec<Reply>, prompt: &str) -> Run {
    let llama = FakeLlama::start(native, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, native)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws, "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, prompt, approve_all("approve"))
        .await;
    let trace = daemon.traces().pop().unwrap();
    daemon.stop().await;
    Run {
        outcome,
        events: events(&seen).into_iter().map(|e| e.event).collect(),
        trace,
        requests: llama.requests(),
    }
}

/// The text streamed to the client, in order.
fn streamed(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::StreamChunk { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The index of the first stream chunk, and of the last event that is not part of the answer
/// stream or the outcome (tool progress, approvals, ...).
fn answer_after_work(events: &[TurnEvent]) -> bool {
    let first_chunk = events
        .iter()
        .position(|e| matches!(e, TurnEvent::StreamChunk { .. }));
    let last_work = events.iter().rposition(|e| {
        !matches!(
            e,
            TurnEvent::StreamStart { .. }
                | TurnEvent::StreamChunk { .. }
                | TurnEvent::StreamEnd { .. }
                | TurnEvent::Outcome { .. }
        )
    });
    match (first_chunk, last_work) {
        (Some(chunk), Some(work)) => chunk > work,
        _ => true,
    }
}

fn retries(trace: &TraceRecord) -> usize {
    trace
        .warnings
        .iter()
        .filter(|w| w.code == "OBLIGATION_RETRY")
        .count()
}

/// Proves a refusal on a create request is re-prompted once with the change and the tools
/// named, the retry's call makes the file, the refusal never streams, and the retry is
/// counted in the trace's outcome.
#[tokio::test]
async fn a_refused_change_is_reprompted_once_and_then_made() {
    for native in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let steps = vec![
            Reply::Text("I'm sorry, I can't create files on your computer.".into()),
            call(
                native,
                "talos.write_file",
                json!({"path": "notes.md", "content": "hello\n"}),
            ),
            Reply::Text("unused: the runtime writes the summary".into()),
        ];
        let r = run(ws.path(), native, steps, CREATE).await;
        assert_eq!(
            std::fs::read_to_string(ws.path().join("notes.md")).unwrap(),
            "hello\n",
            "native {native}"
        );
        assert_eq!(
            r.requests.len(),
            2,
            "native {native}: refusal, then the call"
        );
        let reprompt = r.requests[1]["messages"].to_string();
        assert!(
            reprompt.contains("this request requires a change that has not been made: notes.md")
                && reprompt.contains("talos.write_file"),
            "native {native}: {reprompt}"
        );
        // Content given in words is not yet a rule: nothing in the request could be checked.
        assert_eq!(
            (r.outcome.status, r.outcome.classification),
            (
                CompletionStatus::Complete,
                Classification::CompletedUnverified
            ),
            "native {native}: {:?}",
            r.outcome
        );
        assert!(!r.outcome.final_answer.contains("can't"), "native {native}");
        assert!(
            !streamed(&r.events).contains("can't"),
            "native {native}: the refusal never reached the client"
        );
        assert_eq!(retries(&r.trace), 1, "native {native}");
        assert_eq!(r.trace.outcome.obligation_retries, 1, "native {native}");
    }
}

/// Proves a model that pastes code instead of calling a tool twice ends with the runtime's
/// statement of what was not done (never COMPLETE or READ_ONLY_ANSWERED), with one retry
/// only, and that nothing of the model's claim streamed first.
#[tokio::test]
async fn a_change_not_made_after_the_retry_is_stated_by_the_runtime() {
    for native in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let steps = vec![
            Reply::Text("Here is notes.md:\n\n```\nhello\n```\nI have created the file.".into()),
            Reply::Text("Done! notes.md now contains hello.".into()),
            Reply::Text("unused".into()),
        ];
        let r = run(ws.path(), native, steps, CREATE).await;
        assert!(!ws.path().join("notes.md").exists(), "native {native}");
        assert_eq!(r.requests.len(), 2, "native {native}: one retry, no more");
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with("[Action not taken:")
                || answer.starts_with("[Capability correction:"),
            "native {native}: {answer}"
        );
        assert!(!answer.contains("Done!"), "native {native}: {answer}");
        assert_ne!(
            r.outcome.status,
            CompletionStatus::Complete,
            "native {native}"
        );
        assert!(
            !matches!(
                r.outcome.classification,
                Classification::ReadOnlyAnswered | Classification::CompletedVerified
            ),
            "native {native}: {:?}",
            r.outcome
        );
        assert!(
            !streamed(&r.events).contains("Done!")
                && !streamed(&r.events).contains("I have created"),
            "native {native}: {}",
            streamed(&r.events)
        );
        assert_eq!(
            streamed(&r.events),
            *answer,
            "native {native}: one held answer"
        );
        assert_eq!(retries(&r.trace), 1, "native {native}");
    }
}

/// Proves a question about a file, answered without reading it, is re-prompted for that file;
/// read on the retry, the answer stands (READ_ONLY_ANSWERED), and the answer streams only after
/// the read.
#[tokio::test]
async fn an_unread_question_is_reprompted_for_its_file() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            Reply::Text("settings.py sets a timeout of 10 seconds.".into()),
            call(native, "talos.read_file", json!({"path": "settings.py"})),
            Reply::Text("settings.py sets TIMEOUT to 30 and RETRIES to 3.".into()),
        ];
        let r = run(
            ws.path(),
            native,
            steps,
            "Explain what settings.py configures",
        )
        .await;
        assert_eq!(r.requests.len(), 3, "native {native}");
        let reprompt = r.requests[1]["messages"].to_string();
        assert!(
            reprompt.contains("Call talos.read_file on settings.py"),
            "native {native}: {reprompt}"
        );
        assert_eq!(
            r.outcome.final_answer, "settings.py sets TIMEOUT to 30 and RETRIES to 3.",
            "native {native}"
        );
        assert_eq!(
            r.outcome.classification,
            Classification::ReadOnlyAnswered,
            "native {native}"
        );
        assert!(
            !streamed(&r.events).contains("10 seconds"),
            "native {native}: the unread answer never streamed"
        );
        assert!(
            answer_after_work(&r.events),
            "native {native}: {:?}",
            r.events
        );
    }
}

/// Proves a question answered unread twice ends with what was not inspected: the model's
/// answer is replaced, the classification is not READ_ONLY_ANSWERED.
#[tokio::test]
async fn a_question_answered_unread_twice_says_what_was_not_inspected() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            Reply::Text("settings.py sets a timeout of 10 seconds.".into()),
            Reply::Text("As I said, the timeout is 10 seconds.".into()),
            Reply::Text("unused".into()),
        ];
        let r = run(
            ws.path(),
            native,
            steps,
            "Explain what settings.py configures",
        )
        .await;
        assert_eq!(r.requests.len(), 2, "native {native}");
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with("[Not inspected: the answer had to rest on settings.py")
                && answer.contains("even after Talos asked for it"),
            "native {native}: {answer}"
        );
        assert!(!answer.contains("10 seconds"), "native {native}: {answer}");
        assert_eq!(
            (r.outcome.status, r.outcome.classification),
            (CompletionStatus::AdvisoryOnly, Classification::AdvisoryOnly),
            "native {native}"
        );
        assert!(
            !streamed(&r.events).contains("10 seconds"),
            "native {native}"
        );
        assert_eq!(r.trace.outcome.obligation_retries, 1, "native {native}");
    }
}

/// Proves a question about file contents answered after only a listing is re-prompted to read.
#[tokio::test]
async fn a_listing_is_not_evidence_for_a_question_about_contents() {
    for native in [true, false] {
        let ws = timeout_workspace();
        let steps = vec![
            call(native, "talos.list_dir", json!({"path": "."})),
            Reply::Text("The project has one settings file with sensible defaults.".into()),
            call(native, "talos.read_file", json!({"path": "settings.py"})),
            Reply::Text("It sets TIMEOUT = 30 and RETRIES = 3.".into()),
        ];
        let r = run(
            ws.path(),
            native,
            steps,
            "Explain what the configuration in this project sets",
        )
        .await;
        assert_eq!(r.requests.len(), 4, "native {native}");
        assert!(
            r.requests[2]["messages"]
                .to_string()
                .contains("has not been read this turn"),
            "native {native}"
        );
        assert_eq!(
            r.outcome.final_answer, "It sets TIMEOUT = 30 and RETRIES = 3.",
            "native {native}"
        );
    }
}

/// Proves a chat turn without obligations streams the model's text as it arrives (one chunk
/// per streamed piece, before the outcome), as before.
#[tokio::test]
async fn a_chat_turn_streams_as_before() {
    let ws = tempfile::tempdir().unwrap();
    let steps = vec![Reply::Text("Hello! How can I help?".into())];
    let r = run(ws.path(), true, steps, "hello there").await;
    assert_eq!(streamed(&r.events), "Hello! How can I help?");
    assert_eq!(r.outcome.classification, Classification::ReadOnlyAnswered);
}

/// Proves an edit turn ends after the verified change: two model calls (read, edit), and the
/// runtime writes the summary; a request that asks for an explanation gets the third call.
#[tokio::test]
async fn no_model_call_after_the_work_is_done() {
    for native in [true, false] {
        let steps = |native| {
            vec![
                call(native, "talos.read_file", json!({"path": "settings.py"})),
                call(
                    native,
                    "talos.edit_file",
                    json!({"path": "settings.py", "old_string": "TIMEOUT = 30", "new_string": "TIMEOUT = 60"}),
                ),
                Reply::Text("TIMEOUT is 60 now, so slow servers get more time.".into()),
            ]
        };
        let ws = timeout_workspace();
        let r = run(
            ws.path(),
            native,
            steps(native),
            "In settings.py, change TIMEOUT from 30 to 60.",
        )
        .await;
        assert_eq!(r.requests.len(), 2, "native {native}");
        assert_eq!(
            r.outcome.final_answer, "settings.py was changed and read back as approved.",
            "native {native}"
        );
        assert_eq!(r.outcome.classification, Classification::CompletedVerified);
        let ws = timeout_workspace();
        let r = run(
            ws.path(),
            native,
            steps(native),
            "In settings.py, change TIMEOUT from 30 to 60 and explain why it matters.",
        )
        .await;
        assert_eq!(
            r.requests.len(),
            3,
            "native {native}: the explanation is the model's"
        );
        assert!(
            r.outcome.final_answer.contains("slow servers"),
            "native {native}"
        );
    }
}

/// Proves a listing turn whose answer invents a file answers from the listing itself: names
/// only, the protected `.env` included, never its contents.
#[tokio::test]
async fn a_listing_answer_that_does_not_use_the_listing_is_replaced_by_it() {
    for native in [true, false] {
        let ws = timeout_workspace();
        std::fs::write(
            ws.path().join(".env"),
            "API_KEY=sk-not-for-the-model-123456\n",
        )
        .unwrap();
        let steps = vec![
            call(native, "talos.list_dir", json!({"path": "."})),
            Reply::Text("The folder holds main.py and requirements.txt.".into()),
        ];
        let r = run(ws.path(), native, steps, "List the files in this folder").await;
        let answer = &r.outcome.final_answer;
        assert!(
            answer.starts_with("[Listing check:"),
            "native {native}: {answer}"
        );
        assert!(
            answer.contains("settings.py") && answer.contains(".env"),
            "native {native}: {answer}"
        );
        assert!(
            !answer.contains("main.py") && !answer.contains("API_KEY"),
            "native {native}: {answer}"
        );
        assert!(!streamed(&r.events).contains("main.py"), "native {native}");
    }
}

/// Proves a listing answer that uses the listing stands.
#[tokio::test]
async fn a_listing_answer_that_uses_the_listing_stands() {
    let ws = timeout_workspace();
    let steps = vec![
        call(true, "talos.list_dir", json!({"path": "."})),
        Reply::Text("There is one file: settings.py.".into()),
    ];
    let r = run(ws.path(), true, steps, "List the files in this folder").await;
    assert_eq!(r.outcome.final_answer, "There is one file: settings.py.");
}

/// Proves a protected file the person approved reading in agent mode, echoed by the model, is
/// withheld from the answer with the reason and where the person can see it.
#[tokio::test]
async fn an_approved_protected_read_is_withheld_with_the_reason() {
    for native in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join(".env"),
            "API_KEY=sk-not-for-the-model-123456\n",
        )
        .unwrap();
        let steps = vec![
            call(native, "talos.read_file", json!({"path": ".env"})),
            Reply::Text("The file says API_KEY=sk-not-for-the-model-123456".into()),
        ];
        let r = run(ws.path(), native, steps, "What does .env contain?").await;
        let answer = &r.outcome.final_answer;
        assert!(
            !answer.contains("sk-not-for-the-model"),
            "native {native}: {answer}"
        );
        assert!(
            answer.contains("withheld from answers; `--mode private` shows it on your screen only"),
            "native {native}: {answer}"
        );
        assert!(
            !streamed(&r.events).contains("sk-not-for-the-model"),
            "native {native}: nothing streamed first"
        );
    }
}

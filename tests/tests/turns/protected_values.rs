//! A value of a protected file quoted inside a sentence: withheld from the answer wherever it
//! appears, never saved in the session file, and never sent to the model again, neither in
//! the session's next turn nor in a session that continues it.

use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::SessionNewResult;
use talos_tests::fake_llama::{FakeLlama, Reply};
use talos_tests::harness::{TestDaemon, approve_all, timeout_workspace};

const SECRET: &str = "sk-live-7Hq2Zp9Lm4Xw8Rt6";
const PASSWORD: &str = "hunter22";

/// Reads `.env` on the first request, then quotes its values mid-sentence, reformatted so
/// that no whole line of the file appears; every later turn answers plainly.
fn model() -> talos_tests::fake_llama::Script {
    Arc::new(|request: &Value| {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let read_done = messages.iter().any(|m| m["role"] == "tool");
        let asked = messages
            .last()
            .and_then(|m| m["content"].as_str())
            .unwrap_or("");
        if asked.contains("What is in .env") && !read_done {
            return Reply::ToolCalls(vec![(
                "talos.read_file".into(),
                json!({"path": ".env"}).to_string(),
            )]);
        }
        if read_done {
            return Reply::Text(format!(
                "The app reads its key, \"{SECRET}\", at start; the database password is '{PASSWORD}' and DEBUG is on."
            ));
        }
        Reply::Text("Noted.".into())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_value_quoted_mid_sentence_is_withheld_and_never_persisted_or_resent() {
    let llama = FakeLlama::start(true, model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    std::fs::write(
        ws.path().join(".env"),
        format!("API_KEY={SECRET}\nexport DB_PASSWORD=\"{PASSWORD}\"\nDEBUG=1\n"),
    )
    .unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, "What is in .env?", approve_all("approve"))
        .await;
    let answer = &outcome.final_answer;
    assert!(
        !answer.contains(SECRET) && !answer.contains(PASSWORD),
        "the answer withholds the values: {answer}"
    );
    assert!(answer.contains("[protected content withheld]"), "{answer}");
    let shown = serde_json::to_string(&seen).unwrap();
    assert!(!shown.contains(SECRET), "nothing on the screen holds it");
    let before = llama.requests().len();
    client
        .turn(&session, "Thanks. Anything else?", "deny")
        .await;
    let saved =
        std::fs::read_to_string(daemon.home.path().join(format!("sessions/{session}.json")))
            .unwrap();
    assert!(
        !saved.contains(SECRET) && !saved.contains(PASSWORD),
        "the session file holds no value: {saved}"
    );
    let resent = llama.requests()[before..]
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert!(
        !resent.contains(SECRET) && !resent.contains(PASSWORD),
        "the next turn does not resend it"
    );
    let continued: SessionNewResult = client
        .request(
            "session/new",
            json!({"workspace": ws.path(), "mode": "agent", "continueFrom": session}),
        )
        .await;
    let before = llama.requests().len();
    client
        .turn(&continued.session_id, "And what about README?", "deny")
        .await;
    let continued_sent = llama.requests()[before..]
        .iter()
        .map(Value::to_string)
        .collect::<String>();
    assert!(
        !continued_sent.contains(SECRET) && !continued_sent.contains(PASSWORD),
        "a continued session does not resend it"
    );
    assert!(
        continued_sent.contains("What is in .env?"),
        "the history is carried"
    );
    daemon.stop().await;
}

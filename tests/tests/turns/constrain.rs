//! Issue 15 through the socket with the fake llama server: the request body carries the
//! decoding constraint that matches the phase and targets (`model.constrain`), the strict
//! level's runtime pre-read makes a simple edit one model call, a reply that violates the
//! constraint (as a server without grammar support would send) is still refused by the
//! checks, and no-op proposals are refused before approval.

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted, write_call};
use talos_tests::harness::{
    Client, TestDaemon, approvals, approve_all, outcome, timeout_workspace,
};

const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const SETTINGS: &str = "TIMEOUT = 30\nRETRIES = 3\n";

fn edit(path: &str, old: &str, new: &str) -> Reply {
    Reply::ToolCalls(vec![(
        "talos.edit_file".into(),
        json!({"path": path, "old_string": old, "new_string": new}).to_string(),
    )])
}

struct Setup {
    llama: FakeLlama,
    daemon: TestDaemon,
    ws: tempfile::TempDir,
    client: Client,
    session: String,
}

/// A connect_only daemon on a native-calling fake; `constrain` is the `model.constrain` line
/// (empty: the mode's default).
async fn setup(steps: Vec<Reply>, constrain: &str) -> Setup {
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let config = format!(
        "model:\n  mode: connect_only\n  url: {}\n{constrain}tools:\n  native_calling: true\napproval:\n  timeout_secs: 30\n",
        llama.url
    );
    let daemon = TestDaemon::start(&config).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    Setup {
        llama,
        daemon,
        ws,
        client,
        session,
    }
}

impl Setup {
    async fn turn(&mut self, prompt: &str) -> (TurnOutcome, Vec<talos_protocol::Message>) {
        let (response, seen) = self
            .client
            .call_with(
                "turn/start",
                json!({"sessionId": self.session, "prompt": prompt}),
                approve_all("approve"),
            )
            .await
            .unwrap();
        (outcome(&response), seen)
    }
    fn settings(&self) -> String {
        std::fs::read_to_string(self.ws.path().join("settings.py")).unwrap()
    }
    fn trace(&self) -> TraceRecord {
        self.daemon.traces().pop().unwrap()
    }
}

fn schema(request: &Value) -> &Value {
    &request["response_format"]["json_schema"]["schema"]
}

/// Every `enum` array (as strings) under `key` anywhere in the schema.
fn enums_of(schema: &Value, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, &mut |k, v| {
        if k == key {
            for e in v["enum"].as_array().into_iter().flatten() {
                out.push(e.as_str().unwrap().to_string());
            }
            if let Some(c) = v["const"].as_str() {
                out.push(c.to_string());
            }
        }
    });
    out
}

fn walk(value: &Value, f: &mut dyn FnMut(&str, &Value)) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                f(k, v);
                walk(v, f);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| walk(v, f)),
        _ => {}
    }
}

#[tokio::test]
async fn strict_edit_is_one_model_call_with_the_targets_in_the_schema() {
    let mut s = setup(
        vec![edit("settings.py", "TIMEOUT = 30", "TIMEOUT = 60")],
        "  constrain: strict\n",
    )
    .await;
    let (outcome, seen) = s.turn(EDIT_REQUEST).await;
    assert_eq!(s.settings(), "TIMEOUT = 60\nRETRIES = 3\n");
    assert_eq!(approvals(&seen).len(), 1);
    assert_eq!(outcome.classification, Classification::CompletedVerified);
    let requests = s.llama.requests();
    assert_eq!(requests.len(), 1, "one model call for a simple edit");
    let first = &requests[0];
    let schema = schema(first);
    assert!(schema.is_object(), "strict sends a schema: {first}");
    assert_eq!(
        enums_of(schema, "path"),
        vec!["settings.py"; enums_of(schema, "path").len()]
    );
    let olds = enums_of(schema, "old_string");
    assert!(olds.contains(&"TIMEOUT = 30".to_string()), "{olds:?}");
    assert!(olds.iter().all(|o| SETTINGS.contains(o.as_str())));
    assert!(
        !schema.to_string().contains("\"answer\""),
        "no prose while the change is owed"
    );
    // The file was read by the runtime, before the first call, and the prompt holds it.
    let messages = first["messages"].to_string();
    assert!(
        messages.contains("Talos read settings.py for you"),
        "{messages}"
    );
    assert!(messages.contains("TIMEOUT = 30"));
    let trace = s.trace();
    let sources: Vec<(&str, &str)> = trace
        .tool_calls
        .iter()
        .map(|c| (c.source.as_str(), c.stage.as_str()))
        .collect();
    assert_eq!(
        sources,
        vec![("runtime", "executed"), ("native", "executed")]
    );
}

#[tokio::test]
async fn a_reply_violating_the_constraint_is_still_refused_by_the_checks() {
    // A server without grammar support ignores the schema: path outside the targets, then an
    // old_string the file does not hold. Neither reaches approval.
    let mut s = setup(
        vec![
            edit("other.py", "TIMEOUT = 30", "TIMEOUT = 60"),
            edit("settings.py", "TIMEOUT = 31", "TIMEOUT = 60"),
            Reply::Text("I could not do it.".into()),
        ],
        "  constrain: strict\n",
    )
    .await;
    let (_, seen) = s.turn(EDIT_REQUEST).await;
    assert!(approvals(&seen).is_empty());
    assert_eq!(s.settings(), SETTINGS);
    assert!(!s.ws.path().join("other.py").exists());
    let trace = s.trace();
    let stages: Vec<&str> = trace
        .tool_calls
        .iter()
        .filter(|c| c.source != "runtime")
        .map(|c| c.stage.as_str())
        .collect();
    // The path outside the targets is refused by the checks; the old_string the file does not
    // hold by the edit itself, before any approval.
    assert_eq!(stages, vec!["rejected", "failed"]);
    // Each request carried the constraint.
    for request in s.llama.requests() {
        assert!(schema(&request).is_object());
    }
}

#[tokio::test]
async fn connect_only_defaults_to_names_and_off_sends_nothing() {
    let mut s = setup(
        vec![
            read_call("settings.py"),
            edit("settings.py", "TIMEOUT = 30", "TIMEOUT = 60"),
        ],
        "",
    )
    .await;
    s.turn(EDIT_REQUEST).await;
    assert_eq!(s.settings(), "TIMEOUT = 60\nRETRIES = 3\n");
    let requests = s.llama.requests();
    let first = schema(&requests[0]);
    assert!(first.is_object(), "names by default for connect_only");
    assert!(enums_of(first, "path").contains(&"settings.py".to_string()));
    assert!(
        enums_of(first, "old_string").is_empty(),
        "names leaves old_string free"
    );
    // The runtime reads the target at every level (issue 24): the read the model still asks
    // for is answered from the conversation, and `names` no longer offers it.
    assert!(
        requests[0]["messages"]
            .to_string()
            .contains("Talos read settings.py")
    );
    assert!(!first.to_string().contains("talos.read_file"), "{first}");
    let trace = s.trace();
    assert_eq!(trace.tool_calls[0].source, "runtime");
    assert!(
        trace.warnings.iter().any(|w| w.code == "REPEATED_READ"),
        "{:?}",
        trace.warnings
    );

    let mut off = setup(vec![Reply::Text("fine".into())], "  constrain: off\n").await;
    off.turn(EDIT_REQUEST).await;
    for request in off.llama.requests() {
        assert!(request.get("response_format").is_none(), "{request}");
    }
}

#[tokio::test]
async fn a_constrained_answer_is_read_as_prose() {
    let mut s = setup(
        vec![Reply::Text(
            json!({"answer": "TIMEOUT is 30 seconds."}).to_string(),
        )],
        "  constrain: strict\n",
    )
    .await;
    let (outcome, seen) = s.turn("What is TIMEOUT in settings.py?").await;
    let streamed: String = seen
        .iter()
        .filter(|m| m.method.as_deref() == Some("turn/event"))
        .filter_map(|m| m.params.as_ref())
        .filter(|p| p["event"]["kind"] == "stream_chunk")
        .filter_map(|p| p["event"]["text"].as_str())
        .collect();
    assert_eq!(
        streamed, outcome.final_answer,
        "only the prose is streamed, never the JSON"
    );
    assert!(
        outcome.final_answer.contains("TIMEOUT is 30 seconds."),
        "{}",
        outcome.final_answer
    );
    assert!(!outcome.final_answer.contains("\"answer\""));
    // The runtime read settings.py first: the question is offered only the answer.
    let requests = s.llama.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(schema(&requests[0])["required"], json!(["answer"]));
}

#[tokio::test]
async fn no_op_proposals_are_refused_before_approval() {
    let mut s = setup(
        vec![
            write_call("settings.py", SETTINGS),
            edit("settings.py", "TIMEOUT = 30", "TIMEOUT = 30"),
            edit("", "TIMEOUT = 30", "TIMEOUT = 60"),
            Reply::Text("done".into()),
        ],
        "  constrain: strict\n",
    )
    .await;
    let (_, seen) = s.turn(EDIT_REQUEST).await;
    assert!(approvals(&seen).is_empty(), "nothing was asked");
    assert_eq!(s.settings(), SETTINGS);
    let results: Vec<String> = s
        .llama
        .requests()
        .iter()
        .skip(1)
        .map(talos_tests::fake_llama::last_tool_result)
        .collect();
    // A whole-file write where a small change was asked is refused first, whatever it holds.
    assert!(
        results[0].contains("Make that change with talos.edit_file"),
        "{results:?}"
    );
    assert!(results[1].contains("identical"), "{results:?}");
    assert!(results[2].contains("[error]"), "{results:?}");
}

/// A line named by a word it holds ("Comment out the print statement") is a small change the
/// plan checks: a whole-file write of the file is refused before approval, a comment on
/// another line is never verified, and the right edit is.
#[tokio::test]
async fn a_line_change_is_planned_refused_whole_and_checked_after() {
    const MAIN: &str = "import sys\nprint(\"debug\")\nsys.exit(0)\n";
    let mut s = setup(
        vec![
            write_call("main.py", "hello"),
            edit("main.py", "print(\"debug\")", "# print(\"debug\")"),
            Reply::Text("Commented out.".into()),
        ],
        "  constrain: strict\n",
    )
    .await;
    std::fs::write(s.ws.path().join("main.py"), MAIN).unwrap();
    let (outcome, seen) = s.turn("Comment out the print statement in main.py").await;
    assert_eq!(approvals(&seen).len(), 1, "only the edit was asked");
    let first = talos_tests::fake_llama::last_tool_result(&s.llama.requests()[1]);
    assert!(
        first.contains("Make that change with talos.edit_file"),
        "{first}"
    );
    let main = std::fs::read_to_string(s.ws.path().join("main.py")).unwrap();
    assert_eq!(main, "import sys\n# print(\"debug\")\nsys.exit(0)\n");
    assert_eq!(outcome.classification, Classification::CompletedVerified);
    let trace = serde_json::to_string(&s.trace().verification).unwrap();
    assert!(
        trace.contains("the line with print in main.py is commented out"),
        "{trace}"
    );

    // Another line commented out is a change the request did not name: never verified.
    let mut s = setup(
        vec![
            edit("main.py", "sys.exit(0)", "# sys.exit(0)"),
            Reply::Text("Commented out.".into()),
        ],
        "  constrain: off\n",
    )
    .await;
    std::fs::write(s.ws.path().join("main.py"), MAIN).unwrap();
    let (outcome, _) = s.turn("Comment out the print statement in main.py").await;
    assert_ne!(
        outcome.classification,
        Classification::CompletedVerified,
        "{outcome:?}"
    );
    s.daemon.stop().await;
}

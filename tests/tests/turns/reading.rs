//! Issue 34, items 2 and 6, end to end with the fake model: a request that holds a change verb
//! and names an existing file, yet reads as a question only by default, is asked before the
//! model is called (`contract/choose`); "change" makes a change turn, "question" a question
//! turn; a client that declines the request, answers it with an error or goes away gets
//! CONTRACT_AMBIGUOUS with both readings named and the model is never called; and a file named
//! only by its unique basename is the file the turn changes.

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{
    ChoiceSource, Classification, CompletionStatus, ContractChooseParams, Message, ReadingChoice,
    SessionNewResult, TurnOutcome,
};
use talos_tests::fake_llama::{FakeLlama, Reply, call, read_call, scripted};
use talos_tests::harness::{Answer, Client, TestDaemon};

/// Requests with a change verb and no imperative or question shape, hedged as people hedge:
/// the core reads at least one of them as uncertain on a workspace holding `config.py` (the
/// tests use the first the daemon asks about, so a sharper reading of one of them elsewhere
/// does not break them; none being asked does).
const HEDGED: [&str; 3] = [
    "I think DEBUG in config.py should change",
    "The DEBUG setting in config.py needs a change",
    "Maybe change DEBUG in config.py",
];

const CONFIG: &str = "DEBUG = True\nPORT = 8000\n";

struct Env {
    llama: FakeLlama,
    daemon: TestDaemon,
    ws: tempfile::TempDir,
    client: Client,
    session: String,
}

/// What the fake model does: turn DEBUG off in this file, or read it, then answer.
enum Model {
    Edits(&'static str),
    Reads(&'static str),
}

/// A daemon whose fake model does `model`; a workspace holding `files` (each with
/// [`CONFIG`]); a client that declines `contract/choose` when `declines`.
async fn env(files: &[&str], model: Model, declines: bool) -> Env {
    let first = match model {
        Model::Edits(target) => call(
            true,
            "talos.edit_file",
            json!({"path": target, "old_string": "DEBUG = True", "new_string": "DEBUG = False"}),
        ),
        Model::Reads(target) => read_call(target),
    };
    let script = scripted(vec![first, Reply::Text("DEBUG is on.".into())]);
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    for file in files {
        let path = ws.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, CONFIG).unwrap();
    }
    let mut client = daemon.client().await;
    let declined: Vec<&str> = if declines {
        vec!["contract/choose"]
    } else {
        vec![]
    };
    client
        .call(
            "initialize",
            json!({"clientName": "e2e", "declines": declined}),
        )
        .await;
    let result: SessionNewResult = client
        .request(
            "session/new",
            json!({"workspace": ws.path(), "mode": "agent"}),
        )
        .await;
    Env {
        llama,
        daemon,
        ws,
        client,
        session: result.session_id,
    }
}

impl Env {
    async fn turn(
        &mut self,
        prompt: &str,
        on_choose: impl Fn(&Message) -> Answer,
    ) -> (TurnOutcome, Vec<Message>) {
        self.client
            .turn_with(&self.session, prompt, |m| match m.method.as_deref() {
                Some("contract/choose") => on_choose(m),
                Some("approval/request") => Answer::Result(json!({"decision": "approve"})),
                _ => Answer::Ignore,
            })
            .await
    }

    fn last_trace(&self) -> TraceRecord {
        self.daemon
            .traces()
            .into_iter()
            .max_by_key(|t| t.turn_number)
            .unwrap()
    }

    fn file(&self, path: &str) -> String {
        std::fs::read_to_string(self.ws.path().join(path)).unwrap()
    }
}

fn chosen(choice: &'static str) -> impl Fn(&Message) -> Answer {
    move |_| Answer::Result(json!({"choice": choice}))
}

/// The `contract/choose` requests among `seen`.
fn asked(seen: &[Message]) -> Vec<ContractChooseParams> {
    seen.iter()
        .filter(|m| m.method.as_deref() == Some("contract/choose"))
        .map(|m| serde_json::from_value(m.params.clone().unwrap()).unwrap())
        .collect()
}

/// The first hedged request the daemon asks about (answered `question`, so nothing changes);
/// panics when it asks about none.
async fn uncertain(env: &mut Env) -> &'static str {
    for request in HEDGED {
        let (_, seen) = env.turn(request, chosen("question")).await;
        if !asked(&seen).is_empty() {
            return request;
        }
    }
    panic!("none of {HEDGED:?} was asked about: an uncertain request must be asked");
}

/// Proves an uncertain request is asked before the model (the question names the file and
/// both readings), and "change" makes a change turn: the file is changed and the trace says
/// the person chose.
#[tokio::test]
async fn an_uncertain_request_is_asked_and_change_makes_a_change_turn() {
    let mut env = env(&["config.py"], Model::Edits("config.py"), false).await;
    let request = uncertain(&mut env).await;
    let before = env.llama.requests().len();
    let (outcome, seen) = env.turn(request, chosen("change")).await;
    let asks = asked(&seen);
    assert_eq!(asks.len(), 1, "{seen:?}");
    assert_eq!(asks[0].request, request);
    assert_eq!(asks[0].change.targets, vec!["config.py".to_string()]);
    assert_eq!(asks[0].change.description, "Change config.py?");
    assert_eq!(asks[0].question.description, "Only answer a question");
    // Asked before the turn's first event: the model had not been called.
    let first_event = seen
        .iter()
        .position(|m| m.method.as_deref() == Some("turn/event"));
    let choose_at = seen
        .iter()
        .position(|m| m.method.as_deref() == Some("contract/choose"));
    assert!(choose_at < first_event, "{seen:?}");
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    assert_eq!(env.file("config.py"), "DEBUG = False\nPORT = 8000\n");
    assert!(env.llama.requests().len() > before);
    let trace = env.last_trace();
    assert_eq!(trace.task_contract.task_type, "FILE_EDIT");
    let reading = trace
        .task_contract
        .reading
        .expect("the trace keeps the choice");
    assert_eq!(
        (reading.choice, reading.source, reading.targets),
        (
            Some(ReadingChoice::Change),
            ChoiceSource::Client,
            vec!["config.py".to_string()]
        )
    );
}

/// Proves "question" makes a question turn: the model is asked, nothing is changed, and the
/// trace says the person chose the question.
#[tokio::test]
async fn question_makes_a_question_turn() {
    let mut env = env(&["config.py"], Model::Reads("config.py"), false).await;
    let request = uncertain(&mut env).await;
    let (outcome, seen) = env.turn(request, chosen("question")).await;
    assert_eq!(asked(&seen).len(), 1);
    assert_eq!(
        outcome.classification,
        Classification::ReadOnlyAnswered,
        "{outcome:?}"
    );
    assert_eq!(env.file("config.py"), CONFIG);
    assert!(!env.llama.requests().is_empty());
    let trace = env.last_trace();
    assert_eq!(trace.task_contract.task_type, "READ_ONLY_QA");
    let reading = trace.task_contract.reading.unwrap();
    assert_eq!(
        (reading.choice, reading.source),
        (Some(ReadingChoice::Question), ChoiceSource::Client)
    );
}

/// The outcome of a turn nobody chose for: blocked, CONTRACT_AMBIGUOUS, both readings named.
fn assert_ambiguous(outcome: &TurnOutcome) {
    assert_eq!(
        (outcome.status, outcome.classification),
        (CompletionStatus::Blocked, Classification::ContractAmbiguous),
        "{outcome:?}"
    );
    assert!(
        outcome.final_answer.contains(
            "could mean: change config.py, or only answer a question about it; say which"
        ),
        "{}",
        outcome.final_answer
    );
    assert!(outcome.files.is_empty());
}

/// Proves a client that declined `contract/choose` at `initialize` is never sent it: each
/// hedged request the core finds uncertain ends CONTRACT_AMBIGUOUS at once, the model is never
/// called, and the trace says the client declined.
#[tokio::test]
async fn a_declining_client_gets_contract_ambiguous_and_the_model_is_never_called() {
    let mut env = env(&["config.py"], Model::Edits("config.py"), true).await;
    let mut ambiguous = 0;
    for request in HEDGED {
        let (outcome, seen) = env.turn(request, chosen("change")).await;
        assert!(
            asked(&seen).is_empty(),
            "a declining client was asked: {seen:?}"
        );
        if outcome.classification != Classification::ContractAmbiguous {
            continue;
        }
        ambiguous += 1;
        assert_ambiguous(&outcome);
        let reading = env.last_trace().task_contract.reading.unwrap();
        assert_eq!(
            (reading.choice, reading.source),
            (None, ChoiceSource::Declined)
        );
        assert_eq!(env.llama.requests(), Vec::<Value>::new(), "{request}");
    }
    assert!(ambiguous > 0, "none of {HEDGED:?} ended CONTRACT_AMBIGUOUS");
    assert_eq!(env.file("config.py"), CONFIG);
}

/// Proves an answer that is no choice (a result that does not parse) and a disconnect while
/// the question waits end the turn CONTRACT_AMBIGUOUS, the model never called.
#[tokio::test]
async fn an_error_answer_or_a_disconnect_is_no_choice() {
    let mut env = env(&["config.py"], Model::Edits("config.py"), false).await;
    let request = uncertain(&mut env).await;
    let calls = env.llama.requests().len();
    let (outcome, seen) = env
        .turn(request, |_| Answer::Result(json!({"choice": "maybe"})))
        .await;
    assert_eq!(asked(&seen).len(), 1);
    assert_ambiguous(&outcome);
    let reading = env.last_trace().task_contract.reading.unwrap();
    assert_eq!(
        (reading.choice, reading.source),
        (None, ChoiceSource::Declined)
    );
    // A disconnect while the question waits (on a connection of its own, closed when dropped).
    let mut other = env.daemon.client().await;
    other.call("initialize", json!({"clientName": "e2e"})).await;
    let params = json!({"sessionId": env.session, "prompt": request});
    let gone = other
        .call_with("turn/start", params, |m| match m.method.as_deref() {
            Some("contract/choose") => Answer::Disconnect,
            _ => Answer::Ignore,
        })
        .await;
    assert!(gone.is_none());
    drop(other);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while env.daemon.traces().len() < 3 + HEDGED.iter().position(|r| *r == request).unwrap() {
        assert!(
            std::time::Instant::now() < deadline,
            "no trace of the disconnected turn"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let trace = env.last_trace();
    let reading = trace.task_contract.reading.unwrap();
    assert_eq!(
        (reading.choice, reading.source),
        (None, ChoiceSource::Disconnect)
    );
    assert_eq!(
        trace.outcome.classification,
        Classification::ContractAmbiguous
    );
    assert_eq!(env.llama.requests().len(), calls);
    assert_eq!(env.file("config.py"), CONFIG);
}

/// Proves a file named only by its basename, unique in the workspace, is the file: "In
/// config.py turn DEBUG off" with only `src/config.py` edits `src/config.py`.
#[tokio::test]
async fn a_unique_basename_names_the_file() {
    let mut env = env(&["src/config.py"], Model::Edits("src/config.py"), false).await;
    let (outcome, seen) = env
        .turn("In config.py turn DEBUG off", chosen("question"))
        .await;
    assert!(asked(&seen).is_empty());
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    assert_eq!(env.file("src/config.py"), "DEBUG = False\nPORT = 8000\n");
    assert!(!env.ws.path().join("config.py").exists());
    let trace = env.last_trace();
    assert_eq!(
        trace.task_contract.expected_targets,
        vec!["src/config.py".to_string()]
    );
}

//! The whole turn's order as rows (issue 23): a pretend daemon answers each `TurnEffect` of
//! `Turn::step` (the server's facts, the named files, token counts, model replies, the call
//! machine's effects) and each row checks the effects asked for, in order, and what the
//! requests carried: the runtime's read before the first model call, the budget's window and
//! cuts, the overflow retried once with the server's numbers, earlier turns as records,
//! interruptions, and a request too large for the context.

#![allow(clippy::expect_used)] // test code: a script that runs out should panic

use crate::turn_support;

use std::collections::VecDeque;

use crate::turn_support::{Reply, answer, plan_for, settings};
use pretty_assertions::assert_eq;
use talos_core::constrain::Level;
use talos_core::contract::resolve;
use talos_core::history::PriorOutcome;
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::Fine;
use talos_core::retrieval::{Retrieval, UnreadIgnoreFile};
use talos_core::turn::Turn;
use talos_core::turn::conversation::{EarlierTurn, Role};
use talos_core::turn::finish::Final;
use talos_core::turn::machine::{
    Interrupt, ModelFailure, ModelReply, ModelRequest, ModelSettings, NamedFile, ServerFacts,
    ServerProblem, TurnEffect, TurnInput,
};
use talos_core::turn::model::NativeCall;
use talos_core::turn::record::WarningCode;

/// What the pretend model server does with one request.
enum Model {
    Says(&'static str),
    Calls(&'static str, &'static str),
    /// The server counts this many more tokens than the core did, against this context.
    Overflow(u64, u64),
    Fails(&'static str),
    /// The reply was cut at the reply limit (`finish_reason: length`) after this text.
    Cut(&'static str),
}

/// The pretend daemon: the server, the workspace's named files, a tokenizer (3 bytes a
/// token, or none), the model's replies and the call effects' answers, in order.
struct Daemon {
    server: Result<ServerFacts, ServerProblem>,
    files: Vec<(&'static str, String)>,
    tokenizer: bool,
    model: VecDeque<Model>,
    calls: VecDeque<Reply>,
    /// Interrupt the turn after this many requests.
    interrupt_after: Option<usize>,
    /// What the runtime's own search finds.
    retrieval: Retrieval,
}

/// What a run of the machine saw.
struct Run {
    effects: Vec<&'static str>,
    requests: Vec<ModelRequest>,
    done: Final,
    turn: Turn,
}

fn daemon(model: Vec<Model>) -> Daemon {
    Daemon {
        server: Ok(ServerFacts {
            native_tools: true,
            n_ctx: Some(4096),
            openai: false,
        }),
        files: Vec::new(),
        tokenizer: true,
        model: model.into(),
        calls: VecDeque::new(),
        interrupt_after: None,
        retrieval: Retrieval::default(),
    }
}

fn model_settings(constrain: Level) -> ModelSettings {
    ModelSettings {
        constrain,
        preread_max_bytes: 16 * 1024,
        ..ModelSettings::default()
    }
}

fn new_turn(request: &str, model: ModelSettings, earlier: Vec<EarlierTurn>) -> Turn {
    let mut settings = settings(SessionMode::Agent);
    settings.model = model;
    Turn::new(
        plan_for(resolve(request), SessionMode::Agent),
        settings,
        Grants::default(),
    )
    .with_context(None, earlier)
}

fn name(effect: &TurnEffect) -> &'static str {
    match effect {
        TurnEffect::Probe => "probe",
        TurnEffect::Pin(_) => "pin",
        TurnEffect::Retrieve { .. } => "retrieve",
        TurnEffect::Inspect { .. } => "inspect",
        TurnEffect::Count(_) => "count",
        TurnEffect::Request(_) => "request",
        TurnEffect::Call { effect, .. } => turn_support::name(effect),
        TurnEffect::WebCheck { .. } => "web-check",
        TurnEffect::Finish(_) => "finish",
    }
}

fn reply(model: Model, request: &ModelRequest) -> TurnInput {
    let text = |content: &str| ModelReply {
        content: content.into(),
        finish_reason: "stop".into(),
        prompt_tokens: Some(1000),
        ..ModelReply::default()
    };
    match model {
        Model::Says(content) => TurnInput::Replied(text(content)),
        Model::Calls(name, arguments) => TurnInput::Replied(ModelReply {
            tool_calls: vec![NativeCall {
                id: "c1".into(),
                name: name.into(),
                arguments: arguments.into(),
            }],
            finish_reason: "tool_calls".into(),
            ..text("")
        }),
        Model::Overflow(extra, n_ctx) => {
            let prompt = request.prompt_tokens + extra;
            TurnInput::ModelFailed(ModelFailure::ContextExceeded {
                prompt_tokens: Some(prompt),
                n_ctx: Some(n_ctx),
                message: format!(
                    "request ({prompt} tokens) exceeds the available context size ({n_ctx} tokens)"
                ),
            })
        }
        Model::Fails(message) => TurnInput::ModelFailed(ModelFailure::Other(message.into())),
        Model::Cut(content) => TurnInput::Replied(ModelReply {
            finish_reason: "length".into(),
            ..text(content)
        }),
    }
}

fn run(mut turn: Turn, mut d: Daemon) -> Run {
    let mut effects = Vec::new();
    let mut requests = Vec::new();
    let mut input = TurnInput::Start;
    for _ in 0..200 {
        let effect = turn.step(input);
        effects.push(name(&effect));
        input = match effect {
            TurnEffect::Finish(done) => {
                return Run {
                    effects,
                    requests,
                    done,
                    turn,
                };
            }
            TurnEffect::Probe => TurnInput::Server(d.server.clone()),
            TurnEffect::Pin(_) => TurnInput::Pinned(Vec::new()),
            TurnEffect::Retrieve { .. } => TurnInput::Retrieved(d.retrieval.clone()),
            TurnEffect::Inspect { paths, read, .. } => TurnInput::Named(
                paths
                    .iter()
                    .map(|p| {
                        let text = d.files.iter().find(|(f, _)| f == p).map(|(_, t)| t.clone());
                        NamedFile {
                            path: p.clone(),
                            file: text.is_some(),
                            small_text: text.filter(|_| read.contains(p)),
                        }
                    })
                    .collect(),
            ),
            TurnEffect::Count(items) => TurnInput::Counted(d.tokenizer.then(|| {
                items
                    .iter()
                    .map(|i| match i {
                        talos_core::turn::machine::Countable::Text(t) => t.len().div_ceil(3) as u64,
                        talos_core::turn::machine::Countable::Tools(tools) => {
                            100 * tools.len() as u64
                        }
                    })
                    .collect()
            })),
            TurnEffect::Request(request) => {
                requests.push(request.clone());
                if d.interrupt_after == Some(requests.len()) {
                    turn.interrupt(Interrupt::Cancelled);
                    TurnInput::Interrupted
                } else {
                    reply(
                        d.model.pop_front().expect("the script has a reply"),
                        &request,
                    )
                }
            }
            TurnEffect::Call { effect, .. } => {
                let script = d.calls.pop_front().expect("the script answers the call");
                TurnInput::Call(answer(&script, &effect))
            }
            TurnEffect::WebCheck { .. } => TurnInput::Web(None),
        };
    }
    panic!("the turn did not end: {effects:?}");
}

fn text_of(request: &ModelRequest, role: Role) -> Vec<String> {
    request
        .messages
        .iter()
        .filter(|m| m.role == role)
        .map(|m| m.content.clone())
        .collect()
}

#[test]
fn a_question_asks_the_server_then_counts_then_requests_then_ends() {
    let run = run(
        new_turn("Hello, how are you?", ModelSettings::default(), Vec::new()),
        daemon(vec![Model::Says("Fine, thanks.")]),
    );
    assert_eq!(
        run.effects,
        ["probe", "inspect", "count", "request", "finish"]
    );
    assert_eq!(run.done.answer, "Fine, thanks.");
    let request = &run.requests[0];
    assert_eq!(request.messages[0].role, Role::System);
    assert_eq!(request.context_tokens, 4096);
    assert!(request.prompt_tokens > 0 && request.prompt_tokens < 4096 - 512);
}

/// Proves each ignore file the index walk did not read becomes an `IGNORE_FILE_NOT_READ`
/// warning in the record (issue 26), and the turn goes on to its answer.
#[test]
fn an_ignore_file_the_walk_did_not_read_is_a_warning_in_the_record() {
    let mut d = daemon(vec![Model::Says("It is set in src/approval.rs.")]);
    d.retrieval.unread_ignore_files = vec![UnreadIgnoreFile {
        path: ".gitignore".into(),
        reason: "refused: not a regular file".into(),
    }];
    let run = run(
        new_turn(
            "Where is the approval timeout set?",
            ModelSettings::default(),
            Vec::new(),
        ),
        d,
    );
    assert_eq!(
        run.effects,
        ["probe", "retrieve", "inspect", "count", "request", "finish"]
    );
    let warnings: Vec<(WarningCode, &str)> = run
        .turn
        .record()
        .warnings
        .iter()
        .map(|w| (w.code, w.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [(
            WarningCode::IgnoreFileNotRead,
            "ignore file .gitignore was not read (refused: not a regular file); its patterns do not apply"
        )]
    );
    assert_eq!(run.done.answer, "It is set in src/approval.rs.");
}

#[test]
fn a_status_question_is_answered_from_the_records_without_the_model() {
    let turn = new_turn(
        "Did you make the changes?",
        ModelSettings::default(),
        Vec::new(),
    )
    .with_context(
        Some(talos_core::turn::route::PriorRecord {
            trace_id: "trc-1".into(),
            classification: Fine::CompletedVerified,
            files: Vec::new(),
        }),
        Vec::new(),
    );
    let run = run(turn, daemon(Vec::new()));
    assert_eq!(run.effects, ["finish"]);
    assert!(run.requests.is_empty());
}

#[test]
fn the_runtime_reads_the_named_target_before_the_first_model_call_on_strict() {
    let mut d = daemon(vec![
        Model::Says("I will not change it."),
        Model::Says("Still no."),
    ]);
    d.files = vec![("settings.py", "TIMEOUT = 30\n".into())];
    d.calls = [Reply::Paths, Reply::Output("1 | TIMEOUT = 30\n")].into();
    let run = run(
        new_turn(
            "In settings.py, change TIMEOUT from 30 to 60.",
            model_settings(Level::Strict),
            Vec::new(),
        ),
        d,
    );
    assert_eq!(
        run.effects[..6],
        ["probe", "inspect", "resolve", "read", "count", "request"]
    );
    let first = &run.requests[0];
    let users = text_of(first, Role::User);
    assert!(
        users[0].starts_with("Talos read settings.py for you before your first reply:"),
        "{users:?}"
    );
    assert_eq!(users[1], "In settings.py, change TIMEOUT from 30 to 60.");
    assert!(first.schema.is_some(), "strict sends the constraint");
    assert!(first.hold, "a change turn's reply is held for the guards");
}

#[test]
fn a_long_read_is_windowed_to_fit_and_the_turn_goes_on_to_an_answer() {
    let big: String = (1..=600)
        .map(|n| format!("{n} | value_{n} = compute_something({n}, other_argument)\n"))
        .collect();
    let big: &'static str = Box::leak(big.into_boxed_str());
    let mut d = daemon(vec![
        Model::Calls("talos.read_file", r#"{"path": "big.py"}"#),
        Model::Says("big.py computes values."),
    ]);
    d.files = vec![("big.py", big.to_string())];
    d.calls = [Reply::Paths, Reply::Output(big)].into();
    let run = run(
        new_turn(
            "Explain what big.py does.",
            ModelSettings::default(),
            Vec::new(),
        ),
        d,
    );
    assert_eq!(
        run.effects,
        [
            "probe", "inspect", "count", "request", "resolve", "read", "count", "count", "request",
            "finish"
        ]
    );
    let second = &run.requests[1];
    assert!(
        second.prompt_tokens <= 4096 - 512,
        "{}",
        second.prompt_tokens
    );
    let result = text_of(second, Role::Tool).join("");
    assert!(
        result.contains("[big.py: lines 1-")
            && result.contains(" of 600 shown; read more with offset "),
        "{result}"
    );
    assert_eq!(run.done.answer, "big.py computes values.");
    assert!(run.turn.record().read_paths.contains(&"big.py".to_string()));
}

#[test]
fn an_overflow_is_retried_once_with_the_servers_numbers() {
    let run = run(
        new_turn("Hello there", ModelSettings::default(), Vec::new()),
        daemon(vec![Model::Overflow(300, 2048), Model::Says("Hi.")]),
    );
    assert_eq!(
        run.effects,
        ["probe", "inspect", "count", "request", "request", "finish"]
    );
    assert_eq!(run.requests[1].context_tokens, 2048);
    assert!(
        run.requests[1].prompt_tokens > run.requests[0].prompt_tokens,
        "the core now counts as the server does"
    );
    assert_eq!(run.done.answer, "Hi.");
    let calls = &run.turn.record().model_calls;
    assert!(calls[0].error.is_some() && calls[1].error.is_none());
    assert!(turn_support::warned(
        &run.turn,
        WarningCode::ContextExceeded
    ));
}

#[test]
fn a_second_overflow_fails_the_turn_naming_both_sizes_and_the_setting() {
    let run = run(
        new_turn("Hello there", ModelSettings::default(), Vec::new()),
        daemon(vec![Model::Overflow(300, 4096), Model::Overflow(200, 4096)]),
    );
    assert_eq!(run.requests.len(), 2);
    let said = run.requests[1].prompt_tokens + 200;
    assert!(
        run.done
            .answer
            .contains(&format!("request ({said} tokens)"))
            && run.done.answer.contains("(4096 tokens)")
            && run.done.answer.contains("model.ctx"),
        "{}",
        run.done.answer
    );
    assert_eq!(run.done.fine, Fine::Failed);
}

#[test]
fn a_request_that_cannot_fit_is_never_sent() {
    let mut d = daemon(Vec::new());
    d.server = Ok(ServerFacts {
        native_tools: true,
        n_ctx: Some(700),
        openai: false,
    });
    let run = run(
        new_turn("Hello there", ModelSettings::default(), Vec::new()),
        d,
    );
    assert!(run.requests.is_empty(), "nothing was sent");
    assert!(
        run.done.answer.contains("700-token context"),
        "{}",
        run.done.answer
    );
    assert!(turn_support::warned(
        &run.turn,
        WarningCode::ContextTooSmall
    ));
    assert_eq!(run.done.fine, Fine::Failed);
}

#[test]
fn earlier_turns_are_carried_as_their_records_oldest_first_and_cut_when_full() {
    let earlier = vec![
        EarlierTurn {
            request: "In settings.py, change TIMEOUT from 30 to 60.".into(),
            answer: "settings.py was changed and read back as approved.".into(),
            changed: vec!["settings.py".into()],
            outcome: PriorOutcome::Verified,
            replaced: None,
        },
        EarlierTurn {
            request: "What is RETRIES?".into(),
            answer: "RETRIES is 3.".into(),
            changed: Vec::new(),
            outcome: PriorOutcome::ReadOnly,
            replaced: None,
        },
    ];
    let run = run(
        new_turn(
            "Now do the same for RETRIES.",
            ModelSettings::default(),
            earlier.clone(),
        ),
        daemon(vec![Model::Says("ok")]),
    );
    let request = &run.requests[0];
    let roles: Vec<Role> = request.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(request.messages[1].content, earlier[0].request);
    assert_eq!(
        request.messages[2].content,
        "settings.py was changed and read back as approved.\n\n[Talos's record of this turn: changed settings.py.]"
    );
    assert_eq!(request.messages[5].content, "Now do the same for RETRIES.");
    // A context with room for the newest earlier turn only.
    let mut d = daemon(vec![Model::Says("ok")]);
    let system = request.prompt_tokens - 40;
    d.server = Ok(ServerFacts {
        native_tools: true,
        n_ctx: Some(system + 512 + 32 + 20),
        openai: false,
    });
    let small = run_small(earlier, d);
    let carried: Vec<String> = text_of(&small.requests[0], Role::User);
    assert_eq!(
        carried,
        ["What is RETRIES?", "Now do the same for RETRIES."]
    );
}

fn run_small(earlier: Vec<EarlierTurn>, d: Daemon) -> Run {
    run(
        new_turn(
            "Now do the same for RETRIES.",
            ModelSettings::default(),
            earlier,
        ),
        d,
    )
}

#[test]
fn a_cancel_during_a_request_ends_the_loop_with_nothing_more_asked() {
    let mut d = daemon(Vec::new());
    d.interrupt_after = Some(1);
    let run = run(
        new_turn("Hello there", ModelSettings::default(), Vec::new()),
        d,
    );
    assert_eq!(
        run.effects,
        ["probe", "inspect", "count", "request", "finish"]
    );
    assert!(run.turn.record().facts.cancelled);
    assert_eq!(run.done.fine, Fine::Cancelled);
}

#[test]
fn a_server_that_cannot_be_reached_ends_the_turn_before_any_request() {
    let mut d = daemon(Vec::new());
    d.server = Err(ServerProblem::Unreachable("connection refused".into()));
    let run = run(
        new_turn("Hello there", ModelSettings::default(), Vec::new()),
        d,
    );
    assert_eq!(run.effects, ["probe", "finish"]);
    assert_eq!(
        run.done.answer,
        "The model server could not be reached: connection refused"
    );
    assert!(turn_support::warned(
        &run.turn,
        WarningCode::ModelUnreachable
    ));
}

#[test]
fn without_a_tokenizer_the_estimate_counts_and_a_failure_ends_the_loop() {
    let mut d = daemon(vec![Model::Fails("model server answered HTTP 500: boom")]);
    d.tokenizer = false;
    let run = run(
        new_turn("Hello there", ModelSettings::default(), Vec::new()),
        d,
    );
    let request = &run.requests[0];
    let bytes: usize = request.messages.iter().map(|m| m.content.len()).sum();
    assert!(
        request.prompt_tokens >= (bytes / 2) as u64,
        "the estimate is conservative: {} tokens for {bytes} bytes",
        request.prompt_tokens
    );
    assert_eq!(
        run.done.answer,
        "The model call failed: model server answered HTTP 500: boom"
    );
}

#[test]
fn an_input_the_stage_does_not_expect_ends_the_turn() {
    let mut turn = new_turn("Hello there", ModelSettings::default(), Vec::new());
    assert_eq!(name(&turn.step(TurnInput::Start)), "probe");
    let effect = turn.step(TurnInput::Counted(None));
    assert_eq!(name(&effect), "finish");
    assert!(turn_support::warned(&turn, WarningCode::ToolLoopStopped));
    assert_eq!(
        name(&turn.step(TurnInput::Start)),
        "finish",
        "it stays over"
    );
}

#[test]
fn the_runtime_reads_a_small_named_target_at_every_level_and_a_question_s_file_too() {
    let rows: [(&str, Level); 4] = [
        ("In settings.py, change TIMEOUT from 30 to 60.", Level::Off),
        (
            "In settings.py, change TIMEOUT from 30 to 60.",
            Level::Names,
        ),
        ("What is the value of TIMEOUT in settings.py?", Level::Off),
        (
            "What is the value of TIMEOUT in settings.py?",
            Level::Strict,
        ),
    ];
    for (request, level) in rows {
        let mut d = daemon(vec![Model::Says("ok"), Model::Says("ok")]);
        d.files = vec![("settings.py", "TIMEOUT = 30\n".into())];
        d.calls = [Reply::Paths, Reply::Output("1 | TIMEOUT = 30\n")].into();
        let run = run(new_turn(request, model_settings(level), Vec::new()), d);
        assert_eq!(
            run.effects[..4],
            ["probe", "inspect", "resolve", "read"],
            "{request} at {level:?}"
        );
        assert!(
            text_of(&run.requests[0], Role::User)[0].starts_with("Talos read settings.py"),
            "{request} at {level:?}"
        );
    }
}

#[test]
fn a_question_whose_file_the_runtime_read_is_offered_only_the_answer() {
    let mut d = daemon(vec![Model::Says(r#"{"answer": "TIMEOUT is 30."}"#)]);
    d.files = vec![("settings.py", "TIMEOUT = 30\n".into())];
    d.calls = [Reply::Paths, Reply::Output("1 | TIMEOUT = 30\n")].into();
    let run = run(
        new_turn(
            "What is the value of TIMEOUT in settings.py?",
            model_settings(Level::Strict),
            Vec::new(),
        ),
        d,
    );
    let schema = run.requests[0].schema.clone().expect("a schema");
    assert_eq!(
        schema["required"],
        serde_json::json!(["answer"]),
        "{schema}"
    );
    assert_eq!(run.done.answer, "TIMEOUT is 30.");
    assert_eq!(run.requests.len(), 1);
}

#[test]
fn a_repeated_read_is_answered_from_the_conversation_and_a_second_stops_the_loop() {
    let read = r#"{"path": "settings.py"}"#;
    let mut d = daemon(vec![
        Model::Calls("talos.read_file", read),
        Model::Calls("talos.read_file", read),
    ]);
    d.files = vec![("settings.py", "TIMEOUT = 30\n".into())];
    // The runtime's read, then the two repeats (each resolved, never read again).
    d.calls = [
        Reply::Paths,
        Reply::Output("1 | TIMEOUT = 30\n"),
        Reply::Paths,
        Reply::Paths,
    ]
    .into();
    let run = run(
        new_turn(
            "In settings.py, change TIMEOUT from 30 to 60.",
            model_settings(Level::Off),
            Vec::new(),
        ),
        d,
    );
    let reads = run.effects.iter().filter(|e| **e == "read").count();
    assert_eq!(reads, 1, "settings.py was read once: {:?}", run.effects);
    assert_eq!(run.requests.len(), 2, "the second repeat ends the loop");
    assert!(turn_support::warned(&run.turn, WarningCode::RepeatedRead));
    assert!(
        run.done
            .answer
            .contains("the model asked again for settings.py, already read"),
        "{}",
        run.done.answer
    );
}

#[test]
fn an_openai_server_gets_the_names_level_where_strict_was_configured() {
    for (openai, pinned) in [(false, true), (true, false)] {
        let mut d = daemon(vec![Model::Says("ok"), Model::Says("ok")]);
        d.server = Ok(ServerFacts {
            native_tools: true,
            n_ctx: Some(4096),
            openai,
        });
        d.files = vec![("settings.py", "TIMEOUT = 30\n".into())];
        d.calls = [Reply::Paths, Reply::Output("1 | TIMEOUT = 30\n")].into();
        let run = run(
            new_turn(
                "In settings.py, change TIMEOUT from 30 to 60.",
                model_settings(Level::Strict),
                Vec::new(),
            ),
            d,
        );
        let schema = run.requests[0]
            .schema
            .clone()
            .expect("a schema")
            .to_string();
        assert_eq!(
            schema.contains(r#""new_string":{"const":"TIMEOUT = 60"}"#),
            pinned,
            "openai {openai}: {schema}"
        );
    }
}

const PARSE_HEADER: &str = "What does the function parse_header in big.py return?";

/// Proves a question whose answer was cut at the reply limit shows the answer's prose, never
/// the constraint's JSON, says it is unfinished and is PARTIAL; cut before any prose, FAILED.
#[test]
fn a_cut_answer_is_its_prose_marked_unfinished() {
    let rows: [(&str, Fine, &str); 2] = [
        (
            r#"{"answer": "parse_header returns a dict of the hea"#,
            Fine::Partial,
            "parse_header returns a dict of the hea\n\n[Incomplete answer: the model's reply was cut at the reply limit, so the answer above stops before its end.]",
        ),
        (
            r#"{"answer": ""#,
            Fine::Failed,
            "[No answer: the model's reply was cut at the reply limit before it gave any answer.]",
        ),
    ];
    for (reply, fine, says) in rows {
        let mut d = daemon(vec![Model::Cut(reply)]);
        d.files = vec![("big.py", "def parse_header(x):\n    return {}\n".into())];
        d.calls = [
            Reply::Paths,
            Reply::Output("1 | def parse_header(x):\n2 |     return {}\n"),
        ]
        .into();
        let run = run(
            new_turn(PARSE_HEADER, model_settings(Level::Strict), Vec::new()),
            d,
        );
        assert_eq!(run.done.fine, fine, "{reply}: {:?}", run.done.answer);
        assert_eq!(run.done.answer, says, "{reply}");
    }
}

/// Proves a question whose only answer is the loop's note (the model asked again for a file it
/// had read) is not READ_ONLY_ANSWERED: it says there is no answer, and why.
#[test]
fn a_loop_note_alone_is_no_answer() {
    let read = r#"{"path": "big.py"}"#;
    let mut d = daemon(vec![
        Model::Calls("talos.read_file", read),
        Model::Calls("talos.read_file", read),
        Model::Calls("talos.read_file", read),
    ]);
    d.files = vec![("big.py", "def parse_header(x):\n    return {}\n".into())];
    d.calls = [
        Reply::Paths,
        Reply::Output("1 | def parse_header(x):\n2 |     return {}\n"),
        Reply::Paths,
        Reply::Paths,
        Reply::Paths,
    ]
    .into();
    let run = run(
        new_turn(PARSE_HEADER, model_settings(Level::Off), Vec::new()),
        d,
    );
    assert_eq!(run.done.fine, Fine::Failed, "{:?}", run.done.answer);
    assert!(
        run.done.answer.starts_with(
            "[No answer: the model did not answer the question before the tool loop stopped.]\n\n[Tool loop stopped"
        ),
        "{:?}",
        run.done.answer
    );
}

//! The tool loop's decisions (`turn/model.rs`), one row each: the surface of each model
//! call (recorded, never wider than the one captured), when a request must demand a tool call,
//! what a reply leads to (chat turns, prose, broken calls, cut-off native arguments), when the
//! loop stops (a call's stop, the guard, the iteration budget), the tool result the model
//! reads. The routes are in `tables/turn_route.rs`.

use crate::turn_support;

use crate::turn_support::{EDIT, drive, proposal, settings, turn, warned};
use pretty_assertions::assert_eq;
use talos_core::contract::resolve;
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::plan::{ActionObligation, Phase, PlanSettings, TurnPlan};
use talos_core::posture::apply;
use talos_core::prompt::ToolCalling;
use talos_core::textcall::{ParsedCall, TextCalls};
use talos_core::turn::call::CallReport;
use talos_core::turn::model::{
    CHAT_FALLBACK, NativeCall, ReplyAction, proposals, tool_result_message,
};
use talos_core::turn::record::WarningCode;
use talos_core::turn::{Turn, TurnSettings};

const QUESTION: &str = "What does settings.py do?";
const CHAT: &str = "hi";

fn agent(request: &str) -> Turn {
    turn(request, SessionMode::Agent, Grants::default())
}

/// One row of `begin_model_call`: the turn, the phase it is in, and (to prove the guard) a
/// plan swapped in after the turn captured its authority.
struct SurfaceRow {
    what: &'static str,
    request: &'static str,
    phase: Option<Phase>,
    later: Option<&'static str>,
    index: usize,
    admitted: bool,
}

fn check_surface(row: SurfaceRow) {
    let mut t = agent(row.request);
    if let Some(later) = row.later {
        t.plan = TurnPlan::from_turn(apply(SessionMode::Agent.posture(), resolve(later)));
    }
    if let Some(phase) = row.phase {
        t.phase = phase;
    }
    let expected = t.surface();
    let got = t.begin_model_call(row.index);
    assert_eq!(got.is_some(), row.admitted, "{}: admitted", row.what);
    let refused = warned(&t, WarningCode::SurfaceEscalationRefused);
    assert_eq!(refused, !row.admitted, "{}: refusal warning", row.what);
    match (got, t.record().tool_surfaces.as_slice()) {
        (Some(surface), [recorded]) => {
            assert_eq!(surface, expected, "{}: surface", row.what);
            assert_eq!(recorded.model_call, row.index, "{}: index", row.what);
            assert_eq!(recorded.phase, t.phase, "{}: phase", row.what);
            assert_eq!(recorded.tools, expected.tools(), "{}: tools", row.what);
            assert_eq!(recorded.reason, expected.reason(), "{}: reason", row.what);
        }
        (None, []) => {
            let message = &t.record().warnings[0].message;
            assert!(
                message.contains(
                    "refused an escalated retry beyond the captured current-turn authority: talos."
                ),
                "{}: {message}",
                row.what
            );
        }
        (got, recorded) => panic!("{}: {got:?} with records {recorded:?}", row.what),
    }
}

/// Proves each model call's surface is recorded, and one wider than the turn began with is
/// refused with SURFACE_ESCALATION_REFUSED and not recorded.
#[test]
fn each_model_call_surface_is_recorded_and_never_widened() {
    let base = SurfaceRow {
        what: "",
        request: EDIT,
        phase: None,
        later: None,
        index: 0,
        admitted: true,
    };
    let rows = vec![
        SurfaceRow {
            what: "the first call of an edit turn gets the APPLY surface",
            ..base
        },
        SurfaceRow {
            what: "a later call in VERIFY gets the narrower surface, recorded with its phase",
            phase: Some(Phase::Verify),
            index: 3,
            ..base
        },
        SurfaceRow {
            what: "a read-only turn keeps its surface",
            request: QUESTION,
            index: 1,
            ..base
        },
        SurfaceRow {
            what: "a plan that would offer write tools to a read-only turn is refused",
            request: QUESTION,
            later: Some(EDIT),
            index: 1,
            admitted: false,
            ..base
        },
        SurfaceRow {
            what: "a chat turn that would gain workspace tools is refused",
            request: CHAT,
            later: Some(QUESTION),
            admitted: false,
            ..base
        },
    ];
    for row in rows {
        check_surface(row);
    }
}

/// Proves `tool_choice: required` is asked only on the first native request, with the setting
/// on, a non-empty surface, and an obligation only a tool can meet.
#[test]
fn a_tool_call_is_required_only_when_every_condition_holds() {
    use ActionObligation as O;
    use ToolCalling::{Native, Text};
    // (what, request, obligation, index, calling, setting, chat surface, required)
    let rows: Vec<(&str, &str, O, usize, ToolCalling, bool, bool, bool)> = vec![
        (
            "an edit must call a tool",
            EDIT,
            O::MutatingToolRequired,
            0,
            Native,
            true,
            false,
            true,
        ),
        (
            "a diagnosis must inspect",
            "Diagnose the bug in app.js",
            O::InspectRequired,
            0,
            Native,
            true,
            false,
            true,
        ),
        (
            "a listing must list",
            "list files",
            O::ListDirOnly,
            0,
            Native,
            true,
            false,
            true,
        ),
        (
            "a verification must look",
            "Verify that settings.py sets TIMEOUT to 60.",
            O::VerifyFromEvidence,
            0,
            Native,
            true,
            false,
            true,
        ),
        (
            "small talk answers directly",
            CHAT,
            O::DirectAnswerOnly,
            0,
            Native,
            true,
            false,
            false,
        ),
        (
            "a question about a file may answer",
            QUESTION,
            O::None,
            0,
            Native,
            true,
            false,
            false,
        ),
        (
            "an unknown request may answer",
            "",
            O::Unknown,
            0,
            Native,
            true,
            false,
            false,
        ),
        (
            "only the first request demands a call",
            EDIT,
            O::MutatingToolRequired,
            1,
            Native,
            true,
            false,
            false,
        ),
        (
            "text calling cannot demand a call",
            EDIT,
            O::MutatingToolRequired,
            0,
            Text,
            true,
            false,
            false,
        ),
        (
            "the setting turns it off",
            EDIT,
            O::MutatingToolRequired,
            0,
            Native,
            false,
            false,
            false,
        ),
        (
            "an empty surface cannot demand a call",
            EDIT,
            O::MutatingToolRequired,
            0,
            Native,
            true,
            true,
            false,
        ),
    ];
    for (what, request, obligation, index, calling, setting, chat_surface, required) in rows {
        let mut t = agent(request);
        t.settings = TurnSettings {
            require_tool_call: setting,
            ..settings(SessionMode::Agent)
        };
        assert_eq!(t.plan.obligation(), obligation, "{what}: obligation");
        let surface = if chat_surface {
            agent(CHAT).surface()
        } else {
            t.surface()
        };
        assert!(
            !chat_surface || surface.tools().is_empty(),
            "{what}: surface {:?}",
            surface.tools()
        );
        assert_eq!(
            t.requires_tool_call(index, calling, &surface),
            required,
            "{what}"
        );
    }
}

fn native(name: &str, arguments: &str) -> NativeCall {
    NativeCall {
        id: "n1".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn text(prose: &str, calls: usize, malformed: Option<&str>) -> TextCalls {
    TextCalls {
        calls: (0..calls)
            .map(|i| ParsedCall {
                name: "talos.read_file".into(),
                args: [("path".to_string(), format!("f{i}.txt"))]
                    .into_iter()
                    .collect(),
            })
            .collect(),
        malformed: malformed.is_some(),
        malformed_reason: malformed.filter(|r| !r.is_empty()).map(str::to_string),
        prose: prose.into(),
        ..TextCalls::default()
    }
}

/// What a reply should lead to.
#[derive(Debug)]
enum Leads {
    Answer(&'static str),
    /// A re-prompt containing this text (issue 12: an obligation not met).
    Retry(&'static str),
    /// Calls dispatched, their source, and whether the broken-call note is due.
    Dispatch(usize, &'static str, bool),
}

struct ReplyRow {
    what: &'static str,
    request: &'static str,
    native: Vec<NativeCall>,
    text: TextCalls,
    leads: Leads,
    /// The warning recorded, and what its message contains.
    warning: Option<(WarningCode, &'static str)>,
    malformed_fact: bool,
}

fn check_reply(row: ReplyRow) {
    let mut t = agent(row.request);
    let surface = t.surface();
    let action = t.reply(0, &surface, &row.native, "stop", row.text);
    match (&row.leads, &action) {
        (Leads::Answer(expected), ReplyAction::Answer(got)) => {
            assert_eq!(got, expected, "{}: answer", row.what);
        }
        (Leads::Retry(says), ReplyAction::Retry(got)) => {
            assert!(got.contains(says), "{}: {got}", row.what);
        }
        (
            Leads::Dispatch(count, source, note),
            ReplyAction::Dispatch {
                proposals,
                broken_note,
            },
        ) => {
            assert_eq!(proposals.len(), *count, "{}: calls", row.what);
            assert!(
                proposals.iter().all(|p| p.source == *source),
                "{}: {proposals:?}",
                row.what
            );
            assert_eq!(broken_note, note, "{}: broken note", row.what);
        }
        (leads, action) => panic!("{}: expected {leads:?}, got {action:?}", row.what),
    }
    let warnings: Vec<(WarningCode, &str)> = t
        .record()
        .warnings
        .iter()
        .map(|w| (w.code, w.message.as_str()))
        .collect();
    match (row.warning, warnings.as_slice()) {
        (None, []) => {}
        (Some((code, says)), [(got, message)]) if code == *got && message.contains(says) => {}
        (expected, got) => panic!("{}: warning {expected:?}, got {got:?}", row.what),
    }
    assert_eq!(
        t.record().facts.malformed_tool_call,
        row.malformed_fact,
        "{}: malformed fact",
        row.what
    );
}

/// Proves what a reply leads to: chat turns never dispatch, prose ends the loop, native calls
/// win over text ones, and a broken call beside valid ones is noted and warned about.
#[test]
fn a_reply_leads_to_an_answer_or_to_calls() {
    let base = || ReplyRow {
        what: "",
        request: EDIT,
        native: Vec::new(),
        text: TextCalls::default(),
        leads: Leads::Answer(""),
        warning: None,
        malformed_fact: false,
    };
    let rows = vec![
        ReplyRow {
            what: "a chat turn ignores native calls and answers its prose",
            request: CHAT,
            native: vec![native("talos.read_file", r#"{"path":"a.txt"}"#)],
            text: text("Hello!", 0, None),
            leads: Leads::Answer("Hello!"),
            warning: Some((
                WarningCode::ToolCallIgnoredOnChatTurn,
                "1 tool call(s) ignored: this turn exposes no tools",
            )),
            ..base()
        },
        ReplyRow {
            what: "a chat turn with calls and no prose falls back to the fixed greeting",
            request: CHAT,
            text: text("", 2, None),
            leads: Leads::Answer(CHAT_FALLBACK),
            warning: Some((WarningCode::ToolCallIgnoredOnChatTurn, "2 tool call(s)")),
            ..base()
        },
        ReplyRow {
            what: "a chat turn with nothing said falls back to the fixed greeting, no warning",
            request: CHAT,
            leads: Leads::Answer(CHAT_FALLBACK),
            ..base()
        },
        ReplyRow {
            what: "prose without calls on a change turn is re-prompted once, naming the target",
            text: text("TIMEOUT is 30.", 0, None),
            leads: Leads::Retry("requires a change that has not been made: settings.py"),
            warning: Some((WarningCode::ObligationRetry, "action: settings.py")),
            ..base()
        },
        ReplyRow {
            what: "a refusal on a change turn is re-prompted with the tools on the surface",
            text: text("I can't create or edit files.", 0, None),
            leads: Leads::Retry("the tools on this turn are: talos.read_file"),
            warning: Some((WarningCode::ObligationRetry, "action: settings.py")),
            ..base()
        },
        ReplyRow {
            what: "a question answered without reading is re-prompted for the file",
            request: QUESTION,
            text: text("It sets a timeout.", 0, None),
            leads: Leads::Retry("Call talos.read_file on settings.py"),
            warning: Some((WarningCode::ObligationRetry, "evidence: settings.py")),
            ..base()
        },
        ReplyRow {
            what: "a broken call alone is re-prompted too, with the malformed fact",
            text: text("Let me look.", 0, Some("not valid JSON")),
            leads: Leads::Retry("requires a change"),
            warning: Some((WarningCode::ObligationRetry, "action: settings.py")),
            malformed_fact: true,
            ..base()
        },
        ReplyRow {
            what: "text calls are dispatched",
            text: text("", 2, None),
            leads: Leads::Dispatch(2, "text", false),
            ..base()
        },
        ReplyRow {
            what: "a broken call beside valid text calls is warned about and noted",
            text: text("", 1, Some("unterminated string")),
            leads: Leads::Dispatch(1, "text", true),
            warning: Some((WarningCode::MalformedCallIgnored, "unterminated string")),
            ..base()
        },
        ReplyRow {
            what: "a broken call with no reason gets the default reason",
            text: text("", 1, Some("")),
            leads: Leads::Dispatch(1, "text", true),
            warning: Some((
                WarningCode::MalformedCallIgnored,
                "an invalid tool-call block was ignored",
            )),
            ..base()
        },
        ReplyRow {
            what: "native calls win over text ones, and a broken text block is not noted",
            native: vec![native("talos.read_file", r#"{"path":"settings.py"}"#)],
            text: text("", 2, Some("bad")),
            leads: Leads::Dispatch(1, "native", false),
            ..base()
        },
    ];
    for row in rows {
        check_reply(row);
    }
}

/// Proves native arguments that do not parse become the call's error, with the cut-off note
/// only when the reply ended at the token limit.
#[test]
fn broken_native_arguments_say_when_the_reply_was_cut_off() {
    const CUT: &str = "(the reply was cut off at the token limit)";
    // (what, arguments, finish reason, parsed, carries the cut-off note)
    let rows = [
        (
            "whole arguments parse",
            r#"{"path":"a.txt"}"#,
            "length",
            true,
            false,
        ),
        ("empty arguments are no arguments", "", "stop", true, false),
        (
            "broken arguments at a normal stop",
            r#"{"path":"a.t"#,
            "stop",
            false,
            false,
        ),
        (
            "broken arguments cut at the limit",
            r#"{"path":"a.t"#,
            "length",
            false,
            true,
        ),
    ];
    for (what, arguments, finish, parsed, note) in rows {
        let got = proposals(
            &[native("talos.read_file", arguments)],
            finish,
            &TextCalls::default(),
        );
        let [one] = got.as_slice() else {
            panic!("{what}: {got:?}")
        };
        assert_eq!(one.args.is_ok(), parsed, "{what}: {:?}", one.args);
        assert_eq!(one.native_id, "n1", "{what}");
        let error = one.args.as_ref().err().cloned().unwrap_or_default();
        assert_eq!(error.contains(CUT), note, "{what}: {error}");
        if !parsed {
            assert!(
                error.starts_with("tool-call arguments are not valid JSON"),
                "{what}: {error}"
            );
        }
    }
}

/// A turn whose plan allows `budget` model calls.
fn budgeted(request: &str, budget: usize) -> Turn {
    let effective = apply(SessionMode::Agent.posture(), resolve(request));
    let claims = TurnPlan::claims_for(&effective);
    let settings = PlanSettings {
        iteration_budget: budget,
        ..PlanSettings::default()
    };
    let plan = match TurnPlan::new(effective, claims, settings) {
        Ok(plan) => plan,
        Err(e) => panic!("{request}: {e}"),
    };
    Turn::new(
        plan,
        turn_support::settings(SessionMode::Agent),
        Grants::default(),
    )
}

/// Proves when the loop ends after a model call's calls: a call's stop wins, then the guard's
/// failure count, then the iteration budget at index + 1 == budget.
#[test]
fn the_loop_stops_for_a_call_the_guard_or_the_budget() {
    // (what, budget, failed calls before, a call's stop, index, stop contains, warning)
    let rows: Vec<(
        &str,
        usize,
        usize,
        Option<&str>,
        usize,
        Option<&str>,
        Option<WarningCode>,
    )> = vec![
        ("nothing stops the loop early", 3, 0, None, 0, None, None),
        (
            "nothing stops the loop before the last call",
            3,
            0,
            None,
            1,
            None,
            None,
        ),
        (
            "the last call of the budget stops the loop",
            3,
            0,
            None,
            2,
            Some("[Tool loop stopped: the iteration limit of 3 model calls was reached.]"),
            Some(WarningCode::IterationLimit),
        ),
        (
            "a budget of one stops after the first call",
            1,
            0,
            None,
            0,
            Some("the iteration limit of 1 model calls"),
            Some(WarningCode::IterationLimit),
        ),
        (
            "a call's stop ends the loop",
            3,
            0,
            Some("[Tool loop stopped because the requested change was not approved.]"),
            0,
            Some("the requested change was not approved"),
            Some(WarningCode::ToolLoopStopped),
        ),
        (
            "a call's stop wins over the iteration limit",
            3,
            0,
            Some("stop now"),
            2,
            Some("stop now"),
            Some(WarningCode::ToolLoopStopped),
        ),
        (
            "three failed calls do not stop the loop",
            8,
            3,
            None,
            0,
            None,
            None,
        ),
        (
            "four failed calls stop the loop",
            8,
            4,
            None,
            0,
            Some("[Tool loop stopped: 4 tool calls failed in this turn.]"),
            Some(WarningCode::ToolLoopStopped),
        ),
    ];
    for (what, budget, failures, stop, index, says, warning) in rows {
        let mut t = budgeted(EDIT, budget);
        for i in 0..failures {
            // Each an unknown tool with its own name: refused before any IO, counted.
            drive(&mut t, proposal(&format!("shell{i}"), &[]), &[]);
        }
        let before = t.record().warnings.len();
        let got = t.after_calls(stop.map(str::to_string), index);
        match (says, &got) {
            (None, None) => {}
            (Some(says), Some(got)) if got.contains(says) => {}
            _ => panic!("{what}: expected {says:?}, got {got:?}"),
        }
        let added: Vec<WarningCode> = t.record().warnings[before..]
            .iter()
            .map(|w| w.code)
            .collect();
        assert_eq!(added, warning.into_iter().collect::<Vec<_>>(), "{what}");
    }
}

/// Proves the text the model reads for a call's result, with and without the broken-call note.
#[test]
fn a_result_is_wrapped_for_the_model() {
    let report = |text: &str| CallReport {
        text: text.into(),
        mutated: false,
        stop: None,
    };
    let rows = [
        (
            "talos.read_file",
            "1 | TIMEOUT = 30",
            false,
            "[tool_result: talos.read_file]\n1 | TIMEOUT = 30\n[/tool_result]",
        ),
        (
            "talos.edit_file",
            "[error] no",
            true,
            "[tool_result: talos.edit_file]\n[error] no\n[/tool_result]\n[note] Another tool-call block in your reply was not valid JSON and was ignored; nothing ran for it.",
        ),
    ];
    for (name, text, note, expected) in rows {
        assert_eq!(
            tool_result_message(name, &report(text), note),
            expected,
            "{name}"
        );
    }
}

/// Proves the retry is bounded and its failure recorded from the records: a change turn whose
/// model answers in prose twice gets one re-prompt, then its answer stands with the change not
/// taken and (no call at all on a turn that offered tools) a capability denial, whatever the
/// words; a question whose model reads after the re-prompt has nothing missing; and a retry is
/// never sent when no model call is left to answer it.
#[test]
fn an_obligation_is_retried_once_and_its_failure_recorded() {
    let mut t = agent(EDIT);
    let surface = t
        .begin_model_call(0)
        .expect("the first surface is admitted");
    let first = t.reply(
        0,
        &surface,
        &[],
        "stop",
        text("Sure, TIMEOUT = 60.", 0, None),
    );
    assert!(matches!(first, ReplyAction::Retry(_)), "{first:?}");
    let second = t.reply(
        1,
        &surface,
        &[],
        "stop",
        text("Here is the code: TIMEOUT = 60", 0, None),
    );
    assert_eq!(
        second,
        ReplyAction::Answer("Here is the code: TIMEOUT = 60".into())
    );
    turn_support::model_answered(&mut t);
    t.settle();
    let facts = &t.record().facts;
    assert_eq!(facts.obligation_retries, 1);
    assert!(
        facts.action_not_taken && facts.capability_denied,
        "{facts:?}"
    );

    let mut q = agent(QUESTION);
    let surface = q.surface();
    let first = q.reply(
        0,
        &surface,
        &[],
        "stop",
        text("It sets a timeout.", 0, None),
    );
    assert!(matches!(first, ReplyAction::Retry(_)), "{first:?}");
    q.record_for_rows().read_paths.push("settings.py".into());
    let second = q.reply(
        1,
        &surface,
        &[],
        "stop",
        text("It sets TIMEOUT = 30.", 0, None),
    );
    assert_eq!(second, ReplyAction::Answer("It sets TIMEOUT = 30.".into()));
    turn_support::model_answered(&mut q);
    q.settle();
    assert!(
        q.record().facts.evidence_missing.is_empty(),
        "{:?}",
        q.record().facts
    );

    let mut last = agent(EDIT);
    let surface = last.surface();
    let budget = last.plan.iteration_budget();
    let answer = last.reply(budget - 1, &surface, &[], "stop", text("No.", 0, None));
    assert_eq!(answer, ReplyAction::Answer("No.".into()));
}

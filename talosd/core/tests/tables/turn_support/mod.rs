//! The pretend daemon the turn row tests share: a script of replies, one per effect the core
//! asks for, the `drive` loop that feeds them to `Call::step`, and the `Row`/`check` pair every
//! call row goes through (the effects seen, the report, and what the records must hold).
//! Each test file uses a part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use talos_core::command::{CommandPlan, Isolation, Program};
use talos_core::contract::{TaskContract, resolve};
use talos_core::ladder::{Grants, PathFacts};
use talos_core::modes::SessionMode;
use talos_core::outcome::{MutationRecord, MutationResult};
use talos_core::plan::TurnPlan;
use talos_core::posture::apply;
use talos_core::protected::protected_kind;
use talos_core::turn::call::{
    CommandRun, Effect, Input, PlannedCommand, Proposal, ResolvedPath, WriteFailure,
};
use talos_core::turn::record::{
    Answer, AnswerSource, CheckpointTaken, Decision, ModelCallRecord, WarningCode,
};
use talos_core::turn::{Turn, TurnSettings};

/// How the pretend daemon answers an effect.
#[derive(Clone)]
pub enum Reply {
    /// Resolve every path inside the workspace (protected flagged, `..` escaping).
    Paths,
    /// The final component is a symlink.
    SymlinkPaths,
    Approve,
    ApproveForSession,
    Deny,
    Output(&'static str),
    Current(Option<&'static str>),
    Bytes(&'static [u8]),
    Checkpoint,
    CheckpointFails,
    /// The turn was cancelled while the checkpoint was being taken.
    Cancelled,
    Written,
    /// Written, but the read-back shows these bytes.
    WrittenAs(&'static [u8]),
    Stale,
    OpsOk,
    /// The paths each op touches, source first (a rename's destination second).
    OpsTouched(&'static [&'static [&'static str]]),
    OpsRefused(&'static str),
    OpsApplied(&'static [Result<&'static str, &'static str>]),
    Planned(&'static str),
    Ran(i32),
    /// A run as the runner saw it: (exit code, timed out, cancelled, stdout).
    RanAs(i32, bool, bool, &'static str),
    Ack,
    /// The daemon could not perform the effect (say, no unguessable approval id).
    Failed(&'static str),
    /// Each `pre_call` hook's standard output; `!why` for a hook that failed.
    Hooks(&'static [&'static str]),
}

/// The effect's name, for the row's expected sequence.
pub fn name(effect: &Effect) -> &'static str {
    match effect {
        Effect::Resolve(_) => "resolve",
        Effect::Ask(_) => "ask",
        Effect::Read(_) => "read",
        Effect::ReadCurrent { .. } => "current",
        Effect::Checkpoint { .. } => "checkpoint",
        Effect::Write { .. } => "write",
        Effect::CheckOps(_) => "check-ops",
        Effect::ApplyOps(_) => "apply-ops",
        Effect::PlanCommand(_) => "plan-command",
        Effect::RunCommand { .. } => "run-command",
        Effect::RememberWrites => "remember",
        Effect::PreCall(_) => "pre-call",
        Effect::CallExternal { .. } => "call-external",
        Effect::Finish(_) => "finish",
    }
}

pub fn facts(raw: &str) -> ResolvedPath {
    // The pretend kernel: `link/` is a symlink to a directory outside the workspace, and the
    // files under `shared/` are hard links (two names each).
    let escapes = raw.starts_with("link/");
    let hard_links = if raw.starts_with("shared/") { 2 } else { 1 };
    ResolvedPath {
        facts: PathFacts {
            relative: Some(raw.trim_start_matches("./").to_string()),
            escapes,
            problem: escapes.then(|| "symlink leaves the workspace".to_string()),
            protected: protected_kind(raw),
            hard_links,
        },
        final_is_symlink: false,
    }
}

pub fn plan_of(profile: &str) -> CommandPlan {
    CommandPlan {
        profile_id: profile.into(),
        program: Program::OnPath("cargo".into()),
        args: vec!["test".into()],
        cwd: ".".into(),
        timeout_ms: 1000,
        stdout_cap: 100,
        stderr_cap: 100,
        isolation: Isolation::default(),
        expected_writes: Vec::new(),
        description: vec!["argv: cargo test".into()],
    }
}

fn run(exit_code: i32, timed_out: bool, cancelled: bool, stdout: &str) -> Input {
    Input::CommandRan(Ok(CommandRun {
        exit_code: Some(exit_code),
        timed_out,
        cancelled,
        duration_ms: 5,
        stdout: stdout.as_bytes().to_vec(),
        stderr: Vec::new(),
        stdout_truncated: false,
        stderr_truncated: false,
    }))
}

pub fn answer(reply: &Reply, effect: &Effect) -> Input {
    let approved = |decision| Input::Answered {
        request_id: "apr-1".into(),
        answer: Answer {
            decision,
            source: AnswerSource::Client,
        },
    };
    match (reply, effect) {
        (Reply::Paths, Effect::Resolve(paths)) => {
            Input::Resolved(paths.iter().map(|p| facts(p)).collect())
        }
        (Reply::SymlinkPaths, Effect::Resolve(paths)) => Input::Resolved(
            paths
                .iter()
                .map(|p| ResolvedPath {
                    final_is_symlink: true,
                    ..facts(p)
                })
                .collect(),
        ),
        (Reply::Failed(reason), _) => Input::Failed((*reason).into()),
        (Reply::Approve, _) => approved(Decision::Approve),
        (Reply::ApproveForSession, _) => approved(Decision::ApproveForSession),
        (Reply::Deny, _) => approved(Decision::Deny),
        (Reply::Output(text), _) => Input::Output(Ok((*text).into())),
        (Reply::Current(text), _) => Input::Current(Ok(text.map(|t| t.as_bytes().to_vec()))),
        (Reply::Bytes(bytes), _) => Input::Current(Ok(Some(bytes.to_vec()))),
        (Reply::Checkpoint, _) => Input::Checkpointed(Ok(CheckpointTaken {
            checkpoint_id: "ckp-1".into(),
            existed_before: true,
            blob_sha256: None,
        })),
        (Reply::CheckpointFails, _) => Input::Checkpointed(Err("disk full".into())),
        (Reply::Cancelled, _) => Input::Cancelled,
        (Reply::Written, Effect::Write { bytes, .. }) => Input::Written(Ok(bytes.clone())),
        (Reply::WrittenAs(bytes), _) => Input::Written(Ok(bytes.to_vec())),
        (Reply::Stale, _) => Input::Written(Err(WriteFailure::Stale)),
        (Reply::OpsOk, Effect::CheckOps(ops)) => Input::OpsChecked(Ok(ops
            .iter()
            .map(|op| vec![op.primary_path().to_string()])
            .collect())),
        (Reply::OpsTouched(touched), _) => Input::OpsChecked(Ok(touched
            .iter()
            .map(|paths| paths.iter().map(|p| p.to_string()).collect())
            .collect())),
        (Reply::OpsRefused(why), _) => Input::OpsChecked(Err((0, (*why).into()))),
        (Reply::OpsApplied(results), _) => Input::OpsApplied(
            results
                .iter()
                .map(|r| r.map(str::to_string).map_err(str::to_string))
                .collect(),
        ),
        (Reply::Planned(profile), _) => Input::CommandPlanned(Ok(PlannedCommand {
            plan: plan_of(profile),
            network_isolated: false,
            writes_confined: false,
        })),
        (Reply::Ran(code), _) => run(*code, false, false, "ok"),
        (Reply::RanAs(code, timed_out, cancelled, stdout), _) => {
            run(*code, *timed_out, *cancelled, stdout)
        }
        (Reply::Ack, _) => Input::Done,
        (Reply::Hooks(outputs), _) => Input::Hooked(
            outputs
                .iter()
                .map(|o| match o.strip_prefix('!') {
                    Some(why) => talos_core::hooks::HookRun::Failed(why.into()),
                    None => talos_core::hooks::HookRun::Exited(o.as_bytes().to_vec()),
                })
                .collect(),
        ),
        (_, effect) => panic!("the script cannot answer {effect:?}"),
    }
}

/// The settings every row turn uses.
pub fn settings(mode: SessionMode) -> TurnSettings {
    TurnSettings {
        mode,
        strict_names: false,
        rules: Vec::new(),
        require_tool_call: true,
        allow_invisible_path_characters: false,
        model: Default::default(),
        pre_call_hooks: 0,
    }
}

/// The plan of `contract` under `mode`'s posture, with default plan settings.
pub fn plan_for(contract: TaskContract, mode: SessionMode) -> TurnPlan {
    TurnPlan::from_turn(apply(mode.posture(), contract))
}

pub fn turn(request: &str, mode: SessionMode, grants: Grants) -> Turn {
    Turn::new(plan_for(resolve(request), mode), settings(mode), grants)
}

pub fn proposal(name: &str, args: &[(&str, &str)]) -> Proposal {
    Proposal {
        native_id: String::new(),
        name: name.into(),
        args: Ok(args
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect::<BTreeMap<_, _>>()),
        source: "text",
    }
}

/// Drives one call through the script; returns the effects seen and the last effect.
pub fn drive(turn: &mut Turn, proposal: Proposal, script: &[Reply]) -> (Vec<&'static str>, Effect) {
    let mut call = turn.propose(proposal);
    let mut input = Input::Start;
    let mut seen = Vec::new();
    let mut replies = script.iter();
    loop {
        let effect = call.step(turn, input);
        seen.push(name(&effect));
        if let Effect::Finish(_) = effect {
            return (seen, effect);
        }
        let reply = replies
            .next()
            .unwrap_or_else(|| panic!("script ended at {effect:?}"));
        input = answer(reply, &effect);
    }
}

/// What the turn's records must hold after a row; `Err` says what is wrong.
pub type Holds = fn(&Turn) -> Result<(), String>;

pub struct Row {
    pub what: &'static str,
    pub request: &'static str,
    pub mode: SessionMode,
    /// Calls made before the one under test, each with its script (to read first, ...).
    pub before: Vec<(Proposal, Vec<Reply>)>,
    pub call: Proposal,
    pub script: Vec<Reply>,
    pub effects: &'static [&'static str],
    /// The report's text contains this.
    pub says: &'static str,
    pub stops: bool,
    /// When the loop stops, the stop reason contains this.
    pub stop_says: &'static str,
    pub mutated: bool,
    /// What the records must hold afterwards.
    pub holds: Holds,
}

pub fn row(what: &'static str, request: &'static str, call: Proposal) -> Row {
    Row {
        what,
        request,
        mode: SessionMode::Agent,
        before: Vec::new(),
        call,
        script: Vec::new(),
        effects: &[],
        says: "",
        stops: false,
        stop_says: "",
        mutated: false,
        holds: |_| Ok(()),
    }
}

pub fn check(row: Row, grants: Grants) -> Turn {
    let mut turn = turn(row.request, row.mode, grants);
    for (call, script) in row.before {
        drive(&mut turn, call, &script);
    }
    let (seen, last) = drive(&mut turn, row.call, &row.script);
    let Effect::Finish(report) = last else {
        unreachable!()
    };
    assert_eq!(
        seen, row.effects,
        "{}: effects (report {:?})",
        row.what, report.text
    );
    assert!(
        report.text.contains(row.says),
        "{}: report {:?} lacks {:?}",
        row.what,
        report.text,
        row.says
    );
    assert_eq!(
        report.stop.is_some(),
        row.stops,
        "{}: stop {:?}",
        row.what,
        report.stop
    );
    if let Some(stop) = &report.stop {
        assert!(
            stop.contains(row.stop_says),
            "{}: stop {stop:?} lacks {:?}",
            row.what,
            row.stop_says
        );
    }
    assert_eq!(report.mutated, row.mutated, "{}: mutated", row.what);
    if let Err(problem) = (row.holds)(&turn) {
        panic!("{}: {problem}", row.what);
    }
    turn
}

/// Whether the record carries a warning with `code`.
pub fn warned(turn: &Turn, code: WarningCode) -> bool {
    turn.record().warnings.iter().any(|w| w.code == code)
}

/// `Ok` when the record carries a warning with `code`.
pub fn has_warning(turn: &Turn, code: WarningCode) -> Result<(), String> {
    if warned(turn, code) {
        Ok(())
    } else {
        Err(format!(
            "no {} warning in {:?}",
            code.as_str(),
            turn.record().warnings
        ))
    }
}

pub const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";

pub fn read_settings() -> (Proposal, Vec<Reply>) {
    (
        proposal("talos.read_file", &[("path", "settings.py")]),
        vec![Reply::Paths, Reply::Output("1 | TIMEOUT = 30")],
    )
}

pub fn edit_settings() -> Proposal {
    proposal(
        "talos.edit_file",
        &[
            ("path", "settings.py"),
            ("old_string", "TIMEOUT = 30"),
            ("new_string", "TIMEOUT = 60"),
        ],
    )
}

/// A turn over `request`'s contract as `change` rewrites it.
pub fn turn_with(request: &str, change: fn(&mut TaskContract)) -> Turn {
    let mut contract = resolve(request);
    change(&mut contract);
    let settings = settings(SessionMode::Agent);
    Turn::new(
        plan_for(contract, SessionMode::Agent),
        settings,
        Grants::default(),
    )
}

/// Records a change of `target` with `result`.
pub fn mutated(t: &mut Turn, target: &str, result: MutationResult) {
    t.record_for_rows().facts.mutations.push(MutationRecord {
        target: target.into(),
        result,
    });
}

/// Records that the model answered once.
pub fn model_answered(t: &mut Turn) {
    t.record_for_rows().model_calls.push(ModelCallRecord {
        context_tokens: None,
        budgeted_tokens: None,
        cut: Vec::new(),
        index: 0,
        finish_reason: "stop".into(),
        content: Default::default(),
        tool_calls: 0,
        prompt_tokens: None,
        completion_tokens: None,
        cached_tokens: None,
        error: None,
    });
}

/// The messages of the warnings with `code`, in order.
pub fn warnings(t: &Turn, code: WarningCode) -> Vec<String> {
    t.record()
        .warnings
        .iter()
        .filter(|w| w.code == code)
        .map(|w| w.message.clone())
        .collect()
}

//! One proposed call as a sans-IO state machine. [`Call::step`] takes the answer to the last
//! effect and returns the next effect the daemon must perform, in docs/policy.md's order:
//! payload, the fixed checks, the ladder (once the daemon has resolved the paths in the
//! kernel), loop discipline, then the tool's own flow (read, governed write, workspace
//! operations, command). Every refusal is recorded and told to the model; nothing is written
//! on any refusal. The daemon holds no `if` about policy: it performs [`Effect`]s.

mod command;
mod external;
mod read;
mod workspace_ops;
mod write;

use std::collections::BTreeMap;

use super::record::{CallStage, ToolCallRecord, WarningCode};
use super::{CallStatus, Notice, Turn};
use crate::planning::command::{CommandPlan, CommandRequest};
use crate::planning::ops::WorkspaceOp;
use crate::planning::tools::{ToolArgs, ToolId};
use crate::proposal::check::{self, CheckOutcome};
use crate::proposal::discipline::{CallEnd, Verdict};
use crate::proposal::ladder::{self, Action, LadderInput, PathFacts, PermissionDecision};
use crate::request::outcome::{MutationRecord, MutationResult};
use crate::text::digest::digest_text;

pub use command::{CommandRun, PlannedCommand};
pub use external::ExternalOutput;
pub use write::WriteFailure;

/// A call as the model proposed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub native_id: String,
    pub name: String,
    /// The arguments, or why they could not be read.
    pub args: Result<BTreeMap<String, String>, String>,
    /// `native`, `text`, or `runtime` (a read the runtime made itself before the first model
    /// call, issue 15).
    pub source: &'static str,
}

/// A path as the daemon's workspace handle resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    pub facts: PathFacts,
    /// The last component is itself a symlink (inside the workspace); writes refuse it.
    pub final_is_symlink: bool,
}

/// A request for the person's approval, before the daemon gives it an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalAsk {
    /// The tool's name as the person sees it (`talos.edit_file`, `mcp.fs.write_text`).
    pub tool: String,
    pub description: String,
    pub target: Option<String>,
    pub details: Vec<String>,
    pub diff: Option<crate::text::diff::Preview>,
    /// The whole text before and after, for clients that draw their own diff (ACP editors);
    /// only for text files up to [`FULL_CHANGE_CAP`] bytes on each side.
    pub change: Option<ProposedChange>,
    pub remember_eligible: bool,
}

/// Beyond this many bytes on either side an approval carries only the capped diff.
pub const FULL_CHANGE_CAP: usize = 256 * 1024;

/// A text file's whole content before (`None`: it does not exist yet) and after a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedChange {
    pub path: String,
    pub before: Option<String>,
    pub after: String,
}

impl ProposedChange {
    /// The change when both sides are text within the cap.
    pub fn of(path: &str, before: Option<&[u8]>, after: &str) -> Option<ProposedChange> {
        let before = match before {
            Some(bytes) if bytes.len() <= FULL_CHANGE_CAP => {
                Some(String::from_utf8(bytes.to_vec()).ok()?)
            }
            Some(_) => return None,
            None => None,
        };
        (after.len() <= FULL_CHANGE_CAP).then(|| ProposedChange {
            path: path.to_string(),
            before,
            after: after.to_string(),
        })
    }
}

/// What the daemon must do next for this call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Resolve each raw path beneath the workspace root; answer [`Input::Resolved`].
    Resolve(Vec<String>),
    /// Ask the turn's client; answer [`Input::Answered`] with the request id it used.
    Ask(ApprovalAsk),
    /// Read a read tool's output; answer [`Input::Output`].
    Read(ToolArgs),
    /// Read a file's current bytes before a write; answer [`Input::Current`].
    ReadCurrent { path: String },
    /// Take a checkpoint of `paths` (with `before` as the bytes of a single file); answer
    /// [`Input::Checkpointed`]. No checkpoint, no write.
    Checkpoint {
        tool: ToolId,
        paths: Vec<String>,
        before: Option<Option<Vec<u8>>>,
    },
    /// Write `bytes` to `path` if its bytes are still `expected`, then read it back; answer
    /// [`Input::Written`].
    Write {
        path: String,
        expected: Option<Vec<u8>>,
        bytes: Vec<u8>,
    },
    /// Check typed operations against the disk; answer [`Input::OpsChecked`].
    CheckOps(Vec<WorkspaceOp>),
    /// Apply checked operations in order, stopping at the first failure; answer
    /// [`Input::OpsApplied`].
    ApplyOps(Vec<WorkspaceOp>),
    /// Plan a command against the workspace's profiles and locate it; answer
    /// [`Input::CommandPlanned`].
    PlanCommand(CommandRequest),
    /// Run the planned command (trust checked again first); answer [`Input::CommandRan`].
    RunCommand {
        request: CommandRequest,
        plan: CommandPlan,
    },
    /// Remember write approvals for the session; answer [`Input::Done`].
    RememberWrites,
    /// Call `tool` of the MCP server `server`; answer [`Input::External`] once the call was
    /// sent, or [`Input::ExternalNotSent`] when it was not: the server could not be reached, or
    /// one of `unasked_paths` resolves outside the workspace (through a link the text of the
    /// path does not show).
    CallExternal {
        server: String,
        tool: String,
        arguments: serde_json::Map<String, serde_json::Value>,
        /// Paths the arguments name, inside the workspace by their text (relative to it), that
        /// nobody was asked about (a rule allowed the call).
        unasked_paths: Vec<String>,
    },
    /// Run each `hooks.pre_call` hook with this JSON on its standard input; answer
    /// [`Input::Hooked`] with one run per hook, in order.
    PreCall(serde_json::Value),
    /// The call is over.
    Finish(CallReport),
}

/// The answer to the last effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Start,
    Done,
    /// The turn was cancelled before a checkpoint: nothing more is done.
    Cancelled,
    Resolved(Vec<ResolvedPath>),
    Answered {
        request_id: String,
        answer: super::record::Answer,
    },
    Output(Result<String, String>),
    Current(Result<Option<Vec<u8>>, String>),
    Checkpointed(Result<super::record::CheckpointTaken, String>),
    Written(Result<Vec<u8>, WriteFailure>),
    /// For each op, the workspace-relative paths it touches (source first), or the index
    /// and reason of the first op that cannot run.
    OpsChecked(Result<Vec<Vec<String>>, (usize, String)>),
    /// One summary per applied op; an error ends the list.
    OpsApplied(Vec<Result<String, String>>),
    CommandPlanned(Result<PlannedCommand, String>),
    CommandRan(Result<CommandRun, String>),
    Hooked(Vec<crate::proposal::hooks::HookRun>),
    /// The MCP server's answer, or why there is none (crash, timeout, malformed answer).
    External(Result<ExternalOutput, String>),
    /// The daemon did not send the MCP call, and why (the server could not be reached or
    /// offers no such tool, or a path nobody was asked about resolves outside the workspace).
    ExternalNotSent(String),
    /// The daemon could not perform the effect at all (for example, no unguessable id could be
    /// made for an approval): the call ends with nothing done and is recorded as failed.
    Failed(String),
}

/// What the model is told, whether a change was written, and whether the loop must stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallReport {
    pub text: String,
    pub mutated: bool,
    pub stop: Option<String>,
}

/// One call in flight.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    proposal: Proposal,
    state: State,
}

#[derive(Debug, Clone)]
pub(crate) enum State {
    Start,
    Resolving {
        tool: ToolId,
        args: ToolArgs,
    },
    /// The ladder has decided; the `pre_call` hooks are asked.
    Hooking(Accepted),
    Read(read::ReadFlow),
    Write(write::WriteFlow),
    Ops(workspace_ops::OpsFlow),
    Command(command::CommandFlow),
    External(external::ExternalFlow),
    /// The daemon answered an effect with an input that does not fit it: the call ended with
    /// nothing done, and is recorded as failed.
    Broken,
    Done,
}

/// The accepted call as every flow sees it.
#[derive(Debug, Clone)]
pub(crate) struct Accepted {
    pub tool: ToolId,
    pub args: ToolArgs,
    pub decision: PermissionDecision,
    /// The first path's facts (the escaping one when any escapes).
    pub facts: PathFacts,
    pub first: Option<ResolvedPath>,
}

impl Accepted {
    pub(crate) fn shown(&self) -> String {
        self.facts.relative.clone().unwrap_or_default()
    }
}

impl Call {
    pub fn new(id: String, proposal: Proposal) -> Call {
        Call {
            id,
            proposal,
            state: State::Start,
        }
    }

    pub fn proposal(&self) -> &Proposal {
        &self.proposal
    }

    /// Advances the call with the answer to the last effect.
    pub fn step(&mut self, turn: &mut Turn, input: Input) -> Effect {
        let state = std::mem::replace(&mut self.state, State::Done);
        if let Input::Failed(reason) = input {
            return self.failed(turn, reason);
        }
        let (next, effect) = match state {
            State::Start => self.start(turn),
            State::Resolving { tool, args } => match input {
                Input::Resolved(paths) => self.resolved(turn, tool, args, paths),
                other => unexpected(&other),
            },
            State::Hooking(accepted) => match input {
                Input::Hooked(runs) => self.hooked(turn, accepted, &runs),
                other => unexpected(&other),
            },
            State::Read(flow) => flow.step(self, turn, input),
            State::Write(flow) => flow.step(self, turn, input),
            State::Ops(flow) => flow.step(self, turn, input),
            State::Command(flow) => flow.step(self, turn, input),
            State::External(flow) => flow.step(self, turn, input),
            State::Done | State::Broken => unexpected(&input),
        };
        self.state = match next {
            State::Broken => {
                let reason = Some("internal: the daemon's answer did not fit the effect".into());
                self.record(turn, None, None, CallStage::Failed, reason);
                State::Done
            }
            next => next,
        };
        effect
    }

    /// The daemon could not perform the last effect: nothing more is done, and the loop stops.
    fn failed(&mut self, turn: &mut Turn, reason: String) -> Effect {
        self.record(turn, None, None, CallStage::Failed, Some(reason.clone()));
        self.state = State::Done;
        let (_, effect) = finish(
            format!("[error] {reason}; nothing was done"),
            false,
            Some("[Tool loop stopped: the daemon could not carry out a step.]".into()),
        );
        effect
    }

    fn start(&mut self, turn: &mut Turn) -> (State, Effect) {
        let name = self.proposal.name.clone();
        let raw = match &self.proposal.args {
            Ok(raw) => raw.clone(),
            Err(e) => {
                turn.record.facts.malformed_tool_call = true;
                let reason = format!("invalid tool-call payload: {e}");
                self.record(turn, None, None, CallStage::Rejected, Some(reason));
                let stop = turn.guard.note_rejection(&format!("invalid:{name}"));
                let text = format!("[error] Invalid tool-call payload for {name}: {e}");
                return finish(text, false, stop);
            }
        };
        if name.starts_with("mcp.") {
            return external::ExternalFlow::start(self, turn, &raw);
        }
        let surface = turn.surface();
        let checked = check::check_call(
            &name,
            &raw,
            &turn.plan,
            &surface,
            turn.phase,
            turn.settings.strict_names,
        );
        match checked {
            CheckOutcome::Accepted { tool, args, .. } => {
                let outside = tool
                    .mutates()
                    .then(|| turn.outside_repair(&args.paths()))
                    .flatten();
                if let Some(message) = outside {
                    return self.rejected(turn, &raw, Some(tool), check::Stage::Surface, message);
                }
                if !turn.settings.allow_invisible_path_characters
                    && let Some(message) = invisible_path(&args)
                {
                    return self.rejected(
                        turn,
                        &raw,
                        Some(tool),
                        check::Stage::Validation,
                        message,
                    );
                }
                let paths = args.paths().iter().map(|p| p.to_string()).collect();
                (State::Resolving { tool, args }, Effect::Resolve(paths))
            }
            CheckOutcome::Rejected {
                tool,
                stage,
                message,
            } => self.rejected(turn, &raw, tool, stage, message),
        }
    }

    pub(crate) fn rejected(
        &mut self,
        turn: &mut Turn,
        raw: &BTreeMap<String, String>,
        tool: Option<ToolId>,
        stage: check::Stage,
        message: String,
    ) -> (State, Effect) {
        let path_hint = raw
            .get("path")
            .or_else(|| raw.get("file_path"))
            .map(|p| crate::text::deceptive::escaped(p));
        let reason = format!("{}: {message}", stage.as_str());
        self.record(
            turn,
            tool,
            path_hint.clone(),
            CallStage::Rejected,
            Some(reason),
        );
        turn.notify(Notice::ToolProgress {
            tool: self.proposal.name.clone(),
            call_id: self.id.clone(),
            message: format!("rejected before approval: {message}"),
        });
        if let Some(tool) = tool.filter(|t| t.mutates()) {
            if turn.plan.contract().mutation_allowed {
                let target = path_hint.unwrap_or_else(|| tool.name().into());
                turn.record.facts.mutations.push(MutationRecord {
                    target,
                    result: MutationResult::Blocked {
                        reason: message.clone(),
                    },
                });
            } else {
                turn.record.facts.read_only_blocked = true;
            }
        }
        let key = format!(
            "{}\u{1f}{}\u{1f}{message}",
            self.proposal.name,
            stage.as_str()
        );
        let stop = turn.guard.note_rejection(&key);
        finish(format!("[error] {message}"), false, stop)
    }

    fn resolved(
        &mut self,
        turn: &mut Turn,
        tool: ToolId,
        args: ToolArgs,
        paths: Vec<ResolvedPath>,
    ) -> (State, Effect) {
        let every: Vec<PathFacts> = paths.iter().map(|r| r.facts.clone()).collect();
        let facts = every
            .iter()
            .find(|f| f.escapes)
            .or_else(|| every.first())
            .cloned()
            .unwrap_or_else(PathFacts::none);
        let decision = ladder::decide_all(
            &LadderInput {
                tool,
                risk: args.effective_risk(),
                phase: turn.phase,
                rules: &turn.settings.rules,
                grants: turn.grants,
            },
            &every,
        );
        let accepted = Accepted {
            tool,
            args,
            decision,
            facts,
            first: paths.into_iter().next(),
        };
        if turn.settings.pre_call_hooks > 0 && accepted.decision.action != Action::Deny {
            let told = self.told_hooks(&accepted);
            return (State::Hooking(accepted), Effect::PreCall(told));
        }
        self.decided(turn, accepted)
    }

    /// What the `pre_call` hooks are told about this call.
    fn told_hooks(&self, accepted: &Accepted) -> serde_json::Value {
        let empty = BTreeMap::new();
        crate::proposal::hooks::ProposedCall {
            call_id: &self.id,
            tool: accepted.tool.name(),
            arguments: self.proposal.args.as_ref().unwrap_or(&empty),
            target: accepted.facts.relative.as_deref(),
            ladder: &accepted.decision,
        }
        .to_json()
    }

    /// The hooks answered: their verdicts are recorded and narrow the ladder's decision.
    fn hooked(
        &mut self,
        turn: &mut Turn,
        mut accepted: Accepted,
        runs: &[crate::proposal::hooks::HookRun],
    ) -> (State, Effect) {
        accepted.decision = turn.narrowed_by_hooks(&self.id, accepted.decision, runs);
        self.decided(turn, accepted)
    }

    /// The call's decision is final: recorded, then denied, refused by the loop's discipline,
    /// or carried on.
    fn decided(&mut self, turn: &mut Turn, accepted: Accepted) -> (State, Effect) {
        let tool = accepted.tool;
        turn.permission(
            &self.id,
            tool,
            &accepted.decision,
            accepted.facts.relative.clone(),
        );
        if accepted.decision.action == Action::Deny {
            return self.denied_by_policy(turn, &accepted);
        }
        match turn.guard.before_call(tool, &accepted.args) {
            Verdict::Proceed => self.proceed(turn, accepted),
            Verdict::Refuse(message) => self.refused(turn, &accepted, message, false),
            Verdict::Stop(message) => self.refused(turn, &accepted, message, true),
            Verdict::AlreadyRead(path) => {
                turn.record.warn(
                    WarningCode::RepeatedRead,
                    format!("the model asked again for {path}, already read"),
                );
                let message = format!(
                    "{path} was already read in this turn and has not changed since: its content is in the conversation above (the earlier talos.read_file result), so it is not sent again. Go on with the change or the answer."
                );
                self.refused(turn, &accepted, message, false)
            }
        }
    }

    fn denied_by_policy(&mut self, turn: &mut Turn, accepted: &Accepted) -> (State, Effect) {
        let (tool, decision, facts) = (accepted.tool, &accepted.decision, &accepted.facts);
        let problem = facts
            .problem
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        let message = format!(
            "Permission policy denied the {} call. {}{problem}",
            tool.name(),
            decision.message
        );
        // A hook's deny carries the hook's reason (escaped and capped by the core): an editor
        // shows the call's reason, and the code alone says nothing about why.
        let code = match decision.reason_code {
            ladder::ReasonCode::HookDeny => {
                format!("{}: {}", decision.reason_code, decision.message)
            }
            _ => decision.reason_code.to_string(),
        };
        self.record(
            turn,
            Some(tool),
            facts.relative.clone(),
            CallStage::Denied,
            Some(code),
        );
        turn.notify(Notice::ToolProgress {
            tool: tool.name().into(),
            call_id: self.id.clone(),
            message: format!("denied by policy: {}", decision.reason_code),
        });
        if tool.mutates() {
            let target = facts.relative.clone().unwrap_or_default();
            turn.record.facts.mutations.push(MutationRecord {
                target: target.clone(),
                result: MutationResult::Blocked {
                    reason: decision.message.clone(),
                },
            });
            let detail = format!("denied by policy ({})", decision.reason_code);
            turn.record.file(&target, false, detail);
        }
        turn.guard.after_call(tool, &accepted.args, CallEnd::Failed);
        let stop = turn.guard.should_stop();
        finish(format!("[error] {message}"), false, stop)
    }

    fn refused(
        &mut self,
        turn: &mut Turn,
        accepted: &Accepted,
        message: String,
        stop: bool,
    ) -> (State, Effect) {
        let tool = accepted.tool;
        let path = accepted.args.path().map(str::to_string);
        let reason = Some(format!("discipline: {message}"));
        self.record(turn, Some(tool), path, CallStage::Rejected, reason);
        if stop {
            return finish(format!("[error] {message}"), false, Some(message));
        }
        turn.notify(Notice::ToolProgress {
            tool: tool.name().into(),
            call_id: self.id.clone(),
            message: format!("refused: {message}"),
        });
        let stop = turn.guard.should_stop();
        finish(format!("[error] {message}"), false, stop)
    }

    fn proceed(&mut self, turn: &mut Turn, accepted: Accepted) -> (State, Effect) {
        turn.notify(Notice::ToolProgress {
            tool: accepted.tool.name().into(),
            call_id: self.id.clone(),
            message: accepted.facts.relative.clone().unwrap_or_default(),
        });
        turn.notify(Notice::Call {
            call_id: self.id.clone(),
            tool: self.proposal.name.chars().take(100).collect(),
            status: CallStatus::Running,
            target: accepted.facts.relative.as_deref().map(hidden_if_protected),
            reason: None,
        });
        if let ToolArgs::RunCommand { request } = &accepted.args {
            let request = request.clone();
            return command::CommandFlow::start(accepted, request);
        }
        if accepted.tool.mutates() {
            if accepted.first.is_none() {
                return finish("[error] the call has no path".into(), false, None);
            }
            if accepted.tool.is_workspace_operation() {
                return workspace_ops::OpsFlow::start(self, turn, accepted);
            }
            return write::WriteFlow::start(self, turn, accepted);
        }
        read::ReadFlow::start(turn, accepted)
    }

    /// Records the call in the turn's record, protected paths hidden.
    pub(crate) fn record(
        &self,
        turn: &mut Turn,
        tool: Option<ToolId>,
        path_hint: Option<String>,
        stage: CallStage,
        rejection: Option<String>,
    ) {
        let empty = BTreeMap::new();
        let raw = self.proposal.args.as_ref().unwrap_or(&empty);
        let content_digests = CONTENT_KEYS
            .iter()
            .filter_map(|k| raw.get(*k).map(|v| ((*k).to_string(), digest_text(v))))
            .collect();
        let path_hint = path_hint.as_deref().map(hidden_if_protected);
        turn.notify(Notice::Call {
            call_id: self.id.clone(),
            tool: self.proposal.name.chars().take(100).collect(),
            status: match stage {
                CallStage::Executed => CallStatus::Completed,
                CallStage::Failed => CallStatus::Failed,
                CallStage::Rejected => CallStatus::Rejected,
                CallStage::Denied => CallStatus::Denied,
            },
            target: path_hint.clone(),
            reason: rejection.clone(),
        });
        turn.record.tool_calls.push(ToolCallRecord {
            call_id: self.id.clone(),
            requested_name: self.proposal.name.chars().take(100).collect(),
            tool,
            source: self.proposal.source,
            parameter_names: raw.keys().map(|k| k.chars().take(64).collect()).collect(),
            path_hint,
            content_digests,
            stage,
            rejection,
        });
    }

    /// Records a call that ran, with its end, and tells the guard.
    pub(crate) fn ended(
        &self,
        turn: &mut Turn,
        accepted: &Accepted,
        end: CallEnd,
        text: &str,
        path_hint: Option<String>,
    ) {
        turn.guard.after_call(accepted.tool, &accepted.args, end);
        let stage = match end {
            CallEnd::Succeeded => CallStage::Executed,
            CallEnd::Denied => CallStage::Denied,
            CallEnd::Failed => CallStage::Failed,
        };
        let rejection = (end != CallEnd::Succeeded).then(|| text.chars().take(300).collect());
        self.record(turn, Some(accepted.tool), path_hint, stage, rejection);
    }
}

impl Call {
    /// Ends a change (write or workspace operation): the guard and the record learn how it
    /// ended, and a denial or a failure after approval stops the loop.
    pub(crate) fn conclude_change(
        &self,
        turn: &mut Turn,
        accepted: &Accepted,
        text: String,
        end: CallEnd,
        stop: bool,
    ) -> (State, Effect) {
        self.ended(turn, accepted, end, &text, accepted.facts.relative.clone());
        let stop = match (end, stop) {
            (CallEnd::Denied, _) => {
                Some("[Tool loop stopped because the requested change was not approved.]".into())
            }
            (_, true) => Some(format!("[Tool loop stopped: {}]", first_sentence(&text))),
            (_, false) => turn.guard.should_stop(),
        };
        finish(text, end == CallEnd::Succeeded, stop)
    }
}

impl Turn {
    /// `decision` narrowed by the `pre_call` hooks' runs for call `call_id`, each verdict
    /// recorded.
    pub(crate) fn narrowed_by_hooks(
        &mut self,
        call_id: &str,
        decision: PermissionDecision,
        runs: &[crate::proposal::hooks::HookRun],
    ) -> PermissionDecision {
        let verdicts = crate::proposal::hooks::verdicts(runs, self.settings.pre_call_hooks);
        for v in &verdicts {
            self.record.hooks.push(v.record(call_id));
        }
        crate::proposal::hooks::narrow(decision, &verdicts)
    }
}

/// Why a call's path (or a command's working directory) is refused before approval: it
/// holds a character that changes what the person would see.
fn invisible_path(args: &ToolArgs) -> Option<String> {
    let cwd = match args {
        ToolArgs::RunCommand { request } => Some(request.cwd.as_str()),
        _ => None,
    };
    args.paths()
        .iter()
        .map(|p| p.as_ref())
        .chain(cwd)
        .find_map(crate::text::deceptive::path_refusal)
}

/// Content-like parameters whose digests the record keeps.
const CONTENT_KEYS: [&str; 9] = [
    "content",
    "text",
    "body",
    "data",
    "file_content",
    "old_string",
    "new_string",
    "old_text",
    "new_text",
];

pub(crate) fn finish(text: String, mutated: bool, stop: Option<String>) -> (State, Effect) {
    (
        State::Done,
        Effect::Finish(CallReport {
            text,
            mutated,
            stop,
        }),
    )
}

/// An answer that does not fit the effect asked: the daemon broke the protocol. The call ends
/// with nothing done (fail closed).
pub(crate) fn unexpected(input: &Input) -> (State, Effect) {
    let (_, effect) = finish(
        format!("[error] internal: unexpected step input {input:?}; nothing was done"),
        false,
        Some("[Tool loop stopped: internal error.]".into()),
    );
    (State::Broken, effect)
}

/// The first sentence of a message (up to and including the first ". ").
pub(crate) fn first_sentence(message: &str) -> String {
    let cut = message.find(". ").map_or(message.len(), |i| i + 1);
    message[..cut].to_string()
}

/// A path as records and notices show it: a protected name is never repeated, and characters
/// that change what the eye sees are escaped (`\u{202e}`).
fn hidden_if_protected(path: &str) -> String {
    if crate::text::protected::protected_kind(path).is_some() {
        "<protected-path>".to_string()
    } else {
        crate::text::deceptive::escaped(path)
    }
}

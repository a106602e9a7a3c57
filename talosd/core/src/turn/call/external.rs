//! A call to an MCP server's tool (`mcp.SERVER.TOOL`, issue 28): offered this turn or
//! rejected; the MCP ladder (rules by name, else ask; never a session grant); the `pre_call`
//! hooks; the person's approval, every argument shown whole (file content as a diff) on the
//! same hidden-character screen as every approval, each path placed against the workspace (one
//! outside it, or protected, always asks), or no approval at all when the arguments cannot be
//! shown whole; then the call, whose output is framed as untrusted, budgeted like any result and
//! recorded by hash. Talos cannot see what such a call does outside its own records: nothing
//! here counts as a change Talos made, and the trace says the call ran outside checkpoints.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{ApprovalAsk, Call, Effect, Input, State, finish, unexpected};
use crate::proposal::ladder::{Action, PermissionDecision};
use crate::proposal::mcp::approval::{self, PathArgument};
use crate::proposal::mcp::{self, ExternalTool};
use crate::text::digest::digest_text;
use crate::turn::record::{CallStage, Decision, ExternalCallRecord, WarningCode};
use crate::turn::{CallStatus, Notice, Turn};

/// What the daemon reports of one MCP call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalOutput {
    pub text: String,
    pub is_error: bool,
    pub truncated: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct ExternalFlow {
    tool: ExternalTool,
    arguments: Map<String, Value>,
    decision: PermissionDecision,
    /// The paths the arguments name, placed against the workspace.
    paths: Vec<PathArgument>,
    stage: Stage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Hooking,
    Asking,
    Calling,
}

impl ExternalFlow {
    pub(crate) fn start(
        call: &mut Call,
        turn: &mut Turn,
        raw: &BTreeMap<String, String>,
    ) -> (State, Effect) {
        let name = call.proposal.name.clone();
        let Some(tool) = turn
            .external
            .iter()
            .find(|t| t.qualified() == name)
            .cloned()
        else {
            let message = format!(
                "{} is not offered in this turn: name the MCP server or the tool in the request (or configure it surface: always); in a read-only mode only tools it trusts as read-only are offered",
                crate::text::deceptive::escaped(&name.chars().take(100).collect::<String>())
            );
            return call.rejected(
                turn,
                raw,
                None,
                crate::proposal::check::Stage::Surface,
                message,
            );
        };
        let arguments = mcp::arguments(raw, &tool.input_schema);
        let decision = mcp::decide(&name, &turn.settings.rules);
        let paths = approval::path_arguments(&tool, &arguments, &turn.external_root);
        let flow = ExternalFlow {
            tool,
            arguments,
            decision: approval::paths_ask(decision, &paths),
            paths,
            stage: Stage::Hooking,
        };
        if turn.settings.pre_call_hooks > 0 && flow.decision.action != Action::Deny {
            let mut flow = flow;
            flow.stage = Stage::Hooking;
            let told = crate::proposal::hooks::ProposedCall {
                call_id: &call.id,
                tool: &name,
                arguments: raw,
                target: None,
                ladder: &flow.decision,
            }
            .to_json();
            return (State::External(flow), Effect::PreCall(told));
        }
        flow.decided(call, turn)
    }

    pub(crate) fn step(mut self, call: &Call, turn: &mut Turn, input: Input) -> (State, Effect) {
        match (self.stage, input) {
            (Stage::Hooking, Input::Hooked(runs)) => {
                self.decision = turn.narrowed_by_hooks(&call.id, self.decision, &runs);
                self.decided(call, turn)
            }
            (Stage::Asking, Input::Answered { request_id, answer }) => {
                self.record(turn, call, Some(answer.decision), &request_id);
                if answer.decision == Decision::Deny {
                    return self.ended(call, turn, CallStage::Denied, "approval denied");
                }
                self.calling(true)
            }
            (Stage::Calling, Input::External(result)) => self.output(call, turn, result),
            (Stage::Calling, Input::ExternalNotSent(why)) => {
                // Nothing reached the server: not a call that ran.
                self.finish_record(turn, call, None, Some(why.clone()));
                self.ended(call, turn, CallStage::Failed, &why)
            }
            (_, other) => unexpected(&other),
        }
    }

    fn decided(mut self, call: &Call, turn: &mut Turn) -> (State, Effect) {
        let name = self.tool.qualified();
        // Hooks narrow; a path outside the workspace still asks whatever answered before.
        self.decision = approval::paths_ask(self.decision, &self.paths);
        turn.record.permission_decisions.push(self.permission(call));
        if self.decision.action == Action::Deny {
            let message = format!(
                "Permission policy denied the {name} call. {}",
                self.decision.message
            );
            self.record(turn, call, None, "");
            let code = self.decision.reason_code.to_string();
            call.record(turn, None, None, CallStage::Denied, Some(code));
            return finish(format!("[error] {message}"), false, None);
        }
        turn.notify(Notice::Call {
            call_id: call.id.clone(),
            tool: name.clone(),
            status: CallStatus::Running,
            target: None,
            reason: None,
        });
        if self.decision.action == Action::Allow {
            self.record(turn, call, None, "");
            return self.calling(false);
        }
        let view = match approval::view(&self.tool, &self.arguments, &self.paths) {
            Ok(view) => view,
            Err(refusal) => {
                self.record(turn, call, None, "");
                call.record(turn, None, None, CallStage::Rejected, Some(refusal.clone()));
                return finish(format!("[error] {refusal}"), false, None);
            }
        };
        let mut details = vec![format!("permission: {}", self.decision.message)];
        details.push(format!(
            "MCP server `{}`: Talos cannot see or undo what this call does",
            self.tool.server
        ));
        details.extend(view.details);
        let mut ask = ApprovalAsk {
            tool: name.clone(),
            description: format!("call {name}"),
            target: None,
            details,
            diff: view.diff,
            change: None,
            remember_eligible: false,
        };
        turn.screen_approval(&mut ask);
        self.stage = Stage::Asking;
        (State::External(self), Effect::Ask(ask))
    }

    /// Sends the call; when nobody was `asked`, the daemon first checks that the paths placed
    /// inside the workspace by their text do not lead out of it.
    fn calling(mut self, asked: bool) -> (State, Effect) {
        self.stage = Stage::Calling;
        let unasked_paths = if asked {
            Vec::new()
        } else {
            self.paths
                .iter()
                .filter_map(|p| p.relative.clone())
                .collect()
        };
        let effect = Effect::CallExternal {
            server: self.tool.server.clone(),
            tool: self.tool.name.clone(),
            arguments: self.arguments.clone(),
            unasked_paths,
        };
        (State::External(self), effect)
    }

    fn output(
        self,
        call: &Call,
        turn: &mut Turn,
        result: Result<ExternalOutput, String>,
    ) -> (State, Effect) {
        let name = self.tool.qualified();
        let output = match result {
            Ok(output) => output,
            Err(problem) => {
                // Sent, and ended without an answer (timed out, cancelled, crashed): what it did
                // is not known either.
                self.ran(turn, Some(problem.chars().take(200).collect()));
                self.finish_record(turn, call, None, Some(problem.clone()));
                return self.ended(call, turn, CallStage::Failed, &problem);
            }
        };
        let text = mcp::framed_output(&name, &output.text, output.is_error, output.truncated);
        self.finish_record(turn, call, Some(&output), None);
        if !self.tool.read_only_hint {
            turn.record.warn(
                WarningCode::ExternalEffects,
                format!(
                    "{name} ran outside Talos's checkpoints: what it did is not verified and cannot be undone with talos undo"
                ),
            );
        }
        let trouble = output
            .is_error
            .then(|| "the server said it failed".to_string());
        self.ran(turn, trouble);
        let stage = if output.is_error {
            CallStage::Failed
        } else {
            CallStage::Executed
        };
        let reason = output
            .is_error
            .then(|| "the server says the call failed".to_string());
        call.record(turn, None, None, stage, reason);
        finish(text, false, None)
    }

    fn ran(&self, turn: &mut Turn, trouble: Option<String>) {
        turn.record
            .facts
            .external_ran
            .push(crate::request::outcome::ExternalRun {
                tool: self.tool.qualified(),
                approved: self.decision.action != Action::Allow,
                trouble,
            });
    }

    fn ended(&self, call: &Call, turn: &mut Turn, stage: CallStage, why: &str) -> (State, Effect) {
        call.record(
            turn,
            None,
            None,
            stage,
            Some(why.chars().take(300).collect()),
        );
        let name = self.tool.qualified();
        if stage == CallStage::Denied {
            return finish(
                format!("User did not approve the {name} call."),
                false,
                Some("[Tool loop stopped because the requested call was not approved.]".into()),
            );
        }
        finish(format!("[error] {why}"), false, None)
    }

    fn permission(&self, call: &Call) -> crate::turn::record::PermissionRecord {
        crate::turn::record::PermissionRecord {
            call_id: call.id.clone(),
            tool: self.tool.qualified(),
            action: self.decision.action,
            reason_code: self.decision.reason_code.to_string(),
            relative_path: None,
            remember_eligible: false,
        }
    }

    /// The call's record, kept up to date as it goes (its approval, then its output).
    fn record(&self, turn: &mut Turn, call: &Call, approval: Option<Decision>, request_id: &str) {
        let entry = ExternalCallRecord {
            call_id: call.id.clone(),
            tool: self.tool.qualified(),
            arguments: digest_text(&Value::Object(self.arguments.clone()).to_string()),
            action: self.decision.action,
            reason_code: self.decision.reason_code.to_string(),
            approval,
            approval_request: (!request_id.is_empty()).then(|| request_id.to_string()),
            output: None,
            is_error: false,
            truncated: false,
            error: None,
        };
        match turn
            .record
            .external_calls
            .iter_mut()
            .find(|c| c.call_id == call.id)
        {
            Some(existing) => {
                existing.approval = approval.or(existing.approval);
                existing.approval_request =
                    entry.approval_request.or(existing.approval_request.clone());
            }
            None => turn.record.external_calls.push(entry),
        }
    }

    fn finish_record(
        &self,
        turn: &mut Turn,
        call: &Call,
        output: Option<&ExternalOutput>,
        error: Option<String>,
    ) {
        self.record(turn, call, None, "");
        if let Some(entry) = turn
            .record
            .external_calls
            .iter_mut()
            .find(|c| c.call_id == call.id)
        {
            entry.output = output.map(|o| digest_text(&o.text));
            entry.is_error = output.is_some_and(|o| o.is_error);
            entry.truncated = output.is_some_and(|o| o.truncated);
            entry.error = error;
        }
    }
}

impl Turn {
    /// The turn with the MCP tools it offers (decided by [`crate::proposal::mcp::offered`]); each left
    /// out that the request named, and each server that could not be listed, is told.
    pub fn with_external(
        mut self,
        offer: crate::proposal::mcp::Offer,
        problems: Vec<String>,
    ) -> Turn {
        self.record.external_offered = offer.tools.iter().map(ExternalTool::qualified).collect();
        if !offer.tools.is_empty() {
            let names = self.record.external_offered.join(", ");
            self.notify(Notice::Info(format!("MCP tools offered: {names}")));
        }
        for note in offer.left_out.into_iter().chain(problems) {
            self.notify(Notice::Info(note));
        }
        self.external = offer.tools;
        self.external_root = offer.workspace;
        self
    }
}

//! `auto` mode's deterministic viewer (`ls`, `show FILE`) as a small state machine: no model,
//! the same kernel-resolved boundary and ladder as any read (in INSPECT), a protected read asks,
//! and the output is shown to the person as trusted information. It speaks the call machine's
//! [`Effect`]s and [`Input`]s, so the daemon performs it with the same code.

use crate::planning::modes::Structural;
use crate::planning::tools::{ToolArgs, ToolId};
use crate::proposal::ladder::{Action, PermissionDecision};

use super::call::{ApprovalAsk, CallReport, Effect, Input, ResolvedPath};
use super::record::{ApprovalRecord, Decision};
use super::{Notice, Turn};

/// The viewer in flight.
#[derive(Debug, Clone)]
pub struct View {
    call_id: String,
    tool: ToolId,
    raw: String,
    step: Step,
}

#[derive(Debug, Clone)]
enum Step {
    Start,
    Resolving,
    Asked { shown: String },
    Reading { shown: String },
    Done,
}

impl View {
    pub fn new(turn: &mut Turn, command: &Structural) -> View {
        let (tool, raw) = match command {
            Structural::List { path } => (ToolId::ListDir, path.clone()),
            Structural::Show { path } => (ToolId::ReadFile, path.clone()),
        };
        View {
            call_id: turn.next_call_id(),
            tool,
            raw,
            step: Step::Start,
        }
    }

    /// The call id the viewer's records carry.
    pub fn id(&self) -> &str {
        &self.call_id
    }

    /// Advances the viewer; [`Effect::Finish`] carries the answer.
    pub fn step(&mut self, turn: &mut Turn, input: Input) -> Effect {
        let step = std::mem::replace(&mut self.step, Step::Done);
        match (step, input) {
            (Step::Start, _) => {
                self.step = Step::Resolving;
                Effect::Resolve(vec![self.raw.clone()])
            }
            (Step::Resolving, Input::Resolved(paths)) => match paths.into_iter().next() {
                Some(path) => self.resolved(turn, path),
                None => finish("Not shown: the path could not be resolved.".into()),
            },
            (Step::Asked { shown }, Input::Answered { request_id, answer }) => {
                turn.record.approvals.push(ApprovalRecord {
                    request_id,
                    call_id: self.call_id.clone(),
                    tool: self.tool,
                    answer,
                    diff_added: 0,
                    diff_removed: 0,
                    diff_truncated: false,
                });
                if answer.decision == Decision::Deny {
                    turn.record.facts.read_denied = true;
                    return finish(format!("Not shown: reading {} was not approved.", self.raw));
                }
                self.read(shown)
            }
            (Step::Reading { shown }, Input::Output(output)) => self.shown(turn, shown, output),
            (_, _) => finish("Not shown: internal error; nothing was read.".into()),
        }
    }

    fn resolved(&mut self, turn: &mut Turn, path: ResolvedPath) -> Effect {
        let facts = path.facts;
        let decision = turn.viewer_permission(&self.call_id, self.tool, &facts);
        let shown = facts.relative.clone().unwrap_or_else(|| self.raw.clone());
        match decision.action {
            Action::Deny => {
                turn.record.facts.read_blocked = true;
                let problem = facts.problem.unwrap_or_default();
                finish(format!("{} ({problem})", decision.message))
            }
            Action::Ask => {
                self.step = Step::Asked { shown };
                Effect::Ask(self.ask(&decision, facts.relative))
            }
            Action::Allow => self.read(shown),
        }
    }

    fn ask(&self, decision: &PermissionDecision, target: Option<String>) -> ApprovalAsk {
        ApprovalAsk {
            tool: self.tool.name().into(),
            description: format!("protected read: {}", self.tool.name()),
            target,
            details: vec![
                format!("permission: {}", decision.message),
                "shown to you only; no model is involved".into(),
            ],
            diff: None,
            change: None,
            remember_eligible: false,
        }
    }

    fn read(&mut self, shown: String) -> Effect {
        let args = match self.tool {
            ToolId::ListDir => ToolArgs::ListDir {
                path: shown.clone(),
                max_depth: 1,
                max_entries: 500,
            },
            _ => ToolArgs::ReadFile {
                path: shown.clone(),
                max_lines: 2000,
                offset: 1,
            },
        };
        self.step = Step::Reading { shown };
        Effect::Read(args)
    }

    fn shown(&mut self, turn: &mut Turn, shown: String, output: Result<String, String>) -> Effect {
        let success = output.is_ok();
        let text = output.unwrap_or_else(|e| e);
        if !success {
            turn.record.facts.read_blocked = true;
        }
        turn.record.execution(
            &self.call_id,
            self.tool,
            success,
            Some(shown.clone()),
            &text,
        );
        turn.notify(Notice::TrustedInfo(format!("{} {shown}", self.tool.name())));
        turn.record.read_paths.push(shown);
        finish(text)
    }
}

fn finish(text: String) -> Effect {
    Effect::Finish(CallReport {
        text,
        mutated: false,
        stop: None,
    })
}

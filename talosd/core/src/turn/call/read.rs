//! The read tools' flow: a protected read (or a read of a hard-linked file) asks first (and a
//! denial stops the loop); the output of a protected or hard-linked file is remembered so the
//! answer cannot echo it, and in private mode it is shown to the person only and withheld from
//! the model.

use super::{Accepted, ApprovalAsk, Call, Effect, Input, State, finish, unexpected};
use crate::proposal::discipline::CallEnd;
use crate::proposal::ladder::Action;
use crate::turn::record::{ApprovalRecord, CallStage, Decision};
use crate::turn::{Notice, Turn};

#[derive(Debug, Clone)]
pub(crate) struct ReadFlow {
    accepted: Accepted,
    asked: bool,
}

impl ReadFlow {
    pub(crate) fn start(turn: &Turn, accepted: Accepted) -> (State, Effect) {
        if accepted.decision.action != Action::Ask {
            let effect = Effect::Read(accepted.args.clone());
            let flow = ReadFlow {
                accepted,
                asked: false,
            };
            return (State::Read(flow), effect);
        }
        let audience = if turn.settings.mode.private() {
            "private mode: the content is shown to you only and withheld from the model"
        } else {
            "the file's content will be sent to the model"
        };
        let ask = ApprovalAsk {
            tool: accepted.tool.name().into(),
            description: if accepted.decision.reason_code
                == crate::proposal::ladder::ReasonCode::HookAsk
            {
                format!("read a hook asks about: {}", accepted.tool.name())
            } else {
                format!("protected read: {}", accepted.tool.name())
            },
            target: accepted.facts.relative.clone(),
            details: vec![
                format!("permission: {}", accepted.decision.message),
                audience.into(),
            ],
            diff: None,
            change: None,
            remember_eligible: false,
        };
        let flow = ReadFlow {
            accepted,
            asked: true,
        };
        (State::Read(flow), Effect::Ask(ask))
    }

    pub(crate) fn step(self, call: &Call, turn: &mut Turn, input: Input) -> (State, Effect) {
        match input {
            Input::Answered { request_id, answer } if self.asked => {
                turn.record.approvals.push(ApprovalRecord {
                    request_id,
                    call_id: call.id.clone(),
                    tool: self.accepted.tool,
                    answer,
                    diff_added: 0,
                    diff_removed: 0,
                    diff_truncated: false,
                });
                if answer.decision == Decision::Deny {
                    return self.denied(call, turn);
                }
                let effect = Effect::Read(self.accepted.args.clone());
                let flow = ReadFlow {
                    asked: false,
                    ..self
                };
                (State::Read(flow), effect)
            }
            Input::Output(output) if !self.asked => self.output(call, turn, output),
            other => unexpected(&other),
        }
    }

    fn denied(self, call: &Call, turn: &mut Turn) -> (State, Effect) {
        let tool = self.accepted.tool;
        turn.record.facts.read_denied = true;
        turn.guard
            .after_call(tool, &self.accepted.args, CallEnd::Denied);
        let hint = self.accepted.facts.relative.clone();
        let reason = Some("approval denied".to_string());
        call.record(turn, Some(tool), hint, CallStage::Denied, reason);
        finish(
            format!("User did not approve the {} call.", tool.name()),
            false,
            Some("[Tool loop stopped because the requested read was not approved.]".into()),
        )
    }

    fn output(
        self,
        call: &Call,
        turn: &mut Turn,
        output: Result<String, String>,
    ) -> (State, Effect) {
        let accepted = &self.accepted;
        let path_hint = accepted.facts.relative.clone();
        // A hard-linked file's bytes may be a protected file's outside the workspace: its
        // content is kept from the answer and, in private mode, from the model like one.
        let protected = accepted.facts.protected.is_some() || accepted.facts.shares_bytes();
        let (success, output) = match output {
            Ok(text) => (true, text),
            Err(e) => (false, format!("[error] {e}")),
        };
        if success && protected {
            // The content lines (without the `N | ` display prefix) and the values they
            // assign, so that the answer guard withholds them wherever the model echoes them.
            let pieces = output
                .lines()
                .filter_map(|l| l.split_once(" | ").map(|(_, text)| text))
                .flat_map(crate::text::protected::withheld_pieces);
            turn.record.protected_lines.extend(pieces);
        }
        let shown = path_hint.clone().unwrap_or_default();
        let for_model = if success && protected && turn.settings.mode.private() {
            turn.notify(Notice::TrustedInfo(format!(
                "{shown} (shown to you only; withheld from the model in private mode):\n{output}"
            )));
            format!(
                "[protected content of {shown} was shown to the user only (private mode); it is not available to the model]"
            )
        } else {
            output
        };
        turn.record.execution(
            &call.id,
            accepted.tool,
            success,
            path_hint.clone(),
            &for_model,
        );
        let (stage, end) = if success {
            (CallStage::Executed, CallEnd::Succeeded)
        } else {
            (CallStage::Failed, CallEnd::Failed)
        };
        call.record(turn, Some(accepted.tool), path_hint.clone(), stage, None);
        turn.guard.after_call(accepted.tool, &accepted.args, end);
        if success && accepted.tool == crate::planning::tools::ToolId::ListDir {
            let folder = path_hint.clone().unwrap_or_default();
            turn.record.listings.push((folder, for_model.clone()));
        }
        if success && let Some(p) = path_hint {
            // A document whose text could not be extracted was read, but not seen (issue 27).
            let unseen = accepted.tool == crate::planning::tools::ToolId::ReadFile
                && crate::proposal::view::is_document_note(&p, &for_model);
            let documents = &mut turn.record.facts.unreadable_documents;
            if unseen && !documents.contains(&p) {
                documents.push(p.clone());
            }
            turn.record.read_paths.push(p);
        }
        let stop = turn.guard.should_stop();
        finish(for_model, false, stop)
    }
}

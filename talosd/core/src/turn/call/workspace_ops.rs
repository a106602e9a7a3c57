//! Typed workspace operations (mkdir, move, copy, rename, delete, batches): checked against the
//! disk before approval, always asked (never remembered), checkpointed (every touched path),
//! applied in order with the boundary checked again at the moment of IO, and verified by their
//! postconditions. A failure part-way stops the batch and says what was applied.

use super::{Accepted, ApprovalAsk, Call, Effect, Input, State, unexpected};
use crate::planning::ops::{self, WorkspaceOp};
use crate::planning::tools::{Risk, ToolArgs};
use crate::proposal::discipline::CallEnd;
use crate::proposal::ladder::Action;
use crate::request::outcome::{MutationRecord, MutationResult};
use crate::turn::record::{ApprovalRecord, CheckStatus, CheckpointRecord, Decision};
use crate::turn::{Notice, Turn};

#[derive(Debug, Clone)]
pub(crate) struct OpsFlow {
    accepted: Accepted,
    operations: Vec<WorkspaceOp>,
    /// The paths each op touches, source first, as the workspace shows them.
    touched: Vec<Vec<String>>,
    step: Step,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Checking,
    Asked,
    Checkpointing,
    Applying,
}

impl OpsFlow {
    pub(crate) fn start(_call: &Call, _turn: &mut Turn, accepted: Accepted) -> (State, Effect) {
        let operations = ops_of(&accepted.args);
        let effect = Effect::CheckOps(operations.clone());
        let flow = OpsFlow {
            accepted,
            operations,
            touched: Vec::new(),
            step: Step::Checking,
        };
        (State::Ops(flow), effect)
    }

    pub(crate) fn step(self, call: &Call, turn: &mut Turn, input: Input) -> (State, Effect) {
        match (self.step, input) {
            (Step::Checking, Input::OpsChecked(checked)) => self.checked(call, turn, checked),
            (Step::Asked, Input::Answered { request_id, answer }) => {
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
                self.checkpoint()
            }
            (Step::Checkpointing, Input::Checkpointed(taken)) => {
                self.checkpointed(call, turn, taken)
            }
            (Step::Checkpointing, Input::Cancelled) => {
                let primary = self.primary();
                turn.record.facts.mutations.push(MutationRecord {
                    target: primary,
                    result: MutationResult::Failed {
                        reason: "the turn was cancelled before the change".into(),
                    },
                });
                let text = "the turn was cancelled before the change".to_string();
                call.conclude_change(turn, &self.accepted, text, CallEnd::Failed, true)
            }
            (Step::Applying, Input::OpsApplied(results)) => self.applied(call, turn, results),
            (_, other) => unexpected(&other),
        }
    }

    fn primary(&self) -> String {
        self.accepted.args.path().unwrap_or_default().to_string()
    }

    fn checked(
        mut self,
        call: &Call,
        turn: &mut Turn,
        checked: Result<Vec<Vec<String>>, (usize, String)>,
    ) -> (State, Effect) {
        match checked {
            Ok(touched) => self.touched = touched,
            Err((index, e)) => {
                let which = if self.operations.len() > 1 {
                    format!("operation {}: ", index + 1)
                } else {
                    String::new()
                };
                let target = self
                    .operations
                    .get(index)
                    .map(|op| op.primary_path().to_string())
                    .unwrap_or_default();
                let text =
                    format!("{which}{e}. No approval was requested and no file was changed.");
                return super::write::blocked(call, turn, &self.accepted, &target, text);
            }
        }
        if self.accepted.decision.action != Action::Ask {
            return self.checkpoint();
        }
        let risk = self.accepted.args.effective_risk();
        let mut details: Vec<String> = ops::preview(&self.operations)
            .lines()
            .map(str::to_string)
            .collect();
        if !self.accepted.decision.message.is_empty() {
            details.insert(0, format!("permission: {}", self.accepted.decision.message));
        }
        details.push("checkpoint: every touched path is saved before the change".into());
        let kind = if risk == Risk::Destructive {
            "destructive"
        } else {
            "write"
        };
        let ask = ApprovalAsk {
            tool: self.accepted.tool.name().into(),
            description: format!("{kind} operation: {}", self.accepted.tool.name()),
            target: Some(self.primary()),
            details,
            diff: None,
            change: None,
            remember_eligible: false,
        };
        self.next(Step::Asked, Effect::Ask(ask))
    }

    fn next(self, step: Step, effect: Effect) -> (State, Effect) {
        (State::Ops(OpsFlow { step, ..self }), effect)
    }

    fn sources(&self) -> Vec<String> {
        self.touched
            .iter()
            .filter_map(|paths| paths.first().cloned())
            .collect()
    }

    fn denied(self, call: &Call, turn: &mut Turn) -> (State, Effect) {
        for source in self.sources() {
            turn.record.facts.mutations.push(MutationRecord {
                target: source.clone(),
                result: MutationResult::Denied,
            });
            turn.record.file(&source, false, "approval denied");
        }
        let text = format!(
            "User did not approve the {} call. Target path: `{}`. Nothing was changed.",
            self.accepted.tool.name(),
            self.primary()
        );
        call.conclude_change(turn, &self.accepted, text, CallEnd::Denied, true)
    }

    fn checkpoint(self) -> (State, Effect) {
        let paths = self.touched.iter().flatten().cloned().collect();
        let effect = Effect::Checkpoint {
            tool: self.accepted.tool,
            paths,
            before: None,
        };
        self.next(Step::Checkpointing, effect)
    }

    fn checkpointed(
        self,
        call: &Call,
        turn: &mut Turn,
        taken: Result<crate::turn::record::CheckpointTaken, String>,
    ) -> (State, Effect) {
        let primary = self.primary();
        let error = taken.as_ref().err().cloned();
        let existed_before = taken.as_ref().is_ok_and(|t| t.existed_before);
        turn.record.checkpoints.push(CheckpointRecord {
            call_id: call.id.clone(),
            result: taken,
            path: primary.clone(),
            existed_before,
        });
        if let Some(e) = error {
            turn.record.facts.mutations.push(MutationRecord {
                target: primary,
                result: MutationResult::Failed { reason: e.clone() },
            });
            let text = format!("Required checkpoint failed before mutation: {e}");
            return call.conclude_change(turn, &self.accepted, text, CallEnd::Failed, true);
        }
        let effect = Effect::ApplyOps(self.operations.clone());
        self.next(Step::Applying, effect)
    }

    fn applied(
        self,
        call: &Call,
        turn: &mut Turn,
        results: Vec<Result<String, String>>,
    ) -> (State, Effect) {
        let sources = self.sources();
        let primary = self.primary();
        let mut applied: Vec<String> = Vec::new();
        for (index, result) in results.into_iter().enumerate() {
            let shown = sources.get(index).cloned().unwrap_or_default();
            match result {
                Ok(summary) => {
                    turn.record
                        .verified(&call.id, &shown, CheckStatus::Pass, &summary);
                    // A rename, move or copy changed its destination too: the request's
                    // target may be either name.
                    let destination = self.touched.get(index).and_then(|paths| paths.get(1));
                    for target in std::iter::once(&shown).chain(destination) {
                        turn.record.facts.mutations.push(MutationRecord {
                            target: target.clone(),
                            result: MutationResult::Succeeded { verified: true },
                        });
                    }
                    turn.record.file(&shown, true, summary.clone());
                    turn.notify(Notice::Ok(summary.clone()));
                    applied.push(summary);
                }
                Err(e) => {
                    let text = self.failure_text(turn, call, &shown, &applied, index, &e);
                    let tool = self.accepted.tool;
                    turn.record
                        .execution(&call.id, tool, false, Some(primary), &text);
                    if let Some(last) = turn.record.executions.last_mut() {
                        last.error = Some(e);
                    }
                    return call.conclude_change(turn, &self.accepted, text, CallEnd::Failed, true);
                }
            }
        }
        let text = applied.join("\n");
        turn.record
            .execution(&call.id, self.accepted.tool, true, Some(primary), &text);
        let text = format!("{text}\n[verification: PASS]");
        call.conclude_change(turn, &self.accepted, text, CallEnd::Succeeded, false)
    }

    fn failure_text(
        &self,
        turn: &mut Turn,
        call: &Call,
        shown: &str,
        applied: &[String],
        index: usize,
        e: &str,
    ) -> String {
        turn.record.verified(&call.id, shown, CheckStatus::Fail, e);
        turn.record.facts.mutations.push(MutationRecord {
            target: shown.to_string(),
            result: MutationResult::Failed {
                reason: e.to_string(),
            },
        });
        turn.record.file(shown, false, e);
        if applied.is_empty() {
            format!("Workspace operation failed: {e}. Nothing was changed.")
        } else {
            format!(
                "Batch partially applied. Applied: {}. Failed: operation {}: {e}. The checkpoint holds the state before the batch.",
                applied.join("; "),
                index + 1
            )
        }
    }
}

/// The operations a call carries.
pub fn ops_of(args: &ToolArgs) -> Vec<WorkspaceOp> {
    match args {
        ToolArgs::MkDir { path } => vec![WorkspaceOp::Mkdir { path: path.clone() }],
        ToolArgs::MovePath {
            from,
            to,
            overwrite,
        } => vec![WorkspaceOp::Move {
            from: from.clone(),
            to: to.clone(),
            overwrite: *overwrite,
        }],
        ToolArgs::CopyPath {
            from,
            to,
            recursive,
            overwrite,
        } => vec![WorkspaceOp::Copy {
            from: from.clone(),
            to: to.clone(),
            recursive: *recursive,
            overwrite: *overwrite,
        }],
        ToolArgs::RenamePath {
            path,
            new_name,
            overwrite,
        } => vec![WorkspaceOp::Rename {
            path: path.clone(),
            new_name: new_name.clone(),
            overwrite: *overwrite,
        }],
        ToolArgs::DeletePath { path, recursive } => vec![WorkspaceOp::Delete {
            path: path.clone(),
            recursive: *recursive,
        }],
        ToolArgs::ApplyWorkspaceBatch { operations } => operations.clone(),
        ToolArgs::ReadFile { .. }
        | ToolArgs::ListDir { .. }
        | ToolArgs::Grep { .. }
        | ToolArgs::Search { .. }
        | ToolArgs::WriteFile { .. }
        | ToolArgs::EditFile { .. }
        | ToolArgs::RunCommand { .. } => Vec::new(),
    }
}

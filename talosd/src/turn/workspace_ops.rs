//! Typed workspace operations (mkdir, move, copy, rename, delete, and batches of them): checked
//! against the disk before approval, always asked (never remembered), checkpointed (every
//! touched path, directories with their files), applied with the boundary checked again at the
//! moment of IO, and verified by their postconditions. The disk side of each step is
//! `crate::workspace::ops`.

use talos_core::discipline::CallEnd;
use talos_core::ladder::{Action, PermissionDecision};
use talos_core::ops::{self, WorkspaceOp};
use talos_core::outcome::{MutationRecord, MutationResult};
use talos_core::tools::{Risk, ToolArgs, ToolId};
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::{TraceApproval, TraceCheckpoint, TraceExecution, TraceVerification};

use super::context::{TurnCtx, now_ms};
use super::mutate::{MutationReply, blocked};
use crate::checkpoint::{CaptureContext, CheckpointStore};
use crate::to_proto;

/// The operations a call carries.
fn ops_of(args: &ToolArgs) -> Vec<WorkspaceOp> {
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
        | ToolArgs::WriteFile { .. }
        | ToolArgs::EditFile { .. }
        | ToolArgs::RunCommand { .. } => Vec::new(),
    }
}

pub async fn run(
    ctx: &mut TurnCtx,
    call_id: &str,
    tool: ToolId,
    args: &ToolArgs,
    decision: &PermissionDecision,
) -> MutationReply {
    let root = ctx.session.workspace.clone();
    let files = ctx.session.files.clone();
    let operations = ops_of(args);
    let primary = args.path().unwrap_or_default().to_string();
    let mut planned = Vec::new();
    for (index, op) in operations.iter().enumerate() {
        match files.plan(op) {
            Ok(p) => planned.push(p),
            Err(e) => {
                let which = if operations.len() > 1 {
                    format!("operation {}: ", index + 1)
                } else {
                    String::new()
                };
                return blocked(
                    ctx,
                    op.primary_path(),
                    format!("{which}{e}. No approval was requested and no file was changed."),
                );
            }
        }
    }
    let preview = ops::preview(&operations);
    let risk = args.effective_risk();
    if decision.action == Action::Ask {
        let mut details: Vec<String> = preview.lines().map(str::to_string).collect();
        if !decision.message.is_empty() {
            details.insert(0, format!("permission: {}", decision.message));
        }
        details.push("checkpoint: every touched path is saved before the change".into());
        let params = proto::ApprovalRequestParams {
            turn_id: ctx.turn_id.clone(),
            session_id: ctx.session.id.clone(),
            request_id: crate::ids::new_id("apr"),
            tool: tool.name().into(),
            description: format!(
                "{} operation: {}",
                if risk == Risk::Destructive {
                    "destructive"
                } else {
                    "write"
                },
                tool.name()
            ),
            target: Some(primary.clone()),
            details,
            diff: None,
            remember_eligible: false,
        };
        let request_id = params.request_id.clone();
        let (answer, source) = ctx.ask(params).await;
        ctx.trace.approvals.push(TraceApproval {
            request_id,
            call_id: call_id.into(),
            tool: tool.name().into(),
            decision: answer,
            source,
            diff_added: 0,
            diff_removed: 0,
            diff_truncated: false,
        });
        if answer == proto::Decision::Deny {
            for p in &planned {
                ctx.facts.mutations.push(MutationRecord {
                    target: p.source.shown.clone(),
                    result: MutationResult::Denied,
                });
                ctx.files.push(proto::FileResult {
                    path: p.source.shown.clone(),
                    changed: false,
                    detail: "approval denied".into(),
                });
            }
            return MutationReply {
                text: format!(
                    "User did not approve the {} call. Target path: `{primary}`. Nothing was changed.",
                    tool.name()
                ),
                end: CallEnd::Denied,
                stop: true,
            };
        }
    }
    let store = CheckpointStore::new(ctx.daemon.home.checkpoints());
    let touched: Vec<_> = planned.iter().flat_map(|p| p.touched()).collect();
    let capture = CaptureContext {
        trace_id: &ctx.trace.trace_id,
        turn_id: &ctx.turn_id,
        call_id,
        tool: tool.name(),
        created_at_ms: now_ms(),
    };
    match store.capture_paths(&root, &files, &touched, &capture) {
        Ok(c) => ctx.trace.checkpoints.push(TraceCheckpoint {
            call_id: call_id.into(),
            status: "created".into(),
            checkpoint_id: Some(c.checkpoint_id),
            path: primary.clone(),
            existed_before: c.existed_before,
            blob_sha256: c.blob_sha256.map(|h| format!("sha256:{h}")),
            message: None,
        }),
        Err(e) => {
            ctx.trace.checkpoints.push(TraceCheckpoint {
                call_id: call_id.into(),
                status: "failed".into(),
                checkpoint_id: None,
                path: primary.clone(),
                existed_before: false,
                blob_sha256: None,
                message: Some(e.to_string()),
            });
            ctx.facts.mutations.push(MutationRecord {
                target: primary.clone(),
                result: MutationResult::Failed {
                    reason: e.to_string(),
                },
            });
            return MutationReply {
                text: format!("Required checkpoint failed before mutation: {e}"),
                end: CallEnd::Failed,
                stop: true,
            };
        }
    }
    let mut applied: Vec<String> = Vec::new();
    for (index, p) in planned.iter().enumerate() {
        let result = files.apply(p).and_then(|()| files.verify(p));
        let shown = p.source.shown.clone();
        match result {
            Ok(summary) => {
                ctx.trace.verification.push(TraceVerification {
                    call_id: call_id.into(),
                    path: shown.clone(),
                    status: "PASS".into(),
                    summary: summary.clone(),
                });
                ctx.facts.mutations.push(MutationRecord {
                    target: shown.clone(),
                    result: MutationResult::Succeeded { verified: true },
                });
                ctx.files.push(proto::FileResult {
                    path: shown.clone(),
                    changed: true,
                    detail: summary.clone(),
                });
                ctx.emit(TurnEvent::Ok {
                    text: summary.clone(),
                })
                .await;
                applied.push(summary);
            }
            Err(e) => {
                ctx.trace.verification.push(TraceVerification {
                    call_id: call_id.into(),
                    path: shown.clone(),
                    status: "FAIL".into(),
                    summary: e.clone(),
                });
                ctx.facts.mutations.push(MutationRecord {
                    target: shown.clone(),
                    result: MutationResult::Failed { reason: e.clone() },
                });
                ctx.files.push(proto::FileResult {
                    path: shown,
                    changed: false,
                    detail: e.clone(),
                });
                let text = if applied.is_empty() {
                    format!("Workspace operation failed: {e}. Nothing was changed.")
                } else {
                    format!(
                        "Batch partially applied. Applied: {}. Failed: operation {}: {e}. The checkpoint holds the state before the batch.",
                        applied.join("; "),
                        index + 1
                    )
                };
                ctx.trace.executions.push(TraceExecution {
                    call_id: call_id.into(),
                    tool: tool.name().into(),
                    success: false,
                    path: Some(primary),
                    output: to_proto::text_digest(&text),
                    sha256_after: None,
                    error: Some(e),
                });
                return MutationReply {
                    text,
                    end: CallEnd::Failed,
                    stop: true,
                };
            }
        }
    }
    let text = applied.join("\n");
    ctx.trace.executions.push(TraceExecution {
        call_id: call_id.into(),
        tool: tool.name().into(),
        success: true,
        path: Some(primary),
        output: to_proto::text_digest(&text),
        sha256_after: None,
        error: None,
    });
    MutationReply {
        text: format!("{text}\n[verification: PASS]"),
        end: CallEnd::Succeeded,
        stop: false,
    }
}

//! Typed workspace operations (mkdir, move, copy, rename, delete, and batches of them): checked
//! against the disk before approval, always asked (never remembered), checkpointed (every
//! touched path, directories with their files), applied with the boundary checked again at the
//! moment of IO, and verified by their postconditions.

use std::path::{Path, PathBuf};

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
use crate::boundary::{self, Resolved};
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

/// An op with every path resolved inside the workspace.
struct Planned {
    op: WorkspaceOp,
    /// (shown, absolute) for the op's source (or only) path.
    source: (String, PathBuf),
    /// (shown, absolute) for the destination of move, copy and rename.
    destination: Option<(String, PathBuf)>,
}

fn inside(root: &Path, raw: &str) -> Result<(String, PathBuf), String> {
    let resolved: Resolved = boundary::resolve(root, raw);
    match (resolved.facts.escapes, resolved.absolute) {
        (false, Some(absolute)) => Ok((
            resolved.facts.relative.unwrap_or_else(|| raw.to_string()),
            absolute,
        )),
        _ => Err(format!(
            "Path not allowed: {raw} ({})",
            resolved
                .facts
                .problem
                .unwrap_or_else(|| "outside the workspace".into())
        )),
    }
}

/// Resolves and checks one op against the disk as it is now. Errors end in the usual
/// "No approval was requested" sentence at the call site.
fn plan_op(root: &Path, op: &WorkspaceOp) -> Result<Planned, String> {
    let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let planned = match op {
        WorkspaceOp::Mkdir { path } => {
            let source = inside(root, path)?;
            if exists(&source.1) && !is_dir(&source.1) {
                return Err(format!(
                    "Destination already exists and is not a directory: {}",
                    source.0
                ));
            }
            Planned {
                op: op.clone(),
                source,
                destination: None,
            }
        }
        WorkspaceOp::Move {
            from,
            to,
            overwrite,
        }
        | WorkspaceOp::Copy {
            from,
            to,
            overwrite,
            ..
        } => {
            let source = inside(root, from)?;
            let destination = inside(root, to)?;
            check_transfer(root, op, &source, &destination, *overwrite)?;
            Planned {
                op: op.clone(),
                source,
                destination: Some(destination),
            }
        }
        WorkspaceOp::Rename {
            path,
            new_name,
            overwrite,
        } => {
            if !ops::is_single_segment(new_name) {
                return Err("new_name must be a single path segment".into());
            }
            let source = inside(root, path)?;
            let destination = inside(root, &ops::renamed_path(path, new_name))?;
            check_transfer(root, op, &source, &destination, *overwrite)?;
            Planned {
                op: op.clone(),
                source,
                destination: Some(destination),
            }
        }
        WorkspaceOp::Delete { path, recursive } => {
            let source = inside(root, path)?;
            if source.1 == root {
                return Err("Refusing to delete the workspace root.".into());
            }
            if !exists(&source.1) {
                return Err(format!("Path not found: {}", source.0));
            }
            if is_dir(&source.1) && !recursive {
                return Err(format!(
                    "{} is a directory; set recursive=true to delete it",
                    source.0
                ));
            }
            Planned {
                op: op.clone(),
                source,
                destination: None,
            }
        }
    };
    Ok(planned)
}

fn check_transfer(
    root: &Path,
    op: &WorkspaceOp,
    source: &(String, PathBuf),
    destination: &(String, PathBuf),
    overwrite: bool,
) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(&source.1)
        .map_err(|_| format!("Source not found: {}", source.0))?;
    if source.1 == root {
        return Err("Refusing to move or copy the workspace root.".into());
    }
    if meta.is_dir() && destination.1.starts_with(&source.1) {
        return Err(format!("Refusing to put {} inside itself", source.0));
    }
    if let WorkspaceOp::Copy {
        recursive: false, ..
    } = op
        && meta.is_dir()
    {
        return Err(format!(
            "{} is a directory; set recursive=true to copy it",
            source.0
        ));
    }
    if std::fs::symlink_metadata(&destination.1).is_ok() && !overwrite {
        return Err(format!(
            "Destination already exists: {}. Set overwrite=true to replace it.",
            destination.0
        ));
    }
    Ok(())
}

pub async fn run(
    ctx: &mut TurnCtx,
    call_id: &str,
    tool: ToolId,
    args: &ToolArgs,
    decision: &PermissionDecision,
) -> MutationReply {
    let root = ctx.session.workspace.clone();
    let operations = ops_of(args);
    let primary = args.path().unwrap_or_default().to_string();
    let mut planned = Vec::new();
    for (index, op) in operations.iter().enumerate() {
        match plan_op(&root, op) {
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
                    target: p.source.0.clone(),
                    result: MutationResult::Denied,
                });
                ctx.files.push(proto::FileResult {
                    path: p.source.0.clone(),
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
    let mut touched: Vec<(String, PathBuf)> = Vec::new();
    for p in &planned {
        touched.push(p.source.clone());
        touched.extend(p.destination.clone());
    }
    let capture = CaptureContext {
        trace_id: &ctx.trace.trace_id,
        turn_id: &ctx.turn_id,
        call_id,
        tool: tool.name(),
        created_at_ms: now_ms(),
    };
    match store.capture_paths(&root, &touched, &capture) {
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
        let result = apply(&root, p).and_then(|()| verify(p));
        let shown = p.source.0.clone();
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

/// Applies one op, checking every path again at the moment of IO.
fn apply(root: &Path, p: &Planned) -> Result<(), String> {
    let again = |(shown, absolute): &(String, PathBuf)| -> Result<PathBuf, String> {
        let (_, now) = inside(root, shown)?;
        if &now != absolute {
            return Err(format!("{shown} changed after it was approved"));
        }
        Ok(now)
    };
    let io = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", p.source.0);
    let source = again(&p.source)?;
    match &p.op {
        WorkspaceOp::Mkdir { .. } => std::fs::create_dir_all(&source).map_err(|e| io("create", e)),
        WorkspaceOp::Delete { .. } => {
            let meta = std::fs::symlink_metadata(&source).map_err(|e| io("inspect", e))?;
            if meta.is_dir() {
                std::fs::remove_dir_all(&source)
            } else {
                std::fs::remove_file(&source)
            }
            .map_err(|e| io("delete", e))
        }
        WorkspaceOp::Move { overwrite, .. } | WorkspaceOp::Rename { overwrite, .. } => {
            let destination = again(p.destination.as_ref().ok_or("no destination")?)?;
            prepare_destination(&destination, *overwrite)
                .map_err(|e| io("replace the destination of", e))?;
            std::fs::rename(&source, &destination).map_err(|e| io("move", e))
        }
        WorkspaceOp::Copy { overwrite, .. } => {
            let destination = again(p.destination.as_ref().ok_or("no destination")?)?;
            prepare_destination(&destination, *overwrite)
                .map_err(|e| io("replace the destination of", e))?;
            copy_tree(&source, &destination).map_err(|e| io("copy", e))
        }
    }
}

fn prepare_destination(destination: &Path, overwrite: bool) -> std::io::Result<()> {
    if let Some(parent) = destination.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::symlink_metadata(destination) {
        Ok(meta) if overwrite && meta.is_dir() => std::fs::remove_dir_all(destination),
        Ok(_) if overwrite => std::fs::remove_file(destination),
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "destination exists",
        )),
        Err(_) => Ok(()),
    }
}

/// Copies a file, or a directory tree without following symlinks (links are not copied).
fn copy_tree(source: &Path, destination: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(source)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if meta.is_file() {
        std::fs::copy(source, destination)?;
        return Ok(());
    }
    std::fs::create_dir_all(destination)?;
    for entry in std::fs::read_dir(source)? {
        let entry = entry?;
        copy_tree(&entry.path(), &destination.join(entry.file_name()))?;
    }
    Ok(())
}

/// The op's postcondition, read back from the disk.
fn verify(p: &Planned) -> Result<String, String> {
    let exists = |path: &Path| std::fs::symlink_metadata(path).is_ok();
    let (shown, source) = (&p.source.0, &p.source.1);
    let destination = p.destination.as_ref();
    match (&p.op, destination) {
        (WorkspaceOp::Mkdir { .. }, _) if source.is_dir() => {
            Ok(format!("Created directory {shown}"))
        }
        (WorkspaceOp::Delete { .. }, _) if !exists(source) => Ok(format!("Deleted {shown}")),
        (WorkspaceOp::Move { .. } | WorkspaceOp::Rename { .. }, Some((to, to_abs)))
            if !exists(source) && exists(to_abs) =>
        {
            Ok(format!("Moved {shown} -> {to}"))
        }
        (WorkspaceOp::Copy { .. }, Some((to, to_abs))) if exists(to_abs) => {
            Ok(format!("Copied {shown} -> {to}"))
        }
        _ => Err(format!(
            "the {} of {shown} did not take effect on disk",
            p.op.name()
        )),
    }
}

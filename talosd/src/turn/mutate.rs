//! The governed change: preview, approval over the socket, checkpoint, a stale-file check,
//! the atomic write, read-back and verification. Every refusal on the way leaves the file as
//! it was.

use talos_core::diff;
use talos_core::discipline::CallEnd;
use talos_core::edit::{self, WriteCheck};
use talos_core::ladder::{Action, PermissionDecision};
use talos_core::outcome::{MutationRecord, MutationResult};
use talos_core::tools::{ToolArgs, ToolId};
use talos_protocol as proto;
use talos_protocol::event::{ApprovalSource, TurnEvent};
use talos_protocol::trace::{TraceApproval, TraceCheckpoint, TraceVerification};

use super::context::{TurnCtx, now_ms};
use crate::boundary::{self, Resolved};
use crate::checkpoint::{CaptureContext, CheckpointStore};
use crate::to_proto;

/// What the model is told, how the call ended, and whether the tool loop must stop.
pub struct MutationReply {
    pub text: String,
    pub end: CallEnd,
    pub stop: bool,
}

fn reply(text: String, end: CallEnd, stop: bool) -> MutationReply {
    MutationReply { text, end, stop }
}

pub async fn run(
    ctx: &mut TurnCtx,
    call_id: &str,
    tool: ToolId,
    args: &ToolArgs,
    resolved: &Resolved,
    decision: &PermissionDecision,
    exact: Option<&str>,
) -> MutationReply {
    let shown = resolved.facts.relative.clone().unwrap_or_default();
    let root = ctx.session.workspace.clone();
    let Some(absolute) = resolved.absolute.clone() else {
        return blocked(ctx, &shown, "path is outside the workspace".into());
    };
    if resolved.final_is_symlink {
        return blocked(
            ctx,
            &shown,
            format!(
                "Path not allowed before approval: `{shown}` is a symlink. No approval was requested and no file was changed."
            ),
        );
    }
    let before = match boundary::read_bytes(&absolute, &shown) {
        Ok(before) => before,
        Err(e) => {
            return blocked(
                ctx,
                &shown,
                format!("{e}. No approval was requested and no file was changed."),
            );
        }
    };
    let before_text = match before.as_deref().map(std::str::from_utf8).transpose() {
        Ok(text) => text.map(str::to_string),
        Err(_) => {
            return blocked(
                ctx,
                &shown,
                format!(
                    "{shown} is not UTF-8 text; Talos does not edit binary files. No approval was requested and no file was changed."
                ),
            );
        }
    };
    let (after, check) = match args {
        ToolArgs::WriteFile { content, .. } => {
            let content = sanitized(ctx, call_id, &shown, "content", content);
            (content.clone(), WriteCheck::Exact(content))
        }
        ToolArgs::EditFile {
            old_string,
            new_string,
            ..
        } => {
            let Some(current) = before_text.as_deref() else {
                return blocked(
                    ctx,
                    &shown,
                    format!(
                        "File not found: {shown}. talos.edit_file changes existing files; use talos.write_file to create one. No approval was requested and no file was changed."
                    ),
                );
            };
            let new_string = sanitized(ctx, call_id, &shown, "new_string", new_string);
            match edit::apply_edit(current, old_string, &new_string) {
                Ok(after) => (
                    after.clone(),
                    WriteCheck::Contains {
                        replacement: new_string,
                        approved: after,
                    },
                ),
                Err(e) => return blocked(ctx, &shown, e.message(&shown)),
            }
        }
        ToolArgs::ReadFile { .. }
        | ToolArgs::ListDir { .. }
        | ToolArgs::Grep { .. }
        | ToolArgs::MkDir { .. }
        | ToolArgs::MovePath { .. }
        | ToolArgs::CopyPath { .. }
        | ToolArgs::RenamePath { .. }
        | ToolArgs::DeletePath { .. }
        | ToolArgs::ApplyWorkspaceBatch { .. }
        | ToolArgs::RunCommand { .. } => {
            return blocked(ctx, &shown, "not a file write".into());
        }
    };
    // The person asked for exact content: the written bytes are that literal, whatever the
    // model proposed. The correction is recorded by hashes, never by the text.
    let (after, check) = match exact {
        Some(literal) if after != literal => {
            ctx.trace
                .warnings
                .push(talos_protocol::trace::TraceWarning {
                    code: "EXACT_LITERAL_WRITE_CORRECTED".into(),
                    message: format!(
                        "{call_id}: {shown}: proposed {} corrected to the requested literal {}",
                        talos_core::digest::sha256(after.as_bytes()),
                        talos_core::digest::sha256(literal.as_bytes())
                    ),
                });
            ctx.emit(TurnEvent::Info {
                text: format!(
                    "{shown}: the proposed content was corrected to the exact content you asked for"
                ),
            })
            .await;
            (literal.to_string(), WriteCheck::Exact(literal.to_string()))
        }
        Some(_) | None => (after, check),
    };
    let preview = diff::preview(before_text.as_deref(), &after);
    let decision = &format_override(
        ctx,
        call_id,
        tool,
        &shown,
        decision,
        before_text.as_deref(),
        &after,
    );

    if decision.action == Action::Ask {
        let request_id = crate::ids::new_id("apr");
        let lines = talos_core::digest::count_lines(&after);
        let mut details = vec![format!(
            "target: {shown} ({} bytes, {lines} lines)",
            after.len()
        )];
        if !decision.message.is_empty() {
            details.insert(0, format!("permission: {}", decision.message));
        }
        details.push("checkpoint: the current file is saved before the write".into());
        let params = proto::ApprovalRequestParams {
            turn_id: ctx.turn_id.clone(),
            session_id: ctx.session.id.clone(),
            request_id: request_id.clone(),
            tool: tool.name().into(),
            description: format!("write operation: {}", tool.name()),
            target: Some(shown.clone()),
            details,
            diff: Some(to_proto::diff(&preview)),
            remember_eligible: decision.remember_eligible,
        };
        let (answer, source) = ctx.ask(params).await;
        ctx.trace.approvals.push(TraceApproval {
            request_id,
            call_id: call_id.into(),
            tool: tool.name().into(),
            decision: answer,
            source,
            diff_added: preview.added,
            diff_removed: preview.removed,
            diff_truncated: preview.truncated,
        });
        match answer {
            proto::Decision::Deny => {
                ctx.facts.mutations.push(MutationRecord {
                    target: shown.clone(),
                    result: MutationResult::Denied,
                });
                ctx.files.push(proto::FileResult {
                    path: shown.clone(),
                    changed: false,
                    detail: format!("approval denied ({})", source_name(source)),
                });
                return reply(
                    format!(
                        "User did not approve the {} call. Target path: `{shown}`. The user is in control of the workspace; ask what they want to do differently before retrying, or take a different action that does not need approval.",
                        tool.name()
                    ),
                    CallEnd::Denied,
                    true,
                );
            }
            proto::Decision::ApproveForSession if decision.remember_eligible => {
                ctx.session.remember_writes()
            }
            proto::Decision::ApproveForSession | proto::Decision::Approve => {}
        }
    } else {
        ctx.emit(TurnEvent::Info {
            text: format!(
                "{} {shown}: allowed without a prompt ({})",
                tool.name(),
                decision.reason_code
            ),
        })
        .await;
    }
    if ctx.cancel.is_cancelled() {
        return failed(
            ctx,
            &shown,
            "the turn was cancelled before the write".into(),
        );
    }

    // No checkpoint, no write.
    let store = CheckpointStore::new(ctx.daemon.home.checkpoints());
    let capture = CaptureContext {
        trace_id: &ctx.trace.trace_id,
        turn_id: &ctx.turn_id,
        call_id,
        tool: tool.name(),
        created_at_ms: now_ms(),
    };
    let captured = store.capture(&root, &shown, before.as_deref(), &capture);
    match captured {
        Ok(c) => ctx.trace.checkpoints.push(TraceCheckpoint {
            call_id: call_id.into(),
            status: "created".into(),
            checkpoint_id: Some(c.checkpoint_id),
            path: shown.clone(),
            existed_before: c.existed_before,
            blob_sha256: c.blob_sha256.map(|h| format!("sha256:{h}")),
            message: None,
        }),
        Err(e) => {
            ctx.trace.checkpoints.push(TraceCheckpoint {
                call_id: call_id.into(),
                status: "failed".into(),
                checkpoint_id: None,
                path: shown.clone(),
                existed_before: before.is_some(),
                blob_sha256: None,
                message: Some(e.to_string()),
            });
            return failed(
                ctx,
                &shown,
                format!("Required checkpoint failed before mutation: {e}"),
            );
        }
    }

    // The boundary again, at the moment of IO, and the bytes the person approved against.
    let now = match boundary::recheck(&root, &shown, &absolute) {
        Ok(now) => now,
        Err(e) => return failed(ctx, &shown, format!("{e}. The file was not written.")),
    };
    match now
        .absolute
        .as_deref()
        .map(|a| boundary::read_bytes(a, &shown))
    {
        Some(Ok(current)) if current == before => {}
        Some(Ok(_)) => {
            return failed(
                ctx,
                &shown,
                format!(
                    "{shown} changed after it was approved; the write was refused. Read it again and propose the change anew."
                ),
            );
        }
        Some(Err(e)) => return failed(ctx, &shown, format!("{e}. The file was not written.")),
        None => return failed(ctx, &shown, "path left the workspace after approval".into()),
    }
    if let Err(e) = boundary::write_atomic(&root, &absolute, &shown, after.as_bytes()) {
        return failed(ctx, &shown, format!("{e}"));
    }
    let on_disk = match boundary::read_bytes(&absolute, &shown) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => Vec::new(),
        Err(e) => {
            return failed(
                ctx,
                &shown,
                format!("written, but the read-back failed: {e}"),
            );
        }
    };
    let verification = edit::verify_write(&check, &on_disk);
    ctx.trace.verification.push(TraceVerification {
        call_id: call_id.into(),
        path: shown.clone(),
        status: if verification.passed {
            "PASS"
        } else {
            "INTEGRITY_FAIL"
        }
        .into(),
        summary: verification.summary.clone(),
    });
    ctx.trace.executions.push(proto::trace::TraceExecution {
        call_id: call_id.into(),
        tool: tool.name().into(),
        success: verification.passed,
        path: Some(shown.clone()),
        output: to_proto::text_digest(&verification.summary),
        sha256_after: Some(talos_core::digest::sha256(&on_disk)),
        error: None,
    });
    if !verification.passed {
        ctx.facts.mutations.push(MutationRecord {
            target: shown.clone(),
            result: MutationResult::Failed {
                reason: verification.summary.clone(),
            },
        });
        ctx.files.push(proto::FileResult {
            path: shown.clone(),
            changed: true,
            detail: format!("written but not verified: {}", verification.summary),
        });
        return reply(
            format!(
                "File verification failed: {}. [verification: INTEGRITY_FAIL]",
                verification.summary
            ),
            CallEnd::Failed,
            true,
        );
    }
    ctx.facts.mutations.push(MutationRecord {
        target: shown.clone(),
        result: MutationResult::Succeeded { verified: true },
    });
    let verb = match (tool, before.is_some()) {
        (ToolId::EditFile, _) => "Edited",
        (_, true) => "Updated",
        (_, false) => "Created",
    };
    let detail = format!(
        "{verb} ({} bytes, +{} -{}), verified",
        on_disk.len(),
        preview.added,
        preview.removed
    );
    ctx.files.push(proto::FileResult {
        path: shown.clone(),
        changed: true,
        detail: detail.clone(),
    });
    ctx.emit(TurnEvent::Ok {
        text: format!("{verb} {shown}: {}", verification.summary),
    })
    .await;
    reply(
        format!(
            "{verb} {shown} ({} lines, {} bytes). Verified: {}. [verification: PASS]",
            talos_core::digest::count_lines(&after),
            on_disk.len(),
            verification.summary
        ),
        CallEnd::Succeeded,
        false,
    )
}

fn source_name(source: ApprovalSource) -> &'static str {
    match source {
        ApprovalSource::Client => "by the user",
        ApprovalSource::Disconnect => "client disconnected",
        ApprovalSource::Timeout => "approval timed out",
        ApprovalSource::Cancelled => "turn cancelled",
        ApprovalSource::Remembered => "remembered",
    }
}

/// Refused before approval: nothing was asked and nothing written.
pub fn blocked(ctx: &mut TurnCtx, shown: &str, message: String) -> MutationReply {
    ctx.facts.mutations.push(MutationRecord {
        target: shown.into(),
        result: MutationResult::Blocked {
            reason: first_sentence(&message),
        },
    });
    ctx.files.push(proto::FileResult {
        path: shown.into(),
        changed: false,
        detail: first_sentence(&message),
    });
    reply(message, CallEnd::Failed, false)
}

fn failed(ctx: &mut TurnCtx, shown: &str, message: String) -> MutationReply {
    ctx.facts.mutations.push(MutationRecord {
        target: shown.into(),
        result: MutationResult::Failed {
            reason: first_sentence(&message),
        },
    });
    ctx.files.push(proto::FileResult {
        path: shown.into(),
        changed: false,
        detail: first_sentence(&message),
    });
    reply(message, CallEnd::Failed, true)
}

fn first_sentence(message: &str) -> String {
    let cut = message.find(". ").map_or(message.len(), |i| i + 1);
    message[..cut].to_string()
}

/// An allow (a configured rule or a remembered approval) does not cover a change of the file's
/// line endings, byte order mark or final newline: that is asked.
fn format_override(
    ctx: &mut TurnCtx,
    call_id: &str,
    tool: ToolId,
    shown: &str,
    decision: &PermissionDecision,
    before: Option<&str>,
    after: &str,
) -> PermissionDecision {
    let Some(change) = (decision.action == Action::Allow)
        .then(|| talos_core::rules::format_change(before, after))
        .flatten()
    else {
        return decision.clone();
    };
    let asked = PermissionDecision {
        action: Action::Ask,
        reason_code: talos_core::ladder::ReasonCode::FormatChangeAsk,
        message: format!(
            "the change alters the file's format: {change}; an allow does not cover that"
        ),
        remember_eligible: false,
    };
    ctx.trace
        .permission_decisions
        .push(talos_protocol::trace::TracePermission {
            call_id: call_id.into(),
            tool: tool.name().into(),
            action: asked.action.as_str().into(),
            reason_code: asked.reason_code.into(),
            relative_path: Some(shown.into()),
            remember_eligible: false,
        });
    asked
}

/// The proposed text without trailing commentary or stray fences: what the approval shows is
/// exactly what is written. A change is recorded in the trace (as digests, never the text).
fn sanitized(ctx: &mut TurnCtx, call_id: &str, path: &str, field: &str, text: &str) -> String {
    let result = talos_core::sanitize::strip_commentary(path, text);
    if result.changed {
        ctx.trace
            .warnings
            .push(talos_protocol::trace::TraceWarning {
                code: "TOOL_CONTENT_SANITIZED".into(),
                message: format!(
                    "{call_id}: {field} of {path}: removed {} ({} -> {} bytes)",
                    result.removed.join(", "),
                    text.len(),
                    result.content.len()
                ),
            });
    }
    result.content
}

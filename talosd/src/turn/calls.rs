//! One proposed call through the fixed sequence: the core's checks, loop discipline, the
//! boundary and the ladder, then approval and execution. Every refusal is recorded and told
//! to the model; nothing is written on any refusal.

use std::collections::BTreeMap;

use talos_core::check::{self, CheckOutcome};
use talos_core::discipline::{CallEnd, LoopGuard, Verdict};
use talos_core::ladder::{self, Action, LadderInput, PathFacts};
use talos_core::outcome::{MutationRecord, MutationResult};
use talos_core::plan::{Phase, TurnPlan};
use talos_core::surface::Surface;
use talos_core::tools::{ToolArgs, ToolId};
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::*;

use super::context::TurnCtx;
use super::{command, mutate, read_tools, workspace_ops};
use crate::to_proto;
use crate::workspace::Resolved;

/// A call as the model proposed it.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub native_id: String,
    pub name: String,
    /// The arguments, or why they could not be read.
    pub args: Result<BTreeMap<String, String>, String>,
    /// `native` or `text`.
    pub source: &'static str,
}

/// What the model is told, whether a change was written, and whether the loop must stop.
#[derive(Debug, Clone)]
pub struct CallReport {
    pub text: String,
    pub mutated: bool,
    pub stop: Option<String>,
}

fn report(text: String, stop: Option<String>) -> CallReport {
    CallReport {
        text,
        mutated: false,
        stop,
    }
}

pub async fn dispatch(
    ctx: &mut TurnCtx,
    plan: &TurnPlan,
    surface: &Surface,
    phase: Phase,
    guard: &mut LoopGuard,
    proposal: &Proposal,
) -> CallReport {
    let call_id = ctx.next_call_id();
    let name = proposal.name.as_str();
    let empty = BTreeMap::new();
    let raw = match &proposal.args {
        Ok(raw) => raw,
        Err(e) => {
            ctx.facts.malformed_tool_call = true;
            record(
                ctx,
                &call_id,
                proposal,
                None,
                &empty,
                None,
                "rejected",
                Some(format!("invalid tool-call payload: {e}")),
            );
            let stop = guard.note_rejection(&format!("invalid:{name}"));
            return report(
                format!("[error] Invalid tool-call payload for {name}: {e}"),
                stop,
            );
        }
    };
    let strict = ctx.daemon.config.tools.strict_names;
    let (tool, args) = match check::check_call(name, raw, plan, surface, phase, strict) {
        CheckOutcome::Accepted { tool, args, .. } => (tool, args),
        CheckOutcome::Rejected {
            tool,
            stage,
            message,
        } => {
            let path_hint = raw.get("path").or_else(|| raw.get("file_path")).cloned();
            record(
                ctx,
                &call_id,
                proposal,
                tool,
                raw,
                path_hint.clone(),
                "rejected",
                Some(format!("{}: {message}", stage.as_str())),
            );
            ctx.emit(TurnEvent::ToolProgress {
                tool: name.into(),
                call_id: call_id.clone(),
                message: format!("rejected before approval: {message}"),
            })
            .await;
            if let Some(tool) = tool.filter(|t| t.mutates()) {
                if plan.contract().mutation_allowed {
                    let target = path_hint.unwrap_or_else(|| tool.name().into());
                    ctx.facts.mutations.push(MutationRecord {
                        target,
                        result: MutationResult::Blocked {
                            reason: message.clone(),
                        },
                    });
                } else {
                    ctx.facts.read_only_blocked = true;
                }
            }
            let stop =
                guard.note_rejection(&format!("{name}\u{1f}{}\u{1f}{message}", stage.as_str()));
            return report(format!("[error] {message}"), stop);
        }
    };
    let workspace = ctx.session.files.clone();
    let all: Vec<Resolved> = args.paths().iter().map(|p| workspace.resolve(p)).collect();
    let resolved = all.first().cloned();
    let every: Vec<PathFacts> = all.iter().map(|r| r.facts.clone()).collect();
    let facts = every
        .iter()
        .find(|f| f.escapes)
        .or_else(|| every.first())
        .cloned()
        .unwrap_or(PathFacts {
            relative: None,
            escapes: false,
            problem: None,
            protected: None,
        });
    let decision = ladder::decide_all(
        &LadderInput {
            tool,
            risk: args.effective_risk(),
            phase,
            rules: &ctx.daemon.rules,
            grants: ctx.session.grants(),
        },
        &every,
    );
    ctx.trace.permission_decisions.push(TracePermission {
        call_id: call_id.clone(),
        tool: tool.name().into(),
        action: decision.action.as_str().into(),
        reason_code: decision.reason_code.into(),
        relative_path: facts.relative.clone(),
        remember_eligible: decision.remember_eligible,
    });
    let path_hint = facts.relative.clone();
    if decision.action == Action::Deny {
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
        record(
            ctx,
            &call_id,
            proposal,
            Some(tool),
            raw,
            path_hint.clone(),
            "denied",
            Some(decision.reason_code.into()),
        );
        ctx.emit(TurnEvent::ToolProgress {
            tool: tool.name().into(),
            call_id,
            message: format!("denied by policy: {}", decision.reason_code),
        })
        .await;
        if tool.mutates() {
            let target = path_hint.unwrap_or_default();
            ctx.facts.mutations.push(MutationRecord {
                target: target.clone(),
                result: MutationResult::Blocked {
                    reason: decision.message.clone(),
                },
            });
            ctx.files.push(proto::FileResult {
                path: target,
                changed: false,
                detail: format!("denied by policy ({})", decision.reason_code),
            });
        }
        guard.after_call(tool, &args, CallEnd::Failed);
        return report(format!("[error] {message}"), guard.should_stop());
    }
    match guard.before_call(tool, &args) {
        Verdict::Proceed => {}
        Verdict::Refuse(message) => {
            record(
                ctx,
                &call_id,
                proposal,
                Some(tool),
                raw,
                args.path().map(str::to_string),
                "rejected",
                Some(format!("discipline: {message}")),
            );
            ctx.emit(TurnEvent::ToolProgress {
                tool: tool.name().into(),
                call_id,
                message: format!("refused: {message}"),
            })
            .await;
            return report(format!("[error] {message}"), guard.should_stop());
        }
        Verdict::Stop(message) => {
            record(
                ctx,
                &call_id,
                proposal,
                Some(tool),
                raw,
                args.path().map(str::to_string),
                "rejected",
                Some(format!("discipline: {message}")),
            );
            return report(format!("[error] {message}"), Some(message));
        }
    }
    ctx.emit(TurnEvent::ToolProgress {
        tool: tool.name().into(),
        call_id: call_id.clone(),
        message: path_hint.clone().unwrap_or_default(),
    })
    .await;
    if let ToolArgs::RunCommand { request } = &args {
        let outcome = command::run(ctx, &call_id, request, &decision).await;
        guard.after_call(tool, &args, outcome.end);
        let (stage, rejection) = end_record(outcome.end, &outcome.text);
        record(
            ctx,
            &call_id,
            proposal,
            Some(tool),
            raw,
            None,
            stage,
            rejection,
        );
        let stop = match outcome.end {
            CallEnd::Denied => {
                Some("[Tool loop stopped because the command was not approved.]".to_string())
            }
            CallEnd::Succeeded | CallEnd::Failed if outcome.stop => {
                Some("[Tool loop stopped: the command was cancelled.]".to_string())
            }
            CallEnd::Succeeded | CallEnd::Failed => guard.should_stop(),
        };
        return CallReport {
            text: outcome.text,
            mutated: false,
            stop,
        };
    }
    if tool.mutates() {
        let Some(resolved) = resolved else {
            return report("[error] the call has no path".into(), None);
        };
        let outcome = if tool.is_workspace_operation() {
            workspace_ops::run(ctx, &call_id, tool, &args, &decision).await
        } else {
            let exact = plan.expectations().iter().find_map(|e| match e {
                talos_core::plan::Expectation::ExactContent { target, content }
                    if Some(target.as_str()) == resolved.facts.relative.as_deref() =>
                {
                    Some(content.clone())
                }
                _ => None,
            });
            mutate::run(
                ctx,
                &call_id,
                tool,
                &args,
                &resolved,
                &decision,
                exact.as_deref(),
            )
            .await
        };
        guard.after_call(tool, &args, outcome.end);
        let (stage, rejection) = end_record(outcome.end, &outcome.text);
        record(
            ctx,
            &call_id,
            proposal,
            Some(tool),
            raw,
            path_hint,
            stage,
            rejection,
        );
        let stop = match (outcome.end, outcome.stop) {
            (CallEnd::Denied, _) => Some(
                "[Tool loop stopped because the requested change was not approved.]".to_string(),
            ),
            (_, true) => Some(format!(
                "[Tool loop stopped: {}]",
                first_sentence(&outcome.text)
            )),
            (_, false) => guard.should_stop(),
        };
        return CallReport {
            text: outcome.text,
            mutated: outcome.end == CallEnd::Succeeded,
            stop,
        };
    }
    let protected = facts.protected.is_some();
    if decision.action == Action::Ask {
        let private = ctx.mode.private();
        let params = proto::ApprovalRequestParams {
            turn_id: ctx.turn_id.clone(),
            session_id: ctx.session.id.clone(),
            request_id: crate::ids::new_id("apr"),
            tool: tool.name().into(),
            description: format!("protected read: {}", tool.name()),
            target: path_hint.clone(),
            details: vec![
                format!("permission: {}", decision.message),
                if private {
                    "private mode: the content is shown to you only and withheld from the model"
                        .into()
                } else {
                    "the file's content will be sent to the model".into()
                },
            ],
            diff: None,
            remember_eligible: false,
        };
        let request_id = params.request_id.clone();
        let (answer, source) = ctx.ask(params).await;
        ctx.trace.approvals.push(TraceApproval {
            request_id,
            call_id: call_id.clone(),
            tool: tool.name().into(),
            decision: answer,
            source,
            diff_added: 0,
            diff_removed: 0,
            diff_truncated: false,
        });
        if answer == proto::Decision::Deny {
            ctx.facts.read_denied = true;
            guard.after_call(tool, &args, CallEnd::Denied);
            record(
                ctx,
                &call_id,
                proposal,
                Some(tool),
                raw,
                path_hint,
                "denied",
                Some("approval denied".into()),
            );
            return report(
                format!("User did not approve the {} call.", tool.name()),
                Some("[Tool loop stopped because the requested read was not approved.]".into()),
            );
        }
    }
    let output = run_read_tool(ctx, &args, resolved.as_ref());
    let success = !output.starts_with("[error]");
    if success && protected {
        // Remember the content lines (without the `N | ` display prefix) so that the answer
        // guard can withhold them if the model echoes them.
        let lines = output
            .lines()
            .filter_map(|l| l.split_once(" | ").map(|(_, text)| text.trim().to_string()))
            .filter(|l| l.len() >= 8);
        ctx.protected_lines.extend(lines);
    }
    let for_model = if success && protected && ctx.mode.private() {
        ctx.emit(TurnEvent::TrustedInfo {
            text: format!(
                "{} (shown to you only; withheld from the model in private mode):\n{output}",
                path_hint.clone().unwrap_or_default()
            ),
        })
        .await;
        format!(
            "[protected content of {} was shown to the user only (private mode); it is not available to the model]",
            path_hint.clone().unwrap_or_default()
        )
    } else {
        output
    };
    ctx.trace.executions.push(TraceExecution {
        call_id: call_id.clone(),
        tool: tool.name().into(),
        success,
        path: path_hint.clone(),
        output: to_proto::text_digest(&for_model),
        sha256_after: None,
        error: None,
    });
    record(
        ctx,
        &call_id,
        proposal,
        Some(tool),
        raw,
        path_hint.clone(),
        if success { "executed" } else { "failed" },
        None,
    );
    guard.after_call(
        tool,
        &args,
        if success {
            CallEnd::Succeeded
        } else {
            CallEnd::Failed
        },
    );
    if success && let Some(p) = path_hint {
        ctx.read_paths.push(p);
    }
    report(for_model, guard.should_stop())
}

fn first_sentence(message: &str) -> &str {
    message.find(". ").map_or(message, |i| &message[..=i])
}

fn run_read_tool(ctx: &TurnCtx, args: &ToolArgs, resolved: Option<&Resolved>) -> String {
    let error = |e: String| format!("[error] {e}");
    match (args, resolved) {
        (
            ToolArgs::ReadFile {
                path,
                max_lines,
                offset,
            },
            Some(r),
        ) => read_tools::read_file(&ctx.session.files, r, path, *max_lines, *offset)
            .unwrap_or_else(|e| error(e.to_string())),
        (
            ToolArgs::ListDir {
                path,
                max_depth,
                max_entries,
            },
            Some(r),
        ) => read_tools::list_dir(&ctx.session.files, r, path, *max_depth, *max_entries)
            .unwrap_or_else(|e| error(e.to_string())),
        (
            ToolArgs::Grep {
                pattern,
                include,
                max_results,
                regex,
            },
            _,
        ) => {
            let request = read_tools::GrepRequest {
                pattern,
                include: include.as_deref(),
                max_results: *max_results,
                regex: *regex,
            };
            read_tools::grep(&ctx.session.files, &request).unwrap_or_else(error)
        }
        _ => error("the call has no usable path".into()),
    }
}

#[allow(clippy::too_many_arguments)]
fn record(
    ctx: &mut TurnCtx,
    call_id: &str,
    proposal: &Proposal,
    tool: Option<ToolId>,
    raw: &BTreeMap<String, String>,
    path_hint: Option<String>,
    stage: &str,
    rejection: Option<String>,
) {
    let content_digests = [
        "content",
        "text",
        "body",
        "data",
        "file_content",
        "old_string",
        "new_string",
        "old_text",
        "new_text",
    ]
    .iter()
    .filter_map(|k| {
        raw.get(*k).map(|v| NamedDigest {
            name: (*k).into(),
            digest: to_proto::text_digest(v),
        })
    })
    .collect();
    let path_hint = path_hint.map(|p| {
        if talos_core::protected::protected_kind(&p).is_some() {
            "<protected-path>".to_string()
        } else {
            p
        }
    });
    ctx.trace.tool_calls.push(TraceToolCall {
        call_id: call_id.into(),
        requested_name: proposal.name.chars().take(100).collect(),
        tool: tool.map(|t| t.name().into()),
        source: proposal.source.into(),
        parameter_names: raw.keys().map(|k| k.chars().take(64).collect()).collect(),
        path_hint,
        content_digests,
        stage: stage.into(),
        rejection,
    });
}

/// The trace stage and rejection text recorded for a call that ran.
fn end_record(end: CallEnd, text: &str) -> (&'static str, Option<String>) {
    let stage = match end {
        CallEnd::Succeeded => "executed",
        CallEnd::Denied => "denied",
        CallEnd::Failed => "failed",
    };
    let rejection = (end != CallEnd::Succeeded).then(|| text.chars().take(300).collect());
    (stage, rejection)
}

//! One turn, in the seed's order: contract, posture, plan, surface, proposal, checks, ladder,
//! approval, checkpoint, write and verification, outcome and trace. Every decision is made by
//! talos-core; this module performs the effects and keeps the records.

mod context;
mod mutate;
mod read_tools;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use talos_core::check::{self, CheckOutcome};
use talos_core::contract::{self, TaskType};
use talos_core::ladder::{self, Action};
use talos_core::outcome::{self, MutationRecord, MutationResult};
use talos_core::plan::{Expectation, Phase, TurnPlan};
use talos_core::posture::{self, Posture};
use talos_core::prompt::{self, ToolCalling};
use talos_core::textcall;
use talos_core::tools::{ToolArgs, ToolId};
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::*;

use crate::connection::Peer;
use crate::engine::EngineError;
use crate::server::Daemon;
use crate::sessions::Session;
use crate::to_proto;
use context::{TurnCtx, now_ms};

const RESTORE_ANSWER: &str = "Checkpoint restore is available through Talos's local checkpoint store.\nI did not restore files from this natural-language turn.\nCheckpoint restore commands arrive in a later release; the checkpoints of every change are kept under the Talos home.";

/// Runs one turn to its outcome. The trace is written however the turn ends.
pub async fn run(
    daemon: Arc<Daemon>,
    session: Arc<Session>,
    peer: Arc<Peer>,
    prompt: String,
) -> proto::TurnOutcome {
    let turn_number = session.next_turn();
    let turn_id = crate::ids::new_id("turn");
    let trace_id = crate::ids::new_id("trc");
    let contract = contract::resolve(&prompt);
    let posture = match session.mode {
        proto::Mode::Agent => Posture::Agent,
        proto::Mode::Ask => Posture::AskReadOnly,
        proto::Mode::Plan => Posture::PlanReadOnly,
    };
    let effective = posture::apply(posture, contract);
    let expectations = talos_core::plan::compile_expectations(&effective.contract);
    let plan = match TurnPlan::new(effective.clone(), expectations) {
        Ok(plan) => plan,
        Err(e) => {
            tracing::error!(error = %e, "turn plan refused");
            TurnPlan::from_turn(effective)
        }
    };
    let trace = TraceRecord {
        schema_version: TRACE_SCHEMA_VERSION,
        trace_id: trace_id.clone(),
        session_id: session.id.clone(),
        turn_id: turn_id.clone(),
        turn_number,
        started_at_ms: now_ms(),
        finished_at_ms: 0,
        workspace_hash: talos_core::digest::sha256(session.workspace.to_string_lossy().as_bytes()),
        mode: session.mode.as_str().into(),
        model: TraceModel {
            backend: "llama.cpp".into(),
            url: daemon.engine.url.clone(),
            tool_calling: String::new(),
        },
        request: to_proto::text_digest(&prompt),
        request_targets: plan
            .contract()
            .expected_targets
            .iter()
            .chain(&plan.contract().forbidden_targets)
            .cloned()
            .collect(),
        task_contract: to_proto::contract(plan.contract()),
        phase_transitions: Vec::new(),
        tool_surfaces: Vec::new(),
        model_calls: Vec::new(),
        tool_calls: Vec::new(),
        permission_decisions: Vec::new(),
        approvals: Vec::new(),
        checkpoints: Vec::new(),
        executions: Vec::new(),
        verification: Vec::new(),
        warnings: Vec::new(),
        outcome: TraceOutcome {
            status: proto::CompletionStatus::Failed,
            classification: proto::Classification::Failed,
            mutation_status: String::new(),
            approval_status: String::new(),
            answer: TextDigest::default(),
        },
    };
    let mut ctx = TurnCtx::new(daemon.clone(), session, peer, turn_id.clone(), trace);
    ctx.facts.mutation_requested = plan.contract().mutation_requested;
    ctx.facts.mutation_allowed = plan.contract().mutation_allowed;
    tracing::info!(turn = %turn_id, task = plan.contract().task_type.as_str(), "turn started");

    let answer = if plan.contract().task_type == TaskType::CheckpointRestore {
        RESTORE_ANSWER.to_string()
    } else {
        tool_loop(&mut ctx, &plan).await
    };
    finish(ctx, &plan, answer).await
}

async fn tool_loop(ctx: &mut TurnCtx, plan: &TurnPlan) -> String {
    let daemon = ctx.daemon.clone();
    let calling = if !daemon.config.tools.native_calling {
        ToolCalling::Text
    } else {
        match daemon.engine.supports_native_tools().await {
            Ok(true) => ToolCalling::Native,
            Ok(false) => ToolCalling::Text,
            Err(e) => {
                ctx.facts.model_failed = true;
                ctx.trace.warnings.push(TraceWarning {
                    code: "MODEL_UNREACHABLE".into(),
                    message: e.to_string(),
                });
                ctx.emit(TurnEvent::Error {
                    message: e.to_string(),
                })
                .await;
                return format!("The model server could not be reached: {e}");
            }
        }
    };
    ctx.trace.model.tool_calling = calling.as_str().into();
    let mut phase = plan.initial_phase();
    let mut messages: Vec<Value> = vec![
        json!({"role": "system", "content": ""}),
        json!({"role": "user", "content": plan.contract().original_request}),
    ];
    let mut answer = String::new();
    let max_calls = daemon.config.turn.max_model_calls;
    for index in 0..max_calls {
        if ctx.cancel.is_cancelled() {
            ctx.facts.cancelled = true;
            break;
        }
        let surface = plan.surface_for(phase);
        ctx.trace.tool_surfaces.push(TraceSurface {
            model_call: index,
            phase: phase.as_str().into(),
            tools: surface
                .tools()
                .iter()
                .map(|t| t.name().to_string())
                .collect(),
            reason: surface.reason().into(),
        });
        messages[0] = json!({"role": "system", "content": prompt::system_prompt(plan, &surface, phase, calling)});
        let mut body = json!({
            "model": daemon.engine.model_name,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": daemon.engine.max_tokens,
            "cache_prompt": true,
        });
        if calling == ToolCalling::Native && !surface.tools().is_empty() {
            body["tools"] = Value::Array(
                surface
                    .tools()
                    .iter()
                    .map(|t| to_proto::tool_schema(*t))
                    .collect(),
            );
        }
        let reply = match stream_reply(ctx, &body).await {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                ctx.facts.cancelled = true;
                break;
            }
            Err(e) => {
                ctx.facts.model_failed = true;
                ctx.trace.model_calls.push(TraceModelCall {
                    index,
                    finish_reason: String::new(),
                    content: TextDigest::default(),
                    tool_calls: 0,
                    prompt_tokens: None,
                    completion_tokens: None,
                    error: Some(e.to_string()),
                });
                ctx.emit(TurnEvent::Error {
                    message: e.to_string(),
                })
                .await;
                answer = format!("The model call failed: {e}");
                break;
            }
        };
        ctx.trace.model_calls.push(TraceModelCall {
            index,
            finish_reason: reply.finish_reason.clone(),
            content: to_proto::text_digest(&reply.content),
            tool_calls: reply.tool_calls.len(),
            prompt_tokens: reply.prompt_tokens,
            completion_tokens: reply.completion_tokens,
            error: None,
        });
        let text = textcall::parse(&reply.content);
        let native = !reply.tool_calls.is_empty();
        let mut proposals: Vec<(String, String, Result<BTreeMap<String, String>, String>)> =
            Vec::new();
        if native {
            for call in &reply.tool_calls {
                let args = textcall::args_from_json(&call.arguments).map_err(|e| {
                    if reply.finish_reason == "length" {
                        format!("{e} (the reply was cut off at the token limit)")
                    } else {
                        e
                    }
                });
                proposals.push((call.id.clone(), call.name.clone(), args));
            }
        } else {
            for call in text.calls.iter() {
                proposals.push((String::new(), call.name.clone(), Ok(call.args.clone())));
            }
        }
        if proposals.is_empty() {
            if text.malformed {
                ctx.facts.malformed_tool_call = true;
            }
            answer = text.prose;
            break;
        }
        if native {
            messages.push(json!({"role": "assistant", "content": reply.content, "tool_calls": reply.tool_calls.iter().map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})).collect::<Vec<_>>()}));
        } else {
            messages.push(json!({"role": "assistant", "content": reply.content}));
        }
        let mut stop = false;
        for (native_id, name, args) in proposals {
            let call_id = ctx.next_call_id();
            let source = if native { "native" } else { "text" };
            let (result_text, stop_here, mutated) = match args {
                Ok(args) => {
                    dispatch_call(ctx, plan, &surface, phase, &call_id, &name, &args, source).await
                }
                Err(e) => {
                    ctx.facts.malformed_tool_call = true;
                    record_call(
                        ctx,
                        &call_id,
                        &name,
                        None,
                        source,
                        &BTreeMap::new(),
                        None,
                        "rejected",
                        Some(format!("invalid tool-call payload: {e}")),
                    );
                    (
                        format!("[error] Invalid tool-call payload for {name}: {e}"),
                        false,
                        false,
                    )
                }
            };
            if mutated && phase == Phase::Apply {
                ctx.trace.phase_transitions.push(TracePhaseTransition {
                    from: "APPLY".into(),
                    to: "VERIFY".into(),
                    reason: "mutation succeeded".into(),
                });
                phase = Phase::Verify;
            }
            let wrapped = format!("[tool_result: {name}]\n{result_text}\n[/tool_result]");
            if native {
                messages
                    .push(json!({"role": "tool", "tool_call_id": native_id, "content": wrapped}));
            } else {
                messages.push(json!({"role": "user", "content": wrapped}));
            }
            if stop_here || ctx.client_gone() || ctx.cancel.is_cancelled() {
                stop = true;
                break;
            }
        }
        if ctx.cancel.is_cancelled() {
            ctx.facts.cancelled = true;
        }
        if stop {
            break;
        }
        if index + 1 == max_calls {
            ctx.trace.warnings.push(TraceWarning {
                code: "ITERATION_LIMIT".into(),
                message: format!("the turn reached its limit of {max_calls} model calls"),
            });
        }
    }
    answer
}

/// Streams one model reply to the client. `Ok(None)` when the turn was cancelled meanwhile.
async fn stream_reply(
    ctx: &mut TurnCtx,
    body: &Value,
) -> Result<Option<crate::engine::ChatReply>, EngineError> {
    let engine = ctx.daemon.engine.clone();
    let cancel = ctx.cancel.clone();
    let mut stream = tokio::select! {
        s = engine.start_chat(body) => s?,
        () = cancel.cancelled() => return Ok(None),
    };
    let stream_name = "answer".to_string();
    ctx.emit(TurnEvent::StreamStart {
        stream: stream_name.clone(),
    })
    .await;
    loop {
        let next = tokio::select! {
            n = stream.next_text() => n,
            () = cancel.cancelled() => {
                ctx.emit(TurnEvent::StreamEnd { stream: stream_name }).await;
                return Ok(None);
            }
        };
        match next {
            Ok(Some(text)) => {
                // Tool-call protocol text is not shown as prose: the runtime reports calls itself.
                ctx.emit(TurnEvent::StreamChunk {
                    stream: stream_name.clone(),
                    text,
                })
                .await;
            }
            Ok(None) => break,
            Err(e) => {
                ctx.emit(TurnEvent::StreamEnd {
                    stream: stream_name,
                })
                .await;
                return Err(e);
            }
        }
    }
    let reply = stream.finish().await?;
    ctx.emit(TurnEvent::StreamEnd {
        stream: stream_name,
    })
    .await;
    ctx.emit(TurnEvent::Streamed {
        text: reply.content.clone(),
    })
    .await;
    Ok(Some(reply))
}

/// Checks and, when allowed, runs one proposed call. Returns the text for the model, whether
/// the loop must stop, and whether a change was written.
#[allow(clippy::too_many_arguments)]
async fn dispatch_call(
    ctx: &mut TurnCtx,
    plan: &TurnPlan,
    surface: &talos_core::surface::Surface,
    phase: Phase,
    call_id: &str,
    name: &str,
    raw: &BTreeMap<String, String>,
    source: &str,
) -> (String, bool, bool) {
    let strict = ctx.daemon.config.tools.strict_names;
    let (tool, args) = match check::check_call(name, raw, plan, surface, phase, strict) {
        CheckOutcome::Rejected {
            tool,
            stage,
            message,
        } => {
            let path_hint = raw.get("path").or_else(|| raw.get("file_path")).cloned();
            record_call(
                ctx,
                call_id,
                name,
                tool,
                source,
                raw,
                path_hint.clone(),
                "rejected",
                Some(format!("{}: {message}", stage.as_str())),
            );
            ctx.emit(TurnEvent::ToolProgress {
                tool: name.into(),
                call_id: call_id.into(),
                message: format!("rejected before approval: {message}"),
            })
            .await;
            if let Some(tool) = tool.filter(|t| t.mutates()) {
                if plan.contract().mutation_allowed {
                    ctx.facts.mutations.push(MutationRecord {
                        target: path_hint.unwrap_or_else(|| tool.name().into()),
                        result: MutationResult::Blocked {
                            reason: message.clone(),
                        },
                    });
                } else {
                    ctx.facts.read_only_blocked = true;
                }
            }
            return (format!("[error] {message}"), false, false);
        }
        CheckOutcome::Accepted { tool, args, .. } => (tool, args),
    };
    let resolved = args
        .path()
        .map(|p| crate::boundary::resolve(&ctx.session.workspace, p));
    let facts = resolved.as_ref().map_or(
        talos_core::ladder::PathFacts {
            relative: None,
            escapes: false,
            problem: None,
            protected: None,
        },
        |r| r.facts.clone(),
    );
    let decision = ladder::decide(tool, &facts, ctx.session.grants());
    ctx.trace.permission_decisions.push(TracePermission {
        call_id: call_id.into(),
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
        record_call(
            ctx,
            call_id,
            name,
            Some(tool),
            source,
            raw,
            path_hint.clone(),
            "denied",
            Some(decision.reason_code.into()),
        );
        ctx.emit(TurnEvent::ToolProgress {
            tool: tool.name().into(),
            call_id: call_id.into(),
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
        return (format!("[error] {message}"), false, false);
    }
    ctx.emit(TurnEvent::ToolProgress {
        tool: tool.name().into(),
        call_id: call_id.into(),
        message: path_hint.clone().unwrap_or_default(),
    })
    .await;
    if tool.mutates() {
        let Some(resolved) = resolved else {
            return ("[error] missing path".into(), false, false);
        };
        let outcome = mutate::run(ctx, call_id, tool, &args, &resolved, &decision).await;
        let stage = if outcome.succeeded {
            "executed"
        } else if outcome.stop_loop {
            "failed"
        } else {
            "rejected"
        };
        record_call(
            ctx,
            call_id,
            name,
            Some(tool),
            source,
            raw,
            path_hint,
            stage,
            (!outcome.succeeded).then(|| outcome.text.chars().take(300).collect()),
        );
        return (outcome.text, outcome.stop_loop, outcome.succeeded);
    }
    if decision.action == Action::Ask {
        let request_id = crate::ids::new_id("apr");
        let params = proto::ApprovalRequestParams {
            turn_id: ctx.turn_id.clone(),
            session_id: ctx.session.id.clone(),
            request_id: request_id.clone(),
            tool: tool.name().into(),
            description: format!("protected read: {}", tool.name()),
            target: path_hint.clone(),
            details: vec![
                format!("permission: {}", decision.message),
                "the file's content will be sent to the model".into(),
            ],
            diff: None,
            remember_eligible: false,
        };
        let (answer, approval_source) = ctx.ask(params).await;
        ctx.trace.approvals.push(TraceApproval {
            request_id,
            call_id: call_id.into(),
            tool: tool.name().into(),
            decision: answer,
            source: approval_source,
            diff_added: 0,
            diff_removed: 0,
            diff_truncated: false,
        });
        if answer == proto::Decision::Deny {
            record_call(
                ctx,
                call_id,
                name,
                Some(tool),
                source,
                raw,
                path_hint,
                "denied",
                Some("approval denied".into()),
            );
            return (
                format!("User did not approve the {} call.", tool.name()),
                true,
                false,
            );
        }
    }
    let output = run_read_tool(ctx, &args, resolved.as_ref());
    let success = !output.starts_with("[error]");
    ctx.trace.executions.push(TraceExecution {
        call_id: call_id.into(),
        tool: tool.name().into(),
        success,
        path: path_hint.clone(),
        output: to_proto::text_digest(&output),
        sha256_after: None,
        error: None,
    });
    record_call(
        ctx,
        call_id,
        name,
        Some(tool),
        source,
        raw,
        path_hint.clone(),
        if success { "executed" } else { "failed" },
        None,
    );
    if success && let Some(p) = path_hint {
        ctx.read_paths.push(p);
    }
    (output, false, false)
}

fn run_read_tool(
    ctx: &TurnCtx,
    args: &ToolArgs,
    resolved: Option<&crate::boundary::Resolved>,
) -> String {
    let error = |e: String| format!("[error] {e}");
    match (args, resolved) {
        (
            ToolArgs::ReadFile {
                path,
                max_lines,
                offset,
            },
            Some(r),
        ) => read_tools::read_file(r, path, *max_lines, *offset)
            .unwrap_or_else(|e| error(e.to_string())),
        (
            ToolArgs::ListDir {
                path,
                max_depth,
                max_entries,
            },
            Some(r),
        ) => read_tools::list_dir(r, path, *max_depth, *max_entries)
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
            read_tools::grep(&ctx.session.workspace, &request).unwrap_or_else(error)
        }
        _ => error("the call has no usable path".into()),
    }
}

#[allow(clippy::too_many_arguments)]
fn record_call(
    ctx: &mut TurnCtx,
    call_id: &str,
    name: &str,
    tool: Option<ToolId>,
    source: &str,
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
        requested_name: name.chars().take(100).collect(),
        tool: tool.map(|t| t.name().into()),
        source: source.into(),
        parameter_names: raw.keys().map(|k| k.chars().take(64).collect()).collect(),
        path_hint,
        content_digests,
        stage: stage.into(),
        rejection,
    });
}

async fn finish(mut ctx: TurnCtx, plan: &TurnPlan, model_answer: String) -> proto::TurnOutcome {
    if ctx.cancel.is_cancelled() {
        ctx.facts.cancelled = true;
    }
    let changed: Vec<&str> = ctx
        .facts
        .mutations
        .iter()
        .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
        .map(|m| m.target.as_str())
        .collect();
    let unmet: Vec<String> = plan
        .expectations()
        .iter()
        .filter_map(|e| match e {
            Expectation::MustChange { target } if !changed.contains(&target.as_str()) => {
                Some(target.clone())
            }
            Expectation::MustChange { .. } | Expectation::Replacement { .. } => None,
        })
        .collect();
    ctx.facts.unmet_targets = unmet;
    let fine = outcome::classify(&ctx.facts);
    let answer = talos_core::guard::guard_answer(&model_answer, &ctx.facts);
    let status = to_proto::status(fine.status());
    let classification = to_proto::classification(fine);
    ctx.trace.outcome = TraceOutcome {
        status,
        classification,
        mutation_status: outcome::mutation_status(&ctx.facts).into(),
        approval_status: outcome::approval_status(&ctx.facts).into(),
        answer: to_proto::text_digest(&answer),
    };
    ctx.trace.finished_at_ms = now_ms();
    let trace_path = match crate::traces::write(&ctx.daemon.home.traces(), &ctx.trace) {
        Ok(path) => Some(path.display().to_string()),
        Err(e) => {
            tracing::error!(error = %e, "cannot write trace");
            None
        }
    };
    let outcome = proto::TurnOutcome {
        turn_id: ctx.turn_id.clone(),
        status,
        classification,
        final_answer: answer,
        trace_id: ctx.trace.trace_id.clone(),
        trace_path,
        files: std::mem::take(&mut ctx.files),
    };
    ctx.emit(TurnEvent::Outcome {
        outcome: outcome.clone(),
    })
    .await;
    tracing::info!(turn = %ctx.turn_id, ?status, ?classification, "turn finished");
    outcome
}

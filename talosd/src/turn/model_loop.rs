//! The tool loop: model calls with the plan's surface, proposals parsed from native
//! `tool_calls` or text, each dispatched through the checks; loop discipline decides when the
//! loop stops. Chat turns expose no tools and never execute a call the model emits anyway.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use talos_core::discipline::LoopGuard;
use talos_core::plan::{Phase, TurnPlan};
use talos_core::prompt::{self, ToolCalling};
use talos_core::streamfilter::StreamFilter;
use talos_core::textcall;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::*;

use super::calls::{self, Proposal};
use super::context::TurnCtx;
use crate::engine::{ChatReply, EngineError};
use crate::to_proto;

const CHAT_FALLBACK: &str = "Hi, I am Talos, a local workspace assistant. I can inspect files in this workspace and apply changes you approve.";

pub async fn run(ctx: &mut TurnCtx, plan: &TurnPlan) -> String {
    let daemon = ctx.daemon.clone();
    let calling = match tool_calling(ctx).await {
        Ok(calling) => calling,
        Err(message) => return message,
    };
    ctx.trace.model.tool_calling = calling.as_str().into();
    let mut guard = LoopGuard::new(plan.surface());
    let mut phase = plan.initial_phase();
    let mut messages: Vec<Value> = vec![json!({"role": "system", "content": ""})];
    if let Some(pinned) = super::pins::message(ctx, plan.pinned()).await {
        messages.push(pinned);
    }
    messages.push(json!({"role": "user", "content": plan.original_request()}));
    let mut answer = String::new();
    let budget = plan.iteration_budget();
    for index in 0..budget {
        if ctx.cancel.is_cancelled() {
            ctx.facts.cancelled = true;
            break;
        }
        let surface = plan.surface_for(phase);
        if let Err(refusal) = guard.admit(&surface) {
            ctx.trace.warnings.push(TraceWarning {
                code: "SURFACE_ESCALATION_REFUSED".into(),
                message: refusal,
            });
            break;
        }
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
        if daemon.supervisor.is_some() {
            body["id_slot"] = json!(ctx.session.slot);
        }
        let tools_cfg = &daemon.config.tools;
        if calling == ToolCalling::Native
            && index == 0
            && tools_cfg.require_tool_call
            && !surface.tools().is_empty()
            && needs_tool(plan)
        {
            body["tool_choice"] = json!("required");
            if !tools_cfg.tool_call_prefill.is_empty()
                && let Some(messages) = body["messages"].as_array_mut()
            {
                messages.push(json!({"role": "assistant", "content": tools_cfg.tool_call_prefill}));
            }
        }
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
                    cached_tokens: None,
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
            cached_tokens: reply.cached_tokens,
            error: None,
        });
        let text = textcall::parse(&reply.content);
        let native = !reply.tool_calls.is_empty();
        let proposals = proposals(&reply, &text, native);
        if surface.tools().is_empty() {
            // A chat turn: no workspace tools, whatever the model emits.
            if !proposals.is_empty() {
                ctx.trace.warnings.push(TraceWarning {
                    code: "TOOL_CALL_IGNORED_ON_CHAT_TURN".into(),
                    message: format!(
                        "{} tool call(s) ignored: this turn exposes no tools",
                        proposals.len()
                    ),
                });
            }
            answer = if text.prose.is_empty() {
                CHAT_FALLBACK.to_string()
            } else {
                text.prose
            };
            break;
        }
        if proposals.is_empty() {
            ctx.facts.malformed_tool_call |= text.malformed;
            answer = text.prose;
            break;
        }
        if native {
            let calls: Vec<Value> = reply.tool_calls.iter().map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})).collect();
            messages
                .push(json!({"role": "assistant", "content": reply.content, "tool_calls": calls}));
        } else {
            messages.push(json!({"role": "assistant", "content": reply.content}));
        }
        let mut stop: Option<String> = None;
        // A broken call beside valid ones is reported with the first result, never run.
        let mut broken_beside = text.malformed && !native;
        if broken_beside {
            ctx.trace.warnings.push(TraceWarning {
                code: "MALFORMED_CALL_IGNORED".into(),
                message: text
                    .malformed_reason
                    .clone()
                    .unwrap_or_else(|| "an invalid tool-call block was ignored".into()),
            });
        }
        for proposal in proposals {
            let report = calls::dispatch(ctx, plan, &surface, phase, &mut guard, &proposal).await;
            if report.mutated && phase == Phase::Apply && every_target_changed(ctx, plan) {
                ctx.trace.phase_transitions.push(TracePhaseTransition {
                    from: "APPLY".into(),
                    to: "VERIFY".into(),
                    reason: "every expected target changed".into(),
                });
                phase = Phase::Verify;
            }
            let mut wrapped = format!(
                "[tool_result: {}]\n{}\n[/tool_result]",
                proposal.name, report.text
            );
            if std::mem::take(&mut broken_beside) {
                wrapped.push_str("\n[note] Another tool-call block in your reply was not valid JSON and was ignored; nothing ran for it.");
            }
            if native {
                messages.push(
                    json!({"role": "tool", "tool_call_id": proposal.native_id, "content": wrapped}),
                );
            } else {
                messages.push(json!({"role": "user", "content": wrapped}));
            }
            if report.stop.is_some() || ctx.client_gone() || ctx.cancel.is_cancelled() {
                stop = report.stop;
                break;
            }
        }
        if ctx.cancel.is_cancelled() {
            ctx.facts.cancelled = true;
        }
        if ctx.client_gone() || ctx.facts.cancelled {
            break;
        }
        if let Some(reason) = stop.or_else(|| guard.should_stop()) {
            ctx.trace.warnings.push(TraceWarning {
                code: "TOOL_LOOP_STOPPED".into(),
                message: reason.clone(),
            });
            answer = reason;
            break;
        }
        if index + 1 == budget {
            let reason = format!(
                "[Tool loop stopped: the iteration limit of {budget} model calls was reached.]"
            );
            ctx.trace.warnings.push(TraceWarning {
                code: "ITERATION_LIMIT".into(),
                message: reason.clone(),
            });
            answer = reason;
        }
    }
    answer
}

/// Whether the plan's obligation can only be met with a tool.
fn needs_tool(plan: &TurnPlan) -> bool {
    use talos_core::plan::ActionObligation;
    match plan.obligation() {
        ActionObligation::MutatingToolRequired
        | ActionObligation::InspectRequired
        | ActionObligation::ListDirOnly
        | ActionObligation::VerifyFromEvidence => true,
        ActionObligation::DirectAnswerOnly | ActionObligation::None | ActionObligation::Unknown => {
            false
        }
    }
}

/// The turn moves from APPLY to VERIFY once every target the request named has changed; a
/// request that named none stays in APPLY (the loop's other limits still apply).
fn every_target_changed(ctx: &TurnCtx, plan: &TurnPlan) -> bool {
    let targets = &plan.contract().expected_targets;
    !targets.is_empty()
        && targets.iter().all(|t| {
            ctx.facts.mutations.iter().any(|m| {
                &m.target == t
                    && matches!(
                        m.result,
                        talos_core::outcome::MutationResult::Succeeded { .. }
                    )
            })
        })
}

/// Native calls when the reply has them; otherwise calls written as text.
fn proposals(reply: &ChatReply, text: &textcall::TextCalls, native: bool) -> Vec<Proposal> {
    if native {
        return reply
            .tool_calls
            .iter()
            .map(|call| {
                let args = textcall::args_from_json(&call.arguments).map_err(|e| {
                    if reply.finish_reason == "length" {
                        format!("{e} (the reply was cut off at the token limit)")
                    } else {
                        e
                    }
                });
                Proposal {
                    native_id: call.id.clone(),
                    name: call.name.clone(),
                    args,
                    source: "native",
                }
            })
            .collect();
    }
    text.calls
        .iter()
        .map(|call| Proposal {
            native_id: String::new(),
            name: call.name.clone(),
            args: Ok::<BTreeMap<String, String>, String>(call.args.clone()),
            source: "text",
        })
        .collect()
}

/// Native tool calls when configured and the server's template supports them.
async fn tool_calling(ctx: &mut TurnCtx) -> Result<ToolCalling, String> {
    let ready = match ctx.daemon.supervisor.clone() {
        Some(supervisor) => supervisor.wait_ready().await,
        None => Ok(()),
    };
    if let Err(reason) = ready {
        ctx.facts.model_failed = true;
        ctx.trace.warnings.push(TraceWarning {
            code: "MODEL_NOT_READY".into(),
            message: reason.clone(),
        });
        ctx.emit(TurnEvent::Error {
            message: reason.clone(),
        })
        .await;
        return Err(format!("The model server is not available: {reason}"));
    }
    if !ctx.daemon.config.tools.native_calling {
        return Ok(ToolCalling::Text);
    }
    match ctx.daemon.engine.supports_native_tools().await {
        Ok(true) => Ok(ToolCalling::Native),
        Ok(false) => Ok(ToolCalling::Text),
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
            Err(format!("The model server could not be reached: {e}"))
        }
    }
}

/// Streams one model reply to the client. `Ok(None)` when the turn was cancelled meanwhile.
async fn stream_reply(ctx: &mut TurnCtx, body: &Value) -> Result<Option<ChatReply>, EngineError> {
    let engine = ctx.daemon.engine.clone();
    let cancel = ctx.cancel.clone();
    let mut stream = tokio::select! {
        s = engine.start_chat(body) => s?,
        () = cancel.cancelled() => return Ok(None),
    };
    let name = "answer".to_string();
    let mut filter = StreamFilter::new();
    let mut shown = String::new();
    ctx.emit(TurnEvent::StreamStart {
        stream: name.clone(),
    })
    .await;
    loop {
        let next = tokio::select! {
            n = stream.next_text() => n,
            () = cancel.cancelled() => {
                ctx.emit(TurnEvent::StreamEnd { stream: name }).await;
                return Ok(None);
            }
        };
        match next {
            Ok(Some(text)) => {
                // Tool-call protocol text is held back: the runtime reports calls itself.
                let visible = filter.push(&text);
                if !visible.is_empty() {
                    shown.push_str(&visible);
                    ctx.emit(TurnEvent::StreamChunk {
                        stream: name.clone(),
                        text: visible,
                    })
                    .await;
                }
            }
            Ok(None) => break,
            Err(e) => {
                ctx.emit(TurnEvent::StreamEnd { stream: name }).await;
                return Err(e);
            }
        }
    }
    let rest = filter.finish();
    if !rest.is_empty() {
        shown.push_str(&rest);
        ctx.emit(TurnEvent::StreamChunk {
            stream: name.clone(),
            text: rest,
        })
        .await;
    }
    let reply = stream.finish().await?;
    ctx.emit(TurnEvent::StreamEnd { stream: name }).await;
    ctx.emit(TurnEvent::Streamed { text: shown }).await;
    Ok(Some(reply))
}

//! The tool loop's effects: model calls with the surface the core chose, the request body
//! for llama-server, streaming the reply to the client, and each proposal dispatched through
//! the core's call machine. When the loop stops, what it says and when the phase moves are
//! decided by talos-core (`talos_core::turn::model`).

use serde_json::{Value, json};
use talos_core::digest::digest_text;
use talos_core::prompt::{self, ToolCalling};
use talos_core::streamfilter::StreamFilter;
use talos_core::surface::Surface;
use talos_core::textcall;
use talos_core::turn::model::{self, NativeCall, ReplyAction};
use talos_core::turn::record::{CallingRecord, ModelCallRecord, WarningCode};
use talos_protocol::event::TurnEvent;

use super::calls;
use super::context::TurnCtx;
use super::conversation::Conversation;
use crate::engine::{ChatReply, ChatRequest, EngineError};

/// At most this many model calls in the one web repair round (an edit, maybe a second, an answer).
const REPAIR_CALLS: usize = 3;

/// Runs the loop; returns the model's final answer (before the guards). The conversation is
/// kept in `ctx` for [`repair`].
pub async fn run(ctx: &mut TurnCtx) -> String {
    let calling = match tool_calling(ctx).await {
        Ok(calling) => calling,
        Err(message) => return message,
    };
    ctx.core.record.tool_calling = match calling {
        ToolCalling::Native => CallingRecord::Native,
        ToolCalling::Text => CallingRecord::Text,
    };
    let mut messages: Vec<Value> = vec![json!({"role": "system", "content": ""})];
    let pins = ctx.core.plan.pinned().to_vec();
    if let Some(pinned) = super::pins::message(ctx, &pins).await {
        messages.push(pinned);
    }
    if let Some(retrieved) = super::retrieve::message(ctx).await {
        messages.push(retrieved);
    }
    messages.push(json!({"role": "user", "content": ctx.core.plan.original_request()}));
    let aid = super::constraint::prepare(ctx, &mut messages).await;
    let mut conversation = Conversation {
        messages,
        calling,
        next: 0,
        aid,
    };
    let budget = ctx.core.plan.iteration_budget();
    let answer = converse(ctx, &mut conversation, budget).await;
    ctx.conversation = Some(conversation);
    answer
}

/// The one repair round the core decided (`Turn::begin_repair` already ran): the repair prompt
/// goes on the conversation, and the loop runs for at most [`REPAIR_CALLS`] more model calls.
/// `None` when there is no conversation to go on with (the model was never asked).
pub async fn repair(ctx: &mut TurnCtx, prompt: &str) -> Option<String> {
    let mut conversation = ctx.conversation.take()?;
    conversation
        .messages
        .push(json!({"role": "user", "content": prompt}));
    let end = conversation.next + REPAIR_CALLS;
    let answer = converse(ctx, &mut conversation, end).await;
    ctx.conversation = Some(conversation);
    Some(answer)
}

/// Model calls until the core ends the loop or call `end` is reached.
async fn converse(ctx: &mut TurnCtx, conversation: &mut Conversation, end: usize) -> String {
    while conversation.next < end {
        let index = conversation.next;
        conversation.next += 1;
        if ctx.cancel.is_cancelled() {
            ctx.core.record.facts.cancelled = true;
            break;
        }
        let Some(surface) = ctx.core.begin_model_call(index) else {
            break;
        };
        let calling = conversation.calling;
        let messages = &mut conversation.messages;
        let system = prompt::system_prompt(&ctx.core.plan, &surface, ctx.core.phase, calling);
        messages[0] = json!({"role": "system", "content": system});
        let schema = super::constraint::schema(ctx, &mut conversation.aid, &surface);
        let body = request_body(ctx, messages, &surface, index, calling, schema.as_ref());
        let reply = match stream_reply(ctx, &body).await {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                ctx.core.record.facts.cancelled = true;
                break;
            }
            Err(e) => return model_failed(ctx, index, &e).await,
        };
        record_reply(ctx, index, &reply);
        let mut reply = reply;
        reply.content = super::constraint::reply_text(&conversation.aid, &reply.content);
        if let Some(answer) = turn_on_reply(ctx, messages, &surface, index, reply).await {
            return answer;
        }
    }
    String::new()
}

/// Handles one reply; `Some(answer)` when the loop ends with it.
async fn turn_on_reply(
    ctx: &mut TurnCtx,
    messages: &mut Vec<Value>,
    surface: &Surface,
    index: usize,
    reply: ChatReply,
) -> Option<String> {
    let native: Vec<NativeCall> = reply
        .tool_calls
        .iter()
        .map(|c| NativeCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
        })
        .collect();
    let text = textcall::parse(&reply.content);
    let (proposals, mut broken_note) =
        match ctx
            .core
            .reply(index, surface, &native, &reply.finish_reason, text)
        {
            ReplyAction::Answer(answer) => return Some(answer),
            ReplyAction::Retry(prompt) => {
                messages.push(json!({"role": "assistant", "content": reply.content}));
                messages.push(json!({"role": "user", "content": prompt}));
                return None;
            }
            ReplyAction::Dispatch {
                proposals,
                broken_note,
            } => (proposals, broken_note),
        };
    if native.is_empty() {
        messages.push(json!({"role": "assistant", "content": reply.content}));
    } else {
        let calls: Vec<Value> = native.iter().map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})).collect();
        messages.push(json!({"role": "assistant", "content": reply.content, "tool_calls": calls}));
    }
    let mut stop = None;
    for proposal in proposals {
        let (name, native_id) = (proposal.name.clone(), proposal.native_id.clone());
        let report = calls::dispatch(ctx, proposal).await;
        ctx.core.call_done(&report);
        let wrapped = model::tool_result_message(&name, &report, std::mem::take(&mut broken_note));
        if native.is_empty() {
            messages.push(json!({"role": "user", "content": wrapped}));
        } else {
            messages.push(json!({"role": "tool", "tool_call_id": native_id, "content": wrapped}));
        }
        if report.stop.is_some() || ctx.client_gone() || ctx.cancel.is_cancelled() {
            stop = report.stop;
            break;
        }
    }
    if ctx.cancel.is_cancelled() {
        ctx.core.record.facts.cancelled = true;
    }
    if ctx.client_gone() || ctx.core.record.facts.cancelled {
        return Some(String::new());
    }
    ctx.core.after_calls(stop, index)
}

/// The chat request for model call `index`: the core says whether a tool call is required.
fn request_body(
    ctx: &TurnCtx,
    messages: &[Value],
    surface: &Surface,
    index: usize,
    calling: ToolCalling,
    schema: Option<&Value>,
) -> Value {
    let daemon = &ctx.daemon;
    daemon.engine.chat_body(&ChatRequest {
        messages,
        tools: match calling {
            ToolCalling::Native => surface.tools(),
            ToolCalling::Text => &[],
        },
        slot: daemon.supervisor.is_some().then_some(ctx.session.slot),
        tool_choice_required: ctx.core.requires_tool_call(index, calling, surface),
        prefill: &daemon.config.tools.tool_call_prefill,
        schema,
    })
}

fn record_reply(ctx: &mut TurnCtx, index: usize, reply: &ChatReply) {
    ctx.core.record.model_calls.push(ModelCallRecord {
        index,
        finish_reason: reply.finish_reason.clone(),
        content: digest_text(&reply.content),
        tool_calls: reply.tool_calls.len(),
        prompt_tokens: reply.prompt_tokens,
        completion_tokens: reply.completion_tokens,
        cached_tokens: reply.cached_tokens,
        error: None,
    });
}

async fn model_failed(ctx: &mut TurnCtx, index: usize, e: &EngineError) -> String {
    ctx.core.record.facts.model_failed = true;
    ctx.core.record.model_calls.push(ModelCallRecord {
        index,
        finish_reason: String::new(),
        content: Default::default(),
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
    format!("The model call failed: {e}")
}

/// Native tool calls when configured and the server's template supports them.
async fn tool_calling(ctx: &mut TurnCtx) -> Result<ToolCalling, String> {
    let ready = match ctx.daemon.supervisor.clone() {
        Some(supervisor) => supervisor.wait_ready().await,
        None => Ok(()),
    };
    if let Err(reason) = ready.map_err(|e| e.to_string()) {
        ctx.core.record.facts.model_failed = true;
        ctx.core
            .record
            .warn(WarningCode::ModelNotReady, reason.clone());
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
            ctx.core.record.facts.model_failed = true;
            ctx.core
                .record
                .warn(WarningCode::ModelUnreachable, e.to_string());
            ctx.emit(TurnEvent::Error {
                message: e.to_string(),
            })
            .await;
            Err(format!("The model server could not be reached: {e}"))
        }
    }
}

/// Streams one model reply to the client. `Ok(None)` when the turn was cancelled meanwhile.
/// When the core holds the answer (a turn with an obligation, whose text the guards may
/// correct), nothing of the model's text is sent: the answer follows once the guards decided.
async fn stream_reply(ctx: &mut TurnCtx, body: &Value) -> Result<Option<ChatReply>, EngineError> {
    if ctx.core.hold_reply(body.get("response_format").is_some()) {
        return held_reply(ctx, body).await;
    }
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

/// Reads one model reply to its end without sending its text to the client.
async fn held_reply(ctx: &mut TurnCtx, body: &Value) -> Result<Option<ChatReply>, EngineError> {
    let engine = ctx.daemon.engine.clone();
    let cancel = ctx.cancel.clone();
    let mut stream = tokio::select! {
        s = engine.start_chat(body) => s?,
        () = cancel.cancelled() => return Ok(None),
    };
    loop {
        let next = tokio::select! {
            n = stream.next_text() => n,
            () = cancel.cancelled() => return Ok(None),
        };
        if next?.is_none() {
            break;
        }
    }
    Ok(Some(stream.finish().await?))
}

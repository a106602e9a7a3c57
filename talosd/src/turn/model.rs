//! The model's effects: waiting for the server and reading its facts, counting tokens with
//! its tokenizer, and sending one request the core assembled, streamed to the client (through
//! the core's stream filter) or read to its end while the client is told the model is
//! working. What a reply leads to is decided by talos-core (`talos_core::turn::machine`).

use std::time::{Duration, Instant};

use serde_json::Value;
use talos_core::streamfilter::StreamFilter;
use talos_core::turn::machine::{
    Countable, ModelFailure, ModelReply, ModelRequest, ServerFacts, ServerProblem, TurnInput,
};
use talos_core::turn::model::NativeCall;
use talos_protocol::event::TurnEvent;

use super::context::TurnCtx;
use crate::engine::{ChatReply, ChatRequest, ChatStream, EngineError};

/// At most one progress event per this long while a held reply streams.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Waits for the managed server to load, then reads what the server says about itself.
pub async fn probe(ctx: &mut TurnCtx) -> Result<ServerFacts, ServerProblem> {
    ctx.daemon
        .models
        .ready(&ctx.model, &ctx.cancel)
        .await
        .map_err(|e| ServerProblem::NotReady(e.to_string()))?;
    let engine = &ctx.model.entry.engine;
    let facts = engine.server_facts_until(&ctx.cancel).await;
    let facts = facts.map_err(|e| match e {
        EngineError::Unauthorized { .. } => ServerProblem::Refused(e.to_string()),
        e => ServerProblem::Unreachable(e.to_string()),
    })?;
    ctx.trace.model.backend = facts.engine.as_str().into();
    ctx.trace.model.served = ctx.model.entry.engine.picked_model();
    Ok(ServerFacts {
        native_tools: facts.native_tools,
        n_ctx: facts.n_ctx,
        openai: facts.engine == crate::engine::Kind::OpenAi,
    })
}

/// Counts each item with the server's tokenizer; `None` when it has none.
pub async fn count(ctx: &mut TurnCtx, items: &[Countable]) -> Option<Vec<u64>> {
    let texts: Vec<String> = items
        .iter()
        .map(|item| match item {
            Countable::Text(text) => text.clone(),
            Countable::Tools(tools) => Value::Array(
                tools
                    .iter()
                    .map(|t| crate::engine::tools::tool_schema(*t))
                    .collect(),
            )
            .to_string(),
        })
        .collect();
    ctx.model
        .entry
        .engine
        .count_until(&texts, &ctx.cancel)
        .await
}

/// Sends the request and reads its reply.
pub async fn request(ctx: &mut TurnCtx, request: &ModelRequest) -> TurnInput {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(crate::to_proto::chat_message)
        .collect();
    let daemon = ctx.daemon.clone();
    let body = ctx.model.entry.engine.chat_body(&ChatRequest {
        messages: &messages,
        tools: &request.tools,
        external_tools: &request.external_tools,
        slot: ctx.model.entry.slot(ctx.session.slot),
        tool_choice_required: request.tool_choice_required,
        prefill: &daemon.config.tools.tool_call_prefill,
        schema: request.schema.as_ref(),
    });
    let reply = if request.hold {
        held_reply(ctx, request, &body).await
    } else {
        stream_reply(ctx, &body).await
    };
    match reply {
        Ok(Some(reply)) => TurnInput::Replied(model_reply(reply)),
        Ok(None) => TurnInput::Interrupted,
        Err(EngineError::ContextExceeded {
            prompt_tokens,
            n_ctx,
            message,
        }) => TurnInput::ModelFailed(ModelFailure::ContextExceeded {
            prompt_tokens,
            n_ctx,
            message,
        }),
        Err(e) => TurnInput::ModelFailed(ModelFailure::Other(e.to_string())),
    }
}

fn model_reply(reply: ChatReply) -> ModelReply {
    ModelReply {
        content: reply.content,
        tool_calls: reply
            .tool_calls
            .into_iter()
            .map(|c| NativeCall {
                id: c.id,
                name: c.name,
                arguments: c.arguments,
            })
            .collect(),
        finish_reason: reply.finish_reason,
        prompt_tokens: reply.prompt_tokens,
        completion_tokens: reply.completion_tokens,
        cached_tokens: reply.cached_tokens,
    }
}

/// Starts the chat, or `Ok(None)` when the turn was cancelled first.
async fn start(ctx: &TurnCtx, body: &Value) -> Result<Option<ChatStream>, EngineError> {
    let engine = ctx.model.entry.engine.clone();
    let cancel = ctx.cancel.clone();
    tokio::select! {
        s = engine.start_chat(body) => s.map(Some),
        () = cancel.cancelled() => Ok(None),
    }
}

/// Streams one model reply to the client. `Ok(None)` when the turn was cancelled meanwhile.
async fn stream_reply(ctx: &mut TurnCtx, body: &Value) -> Result<Option<ChatReply>, EngineError> {
    let Some(mut stream) = start(ctx, body).await? else {
        return Ok(None);
    };
    let cancel = ctx.cancel.clone();
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
        let text = match next {
            Ok(Some(text)) => text,
            Ok(None) => break,
            Err(e) => {
                ctx.emit(TurnEvent::StreamEnd { stream: name }).await;
                return Err(e);
            }
        };
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

/// Reads one model reply to its end without sending its text; the client is told the model
/// is working (at once, then at most every [`PROGRESS_EVERY`] with the tokens so far).
async fn held_reply(
    ctx: &mut TurnCtx,
    request: &ModelRequest,
    body: &Value,
) -> Result<Option<ChatReply>, EngineError> {
    let model_call = request.index;
    let prompt = (request.prompt_tokens > 0).then_some(request.prompt_tokens);
    ctx.emit(TurnEvent::progress(model_call, 0, prompt)).await;
    let Some(mut stream) = start(ctx, body).await? else {
        return Ok(None);
    };
    let cancel = ctx.cancel.clone();
    let mut told = Instant::now();
    let mut last = 0;
    loop {
        let next = tokio::select! {
            n = stream.next_text() => n,
            () = cancel.cancelled() => return Ok(None),
        };
        if next?.is_none() {
            break;
        }
        let tokens = stream.generated();
        if tokens != last && told.elapsed() >= PROGRESS_EVERY {
            ctx.emit(TurnEvent::progress(model_call, tokens, None))
                .await;
            (told, last) = (Instant::now(), tokens);
        }
    }
    Ok(Some(stream.finish().await?))
}

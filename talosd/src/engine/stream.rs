//! A chat completion being received: a `text/event-stream` of deltas (text and native
//! `tool_calls` pieces accumulated, the deltas that carried text counted) or one whole JSON
//! answer. Every read is bounded ([`super::body`]): one event line, the whole stream and a
//! whole answer have caps, and a whole answer has a deadline, so a server that never ends its
//! body ends the request with an error instead of growing the daemon without end.

use std::collections::BTreeMap;

use serde_json::Value;

use super::body::{self, Limits};
use super::{ChatReply, EngineError, NativeCall, overflow};

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// A chat completion being received.
#[derive(Debug)]
pub struct ChatStream {
    response: reqwest::Response,
    streaming: bool,
    /// The caps of an answer that is not streamed.
    answer: Limits,
    /// Bytes of the event stream received so far.
    received: usize,
    /// How much of `buffer` is known to hold no line end.
    scanned: usize,
    buffer: Vec<u8>,
    reply: ChatReply,
    calls: BTreeMap<u64, PartialCall>,
    done: bool,
    generated: u64,
}

impl ChatStream {
    /// A stream over `response`; `streaming` when it is `text/event-stream`. A whole answer
    /// is read within `answer`.
    pub(super) fn new(response: reqwest::Response, streaming: bool, answer: Limits) -> ChatStream {
        ChatStream {
            response,
            streaming,
            answer,
            received: 0,
            scanned: 0,
            buffer: Vec::new(),
            reply: ChatReply::default(),
            calls: BTreeMap::new(),
            done: false,
            generated: 0,
        }
    }

    /// Adds a chunk of the event stream, within the caps of a line and of the whole stream.
    fn take(&mut self, chunk: &[u8]) -> Result<(), EngineError> {
        self.received += chunk.len();
        if self.received > body::MAX_STREAM_BYTES {
            return Err(EngineError::Body(body::BodyError::TooLarge(
                body::MAX_STREAM_BYTES,
            )));
        }
        self.buffer.extend_from_slice(chunk);
        if self.buffer.len() > body::MAX_LINE_BYTES && self.line_end().is_none() {
            return Err(EngineError::Malformed(format!(
                "a stream event is longer than {} bytes",
                body::MAX_LINE_BYTES
            )));
        }
        Ok(())
    }

    /// Where the first line of the buffer ends, searching only what was not searched before
    /// (a line arriving in many small pieces costs one pass, not one per piece).
    fn line_end(&mut self) -> Option<usize> {
        let found = self.buffer[self.scanned..]
            .iter()
            .position(|b| *b == b'\n')
            .map(|i| self.scanned + i);
        if found.is_none() {
            self.scanned = self.buffer.len();
        }
        found
    }

    /// How many stream deltas so far carried content or tool-call text. llama-server sends
    /// about one token per delta, so this approximates the tokens generated so far (it is
    /// counted from deltas, not tokens). A reply that was not streamed counts its
    /// `usage.completion_tokens` once read, or 1 when it carried anything without usage.
    pub fn generated(&self) -> u64 {
        self.generated
    }

    /// The next piece of visible text, or `None` when the reply is complete.
    pub async fn next_text(&mut self) -> Result<Option<String>, EngineError> {
        loop {
            if self.done {
                return Ok(None);
            }
            if !self.streaming {
                let body = body::read(&mut self.response, self.answer)
                    .await
                    .map_err(EngineError::Body)?;
                self.done = true;
                let value: Value = serde_json::from_slice(&body)
                    .map_err(|e| EngineError::Malformed(format!("completion is not JSON: {e}")))?;
                let text = self.absorb_message(&value)?;
                return Ok((!text.is_empty()).then_some(text));
            }
            if let Some(end) = self.line_end() {
                self.scanned = 0;
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line).trim().to_string();
                let Some(data) = line.strip_prefix("data:") else {
                    continue;
                };
                let data = data.trim();
                if data == "[DONE]" {
                    self.done = true;
                    continue;
                }
                let value: Value = serde_json::from_str(data).map_err(|e| {
                    EngineError::Malformed(format!("stream event is not JSON: {e}"))
                })?;
                if let Some(error) = value.get("error") {
                    return Err(overflow::context_exceeded_value(&value).unwrap_or_else(|| {
                        EngineError::Malformed(format!("server error in stream: {error}"))
                    }));
                }
                let text = self.absorb_delta(&value);
                if !text.is_empty() {
                    return Ok(Some(text));
                }
                continue;
            }
            match self.response.chunk().await.map_err(EngineError::Stream)? {
                Some(chunk) => self.take(&chunk)?,
                None => {
                    self.done = true;
                }
            }
        }
    }

    /// Drains what is left and returns the whole reply.
    pub async fn finish(mut self) -> Result<ChatReply, EngineError> {
        while self.next_text().await?.is_some() {}
        let mut reply = self.reply;
        for (index, call) in self.calls {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            reply.tool_calls.push(NativeCall {
                id,
                name: call.name,
                arguments: call.arguments,
            });
        }
        Ok(reply)
    }

    fn absorb_usage(&mut self, value: &Value) {
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            self.reply.prompt_tokens = usage.get("prompt_tokens").and_then(Value::as_u64);
            self.reply.completion_tokens = usage.get("completion_tokens").and_then(Value::as_u64);
            if let Some(cached) = usage
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
            {
                self.reply.cached_tokens = Some(cached);
            }
        }
        if let Some(cached) = value.pointer("/timings/cache_n").and_then(Value::as_u64) {
            self.reply.cached_tokens = Some(cached);
        }
    }

    fn absorb_delta(&mut self, value: &Value) -> String {
        self.absorb_usage(value);
        let Some(choice) = value.pointer("/choices/0") else {
            return String::new();
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.reply.finish_reason = reason.to_string();
        }
        let delta = choice.get("delta").cloned().unwrap_or(Value::Null);
        if carries_text(&delta) {
            self.generated += 1;
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let entry = self.calls.entry(index).or_default();
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                entry.id = id.to_string();
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                entry.name.push_str(name);
            }
            if let Some(arguments) = call.pointer("/function/arguments").and_then(Value::as_str) {
                entry.arguments.push_str(arguments);
            }
        }
        let text = delta
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.reply.content.push_str(&text);
        text
    }

    fn absorb_message(&mut self, value: &Value) -> Result<String, EngineError> {
        if value.get("error").is_some() {
            return Err(overflow::context_exceeded_value(value).unwrap_or_else(|| {
                EngineError::Malformed(format!("server error in completion: {value}"))
            }));
        }
        self.absorb_usage(value);
        let choice = value
            .pointer("/choices/0")
            .ok_or_else(|| EngineError::Malformed("completion has no choices".into()))?;
        self.reply.finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let message = choice.get("message").cloned().unwrap_or(Value::Null);
        if carries_text(&message) {
            self.generated += self.reply.completion_tokens.unwrap_or(1);
        }
        for (index, call) in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let arguments = match call.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            self.calls.insert(
                index as u64,
                PartialCall {
                    id: call
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    name: call
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    arguments,
                },
            );
        }
        let text = message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.reply.content.push_str(&text);
        Ok(text)
    }
}

/// Whether a delta (or a whole message) carries generated text: content, or a tool call's name
/// or arguments.
fn carries_text(delta: &Value) -> bool {
    let content = delta
        .get("content")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty());
    let call_text = delta
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|call| {
            ["/function/name", "/function/arguments"].iter().any(|p| {
                call.pointer(p)
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty())
            })
        });
    content || call_text
}

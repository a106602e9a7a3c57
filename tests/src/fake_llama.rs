//! The fake llama server: a small HTTP/1.1 server on loopback that speaks the parts of
//! llama-server's API Talos uses (`/health`, `/props`, `/tokenize`, streamed
//! `/v1/chat/completions`), with replies chosen by a script from the request. It records every
//! chat request so tests can assert what the model was offered. With a context size set it
//! counts each prompt with a deterministic tokenizer ([`tokens`], [`prompt_tokens`]) and refuses
//! one that does not fit exactly as llama-server does. [`serve`] is the server itself;
//! [`FakeLlama`] runs it in-process and the `fake-llama-server` binary runs it as a separate
//! process.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the fake model answers to one chat request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Plain streamed text (may contain a tool call written as text).
    Text(String),
    /// Native tool calls: (name, arguments as the JSON text the model would produce).
    ToolCalls(Vec<(String, String)>),
    /// Native tool calls cut off at the token limit (`finish_reason: length`).
    TruncatedToolCall(String, String),
    /// An HTTP error status with a body.
    Error(u16, String),
    /// Never answers (until the connection is dropped).
    Hang,
    /// Streams this text, then neither finishes nor closes: a slow model mid-answer. The reply
    /// ends when the client drops the connection (counted by [`FakeLlama::finished_replies`]).
    Stall(String),
    /// A whole JSON answer (not streamed) whose body never ends: 1 KiB every 100 ms until the
    /// client hangs up (slowly, so only a deadline or a cancel ends it).
    Endless,
}

pub type Script = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

pub struct FakeLlama {
    pub url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    finished: Arc<std::sync::atomic::AtomicUsize>,
    task: JoinHandle<()>,
}

/// What a [`FakeLlama`] is, besides its script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeOptions {
    /// What `/props` reports as `chat_template_caps.supports_tool_calls`.
    pub native: bool,
    /// The context of its one slot: reported by `/props`, and a prompt of this many tokens or
    /// more (by [`prompt_tokens`]) is refused as llama-server refuses it. `None`: no limit.
    pub n_ctx: Option<u64>,
    /// Whether it has `POST /tokenize` (otherwise that answers 404).
    pub tokenize: bool,
    /// Enforce `n_ctx` without reporting it in `/props`, as a server that does not say its
    /// context does: the daemon then learns it from the refusal.
    pub hide_n_ctx: bool,
    /// The API key it wants (llama-server `--api-key`): every path but `/health` answers 401
    /// `Invalid API Key` unless `Authorization: Bearer <key>` carries it.
    pub api_key: Option<String>,
    /// Speak as an OpenAI-compatible server (vLLM's shape): no `/props` and no `/tokenize`
    /// (404), and `/v1/models` lists [`OPENAI_MODEL`] with `max_model_len` = `n_ctx` (or 8192).
    pub openai: bool,
    /// `POST /tokenize` answers 200 and then a body that never ends (see [`Reply::Endless`]).
    pub endless_tokenize: bool,
}

/// The model an OpenAI-compatible fake serves.
pub const OPENAI_MODEL: &str = "Qwen/Qwen2.5-7B-Instruct";

impl Default for FakeOptions {
    fn default() -> Self {
        FakeOptions {
            native: true,
            n_ctx: None,
            hide_n_ctx: false,
            tokenize: true,
            api_key: None,
            openai: false,
            endless_tokenize: false,
        }
    }
}

impl FakeLlama {
    /// Starts on a free loopback port with the default options: no context limit, and
    /// `/tokenize` present. `native` is what `/props` reports as
    /// `chat_template_caps.supports_tool_calls`.
    pub async fn start(native: bool, script: Script) -> FakeLlama {
        FakeLlama::start_with(
            FakeOptions {
                native,
                ..FakeOptions::default()
            },
            script,
        )
        .await
    }

    /// Starts on a free loopback port as `options` say.
    pub async fn start_with(options: FakeOptions, script: Script) -> FakeLlama {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake llama");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
        let recorded = requests.clone();
        let finished: Arc<std::sync::atomic::AtomicUsize> = Arc::default();
        let counted = finished.clone();
        let serving = Serving {
            native: options.native,
            n_ctx: options.n_ctx,
            hide_n_ctx: options.hide_n_ctx,
            api_key: options.api_key,
            openai: options.openai,
            tokenize: options.tokenize && !options.openai,
            endless_tokenize: options.endless_tokenize,
            on_request: Some(Arc::new(move |request: &Value| {
                if let Ok(mut r) = recorded.lock() {
                    r.push(request.clone());
                }
            })),
            after_reply: Some(Arc::new(move || {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            })),
            ..Serving::default()
        };
        let task = tokio::spawn(serve(listener, serving, script));
        FakeLlama {
            url,
            requests,
            finished,
            task,
        }
    }

    /// How many chat replies have ended (written in full, or a stalled one whose client hung up).
    pub fn finished_replies(&self) -> usize {
        self.finished.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Every chat request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for FakeLlama {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Token counts a fake reports for every reply: in the usage chunk and, when `cached_tokens` is
/// set, also as `usage.prompt_tokens_details.cached_tokens` and llama-server's `timings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: Option<u64>,
}

/// A hook called with each chat request as it arrives.
pub type RequestHook = Arc<dyn Fn(&Value) + Send + Sync>;
/// A hook called after each chat reply has been written and the connection closed.
pub type ReplyHook = Arc<dyn Fn() + Send + Sync>;

/// How [`serve`] behaves besides answering from its script.
#[derive(Clone)]
pub struct Serving {
    /// What `/props` reports as `chat_template_caps.supports_tool_calls`.
    pub native: bool,
    /// `/props` `total_slots`.
    pub slots: u32,
    /// The context of one slot, `/props` `default_generation_settings.n_ctx`; when set, a chat
    /// request whose [`prompt_tokens`] reach it is refused as llama-server refuses it (see
    /// [`context_exceeded_body`]). `None`: not reported, no limit.
    pub n_ctx: Option<u64>,
    /// `n_ctx` is enforced but `/props` does not report it.
    pub hide_n_ctx: bool,
    /// The API key every path but `/health` wants.
    pub api_key: Option<String>,
    /// An OpenAI-compatible server: no `/props`, `/v1/models` instead.
    pub openai: bool,
    /// Whether `POST /tokenize` answers (with [`tokens`]); otherwise it is 404.
    pub tokenize: bool,
    /// `POST /tokenize` answers with a body that never ends.
    pub endless_tokenize: bool,
    pub usage: Usage,
    /// Until this instant `/health` and chat requests answer 503 `Loading model`.
    pub loading_until: Option<Instant>,
    pub on_request: Option<RequestHook>,
    pub after_reply: Option<ReplyHook>,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            prompt_tokens: 42,
            completion_tokens: 7,
            cached_tokens: None,
        }
    }
}

impl Default for Serving {
    fn default() -> Self {
        Serving {
            native: true,
            slots: 1,
            n_ctx: None,
            hide_n_ctx: false,
            api_key: None,
            openai: false,
            tokenize: true,
            endless_tokenize: false,
            usage: Usage::default(),
            loading_until: None,
            on_request: None,
            after_reply: None,
        }
    }
}

/// Serves every connection `listener` accepts, one request per connection, until the task is
/// dropped or the listener fails.
pub async fn serve(listener: TcpListener, serving: Serving, script: Script) {
    let serving = Arc::new(serving);
    while let Ok((stream, _)) = listener.accept().await {
        let (serving, script) = (serving.clone(), script.clone());
        tokio::spawn(async move {
            let _ = serve_connection(stream, &serving, script).await;
        });
    }
}

async fn serve_connection(
    stream: TcpStream,
    serving: &Serving,
    script: Script,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).await?;
    let mut content_length = 0usize;
    let mut authorization = String::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).await? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                content_length = value.trim().parse().unwrap_or(0);
            } else if name.trim().eq_ignore_ascii_case("authorization") {
                authorization = value.trim().to_string();
            }
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body).await?;
    let mut stream = reader.into_inner();
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let loading = serving
        .loading_until
        .is_some_and(|until| Instant::now() < until);
    // As llama-server's `--api-key` does: everything but the health check needs the key.
    if let Some(key) = &serving.api_key
        && path != "/health"
        && authorization.strip_prefix("Bearer ") != Some(key.as_str())
    {
        return respond_json(
            &mut stream,
            401,
            &json!({"error": {"message": "Invalid API Key", "type": "authentication_error", "code": 401}}),
        )
        .await;
    }
    match path.as_str() {
        "/health" | "/v1/chat/completions" if loading => {
            respond_json(
                &mut stream,
                503,
                &json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}),
            )
            .await
        }
        "/health" => respond_json(&mut stream, 200, &json!({"status": "ok"})).await,
        "/props" if serving.openai => {
            respond_json(&mut stream, 404, &json!({"detail": "Not Found"})).await
        }
        "/props" => respond_json(&mut stream, 200, &props(serving)).await,
        "/v1/models" if serving.openai => {
            let models = json!({"object": "list", "data": [{
                "id": OPENAI_MODEL, "object": "model", "owned_by": "vllm",
                "max_model_len": serving.n_ctx.unwrap_or(8192),
            }]});
            respond_json(&mut stream, 200, &models).await
        }
        "/tokenize" if serving.endless_tokenize => endless(&mut stream).await,
        "/tokenize" if serving.tokenize => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let content = request["content"].as_str().unwrap_or_default();
            // Token ids are not what is tested; the count is.
            let ids: Vec<u64> = (0..tokens(content)).collect();
            respond_json(&mut stream, 200, &json!({"tokens": ids})).await
        }
        "/v1/chat/completions" => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if let Some(hook) = &serving.on_request {
                hook(&request);
            }
            if let Some(n_ctx) = serving.n_ctx {
                let n_prompt = prompt_tokens(&request);
                if n_prompt >= n_ctx {
                    let written = respond_llama_error(
                        &mut stream,
                        400,
                        &context_exceeded_body(n_prompt, n_ctx),
                    )
                    .await;
                    if let Some(hook) = &serving.after_reply {
                        hook();
                    }
                    return written;
                }
            }
            let reply = script(&request);
            let written = stream_reply(&mut stream, reply, serving.usage).await;
            if let Some(hook) = &serving.after_reply {
                hook();
            }
            written
        }
        _ => respond_json(&mut stream, 404, &json!({"error": "not found"})).await,
    }
}

async fn respond_json(stream: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// `/props` in llama-server's shape (only the fields the fake knows).
fn props(serving: &Serving) -> Value {
    let mut props = json!({
        "chat_template_caps": {"supports_tool_calls": serving.native},
        "total_slots": serving.slots,
    });
    if let Some(n_ctx) = serving.n_ctx.filter(|_| !serving.hide_n_ctx) {
        props["default_generation_settings"] = json!({"n_ctx": n_ctx});
    }
    props
}

/// An error as llama-server writes one, headers in its order. Recorded from llama-server b11434
/// (`-c 1024 --parallel 1`, SmolLM2-135M) answering a streamed chat request of 1218 tokens:
///
/// ```text
/// HTTP/1.1 400 Bad Request
/// Server: llama.cpp
/// Access-Control-Allow-Origin:
/// Content-Type: application/json; charset=utf-8
/// Content-Length: 195
/// Connection: close
///
/// {"error":{"code":400,"message":"request (1218 tokens) exceeds the available context size (1024 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":1218,"n_ctx":1024}}
/// ```
async fn respond_llama_error(
    stream: &mut TcpStream,
    status: u16,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} Bad Request\r\nServer: llama.cpp\r\nAccess-Control-Allow-Origin: \r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// The fake's tokenizer: one token per 3 bytes of UTF-8, rounded up (so "" is 0, "abc" is 1,
/// "abcd" is 2, "é" is 1). Deterministic and crude: tests compare against it, not a model.
pub fn tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(3)
}

/// The fake's count of a chat request's prompt: for each message, [`tokens`] of its content
/// (a string, or the JSON text of any other content) plus 4; plus [`tokens`] of the JSON text
/// of `tools` when the request offers any. A request whose count reaches the fake's `n_ctx` is
/// refused.
pub fn prompt_tokens(request: &Value) -> u64 {
    let messages: u64 = request["messages"].as_array().map_or(0, |messages| {
        messages
            .iter()
            .map(|m| {
                let content = match &m["content"] {
                    Value::String(text) => tokens(text),
                    Value::Null => 0,
                    other => tokens(&other.to_string()),
                };
                content + 4
            })
            .sum()
    });
    let tools = match &request["tools"] {
        Value::Null => 0,
        tools => tokens(&tools.to_string()),
    };
    messages + tools
}

/// llama-server's answer to a prompt of `n_prompt` tokens that does not fit a slot of `n_ctx`,
/// byte for byte, checked against a real run (see `respond_llama_error`) (b11434 `server-context.cpp` "request (%d tokens) exceeds the available context
/// size (%d tokens), try increasing it", `server-task.cpp` `server_task_result_error::to_json`,
/// compact and in its key order). Sent with HTTP 400: a streamed request whose first result is
/// an error is answered as a plain JSON response, not an SSE stream.
pub fn context_exceeded_body(n_prompt: u64, n_ctx: u64) -> String {
    format!(
        r#"{{"error":{{"code":400,"message":"request ({n_prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":{n_prompt},"n_ctx":{n_ctx}}}}}"#
    )
}

async fn event(stream: &mut TcpStream, value: Value) -> std::io::Result<()> {
    stream
        .write_all(format!("data: {value}\n\n").as_bytes())
        .await
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// A JSON answer that never ends: its head, then 1 KiB of digits every 100 ms until the client
/// hangs up (a write fails).
async fn endless(stream: &mut TcpStream) -> std::io::Result<()> {
    stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"tokens\": [")
        .await?;
    let piece = "0,".repeat(512);
    loop {
        stream.write_all(piece.as_bytes()).await?;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn stream_reply(stream: &mut TcpStream, reply: Reply, usage: Usage) -> std::io::Result<()> {
    match reply {
        Reply::Error(status, message) => {
            return respond_json(
                stream,
                status,
                &json!({"error": {"code": status, "message": message}}),
            )
            .await;
        }
        Reply::Endless => return endless(stream).await,
        Reply::Hang => {
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n").await?;
            return std::future::pending().await;
        }
        Reply::Stall(text) => {
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n").await?;
            event(stream, chunk(json!({"content": text}), None)).await?;
            stream.flush().await?;
            // Until the client hangs up: a read returns 0 (or fails) only then.
            let mut byte = [0u8; 1];
            while matches!(stream.read(&mut byte).await, Ok(n) if n > 0) {}
            return Ok(());
        }
        Reply::Text(_) | Reply::ToolCalls(_) | Reply::TruncatedToolCall(..) => {}
    }
    stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n").await?;
    let finish = match reply {
        Reply::Text(text) => {
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(16) {
                event(
                    stream,
                    chunk(json!({"content": piece.iter().collect::<String>()}), None),
                )
                .await?;
            }
            "stop"
        }
        Reply::ToolCalls(calls) => {
            for (index, (name, arguments)) in calls.iter().enumerate() {
                let split = arguments.len() / 2;
                let split = (0..=split)
                    .rev()
                    .find(|i| arguments.is_char_boundary(*i))
                    .unwrap_or(0);
                let (head, tail) = arguments.split_at(split);
                event(stream, chunk(json!({"tool_calls": [{"index": index, "id": format!("call_{index}"), "type": "function", "function": {"name": name, "arguments": head}}]}), None)).await?;
                event(
                    stream,
                    chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": tail}}]}),
                        None,
                    ),
                )
                .await?;
            }
            "tool_calls"
        }
        Reply::TruncatedToolCall(name, partial) => {
            event(stream, chunk(json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function", "function": {"name": name, "arguments": partial}}]}), None)).await?;
            "length"
        }
        Reply::Error(..) | Reply::Hang | Reply::Stall(_) | Reply::Endless => "stop",
    };
    let mut last = chunk(json!({}), Some(finish));
    let mut usage_chunk = json!({"object": "chat.completion.chunk", "choices": [], "usage": {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }});
    if let Some(cached) = usage.cached_tokens {
        // As llama-server does: timings on the finishing chunk and again beside the usage.
        let timings = timings(usage, cached);
        last["timings"] = timings.clone();
        usage_chunk["timings"] = timings;
        usage_chunk["usage"]["prompt_tokens_details"] = json!({"cached_tokens": cached});
    }
    event(stream, last).await?;
    event(stream, usage_chunk).await?;
    stream.write_all(b"data: [DONE]\n\n").await?;
    stream.shutdown().await
}

/// llama-server's `timings` for `usage`: the cached prefix is `cache_n`, the rest `prompt_n`,
/// at a nominal 1 ms per prompt token and 5 ms per generated token.
fn timings(usage: Usage, cached: u64) -> Value {
    let prompt_n = usage.prompt_tokens.saturating_sub(cached);
    json!({
        "cache_n": cached,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_n as f64,
        "predicted_n": usage.completion_tokens,
        "predicted_ms": usage.completion_tokens as f64 * 5.0,
    })
}

/// True when the request's last message is a tool result (native or written as text).
pub fn after_tool_result(request: &Value) -> bool {
    let Some(last) = request["messages"].as_array().and_then(|m| m.last()) else {
        return false;
    };
    last["role"] == "tool"
        || last["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("[tool_result:"))
}

/// The text of the request's last user message: the turn's own request until a tool result
/// follows it (the session's earlier turns come before it, as the conversation carries them).
pub fn last_user(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The tool names offered natively in a request.
pub fn offered_tools(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The text of the last tool result in a request.
pub fn last_tool_result(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// How many tool results (and runtime re-prompts) the request already carries.
pub fn tool_results(request: &Value) -> usize {
    request["messages"].as_array().map_or(0, |messages| {
        messages
            .iter()
            .filter(|m| {
                m["role"] == "tool"
                    || m["content"].as_str().is_some_and(|c| {
                        c.starts_with("[tool_result:") || c.starts_with("[Runtime:")
                    })
            })
            .count()
    })
}

/// A model that answers its n-th request of a turn with `steps[n]` (the last step repeats),
/// counting turns by the tool results (and the runtime's re-prompts) already in the request.
pub fn scripted(steps: Vec<Reply>) -> Script {
    Arc::new(move |request: &Value| steps[tool_results(request).min(steps.len() - 1)].clone())
}

/// A call of `name` with `args` as the model writes it: native `tool_calls`, or (for a model
/// without native calling) a fenced JSON block in its text.
pub fn call(native: bool, name: &str, args: Value) -> Reply {
    if native {
        Reply::ToolCalls(vec![(name.into(), args.to_string())])
    } else {
        let block = json!({"name": name, "parameters": args});
        Reply::Text(format!("```json\n{block}\n```"))
    }
}

/// A native `talos.read_file` call for `path`.
pub fn read_call(path: &str) -> Reply {
    Reply::ToolCalls(vec![(
        "talos.read_file".into(),
        json!({"path": path}).to_string(),
    )])
}

/// A native `talos.write_file` call of `content` to `path`.
pub fn write_call(path: &str, content: &str) -> Reply {
    Reply::ToolCalls(vec![(
        "talos.write_file".into(),
        json!({"path": path, "content": content}).to_string(),
    )])
}

#[cfg(test)]
mod tests;

//! The model engine: the only module that talks HTTP or opens a network connection. It reads
//! llama-server's `/props` (the server's facts: native tool calls, per-slot context, slots),
//! counts tokens with `/tokenize`, and streams OpenAI-compatible `POST /v1/chat/completions`
//! (`ChatStream` accumulates text and native `tool_calls` deltas and counts the deltas that
//! carried text; what comes back is only a proposal); `engine/tools.rs` makes the request's
//! `tools` entries. A prompt the server refuses as too long for its context, up front or in the
//! stream, becomes `EngineError::ContextExceeded` (`engine/overflow.rs` reads the bodies). For
//! the supervisor it also builds the managed server's loopback URL, asks `/health` whether the
//! server has loaded, and probes whether a loopback port has a listener.

pub(crate) mod auth;
pub mod body;
mod overflow;
mod stream;
#[cfg(test)]
mod tests;
pub mod tools;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::config::ModelConfig;
pub use stream::ChatStream;

/// What an `http` request to a TLS port gets back, as servers word it (nginx, Apache, Go).
const PLAIN_TO_TLS: [&str; 3] = [
    "plain HTTP request was sent to HTTPS port",
    "speaking plain HTTP to an SSL-enabled server",
    "sent an HTTP request to an HTTPS server",
];

#[derive(Debug, Clone)]
pub struct Engine {
    /// The client, or why it could not be built: there is no fallback client, so an engine
    /// without one fails every request with the reason.
    http: Result<reqwest::Client, Arc<str>>,
    base: String,
    pub url: String,
    pub model_name: String,
    pub max_tokens: u32,
    /// `model.temperature`, sent when set.
    pub temperature: Option<f64>,
    /// `Authorization: Bearer <key>` (marked sensitive, so it is never printed), when a key is
    /// configured and could be read.
    auth: Option<reqwest::header::HeaderValue>,
    /// The key as read, only to redact it from anything the server echoes.
    key: Option<String>,
    /// Where the key came from, or why the configured one could not be used (for messages).
    key_note: Option<String>,
    /// `model.request_timeout_secs`: between two reads, and for a whole answer not streamed.
    request_timeout: Duration,
    /// Set once the server showed it has no `/tokenize`: `count_tokens` then asks no more.
    no_tokenizer: Arc<AtomicBool>,
    /// `model.engine` and `model.native_tools`.
    choice: crate::config::EngineChoice,
    native_tools: crate::config::NativeTools,
    /// What the last probe found the server to be, and the model an OpenAI server serves.
    found: Arc<std::sync::Mutex<(Kind, Option<String>)>>,
}

/// The kind of server, as the probe found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// llama.cpp's server (`/props` answered): slots, prompt cache and `/tokenize` are used.
    #[default]
    LlamaCpp,
    /// An OpenAI-compatible server (`/v1/models` answered): none of llama.cpp's fields are sent.
    OpenAi,
}

impl Kind {
    /// The name traces and `talos doctor` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::LlamaCpp => "llama.cpp",
            Kind::OpenAi => "openai",
        }
    }
}

/// What one `GET /props` (or `/v1/models`) says about the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerFacts {
    pub engine: Kind,
    /// The chat template can call tools (`chat_template_caps.supports_tool_calls`).
    pub native_tools: bool,
    /// The context of one slot in tokens (`default_generation_settings.n_ctx`: llama-server
    /// reports the per-slot size there, the `-c` total divided by the slots).
    pub n_ctx: Option<u64>,
    /// How many slots serve requests in parallel (`total_slots`).
    pub slots: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The server refused the request for its key (401 or 403).
    #[error("{message}")]
    Unauthorized { status: u16, message: String },
    #[error("cannot reach the model server at {url}: {reason}")]
    Connect {
        /// The innermost cause in words (a refused connection, a TLS certificate problem).
        reason: String,
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("model server answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("model stream broke off")]
    Stream(#[source] reqwest::Error),
    #[error("the model server cannot be used: {0}")]
    NoClient(String),
    #[error("the model server at {0} answered as a TLS server: this port speaks TLS; use https://")]
    SpeaksTls(String),
    #[error("the turn was cancelled while the model server was asked")]
    Cancelled,
    #[error("the model server's answer cannot be used: {0}")]
    Body(#[from] body::BodyError),
    #[error("model server sent a malformed response: {0}")]
    Malformed(String),
    /// The prompt does not fit the model's context. The numbers are the server's, when it
    /// gave them; `message` is its own text.
    #[error("{}", context_text(*.prompt_tokens, *.n_ctx))]
    ContextExceeded {
        prompt_tokens: Option<u64>,
        n_ctx: Option<u64>,
        message: String,
    },
}

/// The display of `EngineError::ContextExceeded`, saying only the numbers it has.
fn context_text(prompt_tokens: Option<u64>, n_ctx: Option<u64>) -> String {
    let request = prompt_tokens.map_or(String::new(), |n| format!(" ({n} tokens)"));
    let context = n_ctx.map_or(String::new(), |n| format!(" ({n} tokens)"));
    format!("the request{request} exceeds the model's context{context}")
}

/// One native tool call, with its arguments still as the JSON text the model produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, Default)]
pub struct ChatReply {
    pub content: String,
    pub tool_calls: Vec<NativeCall>,
    pub finish_reason: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// Prompt tokens served from the slot's cache.
    pub cached_tokens: Option<u64>,
}

/// The URL of a llama-server listening on loopback `port` (the managed server).
pub fn loopback_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// Asks a model server's `/health` whether it has finished loading.
#[derive(Debug, Clone)]
pub struct HealthProbe {
    http: reqwest::Client,
    health: String,
}

impl HealthProbe {
    /// A probe of the server at `url`, each request bounded to 2 s; `Err` when no client
    /// can be built (never a default client, which would follow the environment's proxy).
    pub fn new(url: &str) -> Result<HealthProbe, String> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .no_proxy()
            .build()
            .map_err(|e| format!("cannot build the HTTP client for /health: {e}"))?;
        Ok(HealthProbe {
            http,
            health: format!("{}/health", url.trim_end_matches('/')),
        })
    }

    /// Whether `/health` answers with a success status now.
    pub async fn ready(&self) -> bool {
        self.http
            .get(&self.health)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    }
}

/// Whether something accepts TCP connections on loopback `port` (a connect, nothing sent).
pub fn port_has_listener(port: u16) -> bool {
    std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(300),
    )
    .is_ok()
}

/// What a chat request carries besides the engine's own settings.
#[derive(Debug)]
pub struct ChatRequest<'a> {
    pub messages: &'a [Value],
    /// Offered as native `tools` (empty for calls written as text).
    pub tools: &'a [talos_core::tools::ToolId],
    /// MCP tools' definitions, offered after Talos's own.
    pub external_tools: &'a [Value],
    /// The session's llama.cpp slot (managed mode), so its prompt cache is reused.
    pub slot: Option<u32>,
    /// `tool_choice: required`, with the configured prefill as the assistant's first words.
    pub tool_choice_required: bool,
    pub prefill: &'a str,
    /// The decoding constraint (`talos_core::constrain`), sent as `response_format` with a
    /// JSON schema. llama-server b11434 refuses an assistant prefill beside it ("Failed to
    /// initialize samplers"), so no prefill is sent then (docs/decisions/0030).
    pub schema: Option<&'a Value>,
}

impl Engine {
    /// The streamed `/v1/chat/completions` body for a request.
    pub fn chat_body(&self, request: &ChatRequest<'_>) -> Value {
        let (kind, served) = self.found();
        // An OpenAI server routes on `model`: the one it serves, unless model.name says which.
        let model = match (kind, served) {
            (Kind::OpenAi, Some(served)) if self.model_name == "local" => served,
            _ => self.model_name.clone(),
        };
        let mut body = serde_json::json!({
            "model": model,
            "messages": request.messages,
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": self.max_tokens,
        });
        if kind == Kind::LlamaCpp {
            body["cache_prompt"] = serde_json::json!(true);
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = serde_json::json!(temperature);
        }
        if let Some(slot) = request.slot.filter(|_| kind == Kind::LlamaCpp) {
            body["id_slot"] = serde_json::json!(slot);
        }
        if request.tool_choice_required {
            body["tool_choice"] = serde_json::json!("required");
            if !request.prefill.is_empty()
                && request.schema.is_none()
                && let Some(messages) = body["messages"].as_array_mut()
            {
                messages.push(serde_json::json!({"role": "assistant", "content": request.prefill}));
            }
        }
        if let Some(schema) = request.schema {
            body["response_format"] = serde_json::json!({
                "type": "json_schema",
                "json_schema": {"name": "talos_reply", "schema": schema},
            });
        }
        if !request.tools.is_empty() || !request.external_tools.is_empty() {
            body["tools"] = Value::Array(
                request
                    .tools
                    .iter()
                    .map(|t| crate::engine::tools::tool_schema(*t))
                    .chain(request.external_tools.iter().cloned())
                    .collect(),
            );
        }
        body
    }

    /// An engine for `url` (the managed server's loopback URL, or `model.url` to connect to).
    /// `Err` when its client cannot be built as configured (a `model.ca_file` that does not
    /// load, a TLS stack that does not start): never a client without the CA, timeouts or
    /// `no_proxy`.
    pub fn new(config: &ModelConfig, url: &str) -> Result<Engine, EngineError> {
        let http = client(config).map_err(EngineError::NoClient)?;
        Ok(Engine::with(config, url, Ok(http)))
    }

    /// An engine whose client could not be built: every request fails with `reason`.
    pub fn unusable(config: &ModelConfig, url: &str, reason: &str) -> Engine {
        Engine::with(config, url, Err(reason.into()))
    }

    /// Why this engine has no client, if it has none.
    pub fn problem(&self) -> Option<&str> {
        self.http.as_ref().err().map(|e| &**e)
    }

    fn with(config: &ModelConfig, url: &str, http: Result<reqwest::Client, Arc<str>>) -> Engine {
        let (auth, key, key_note) = match config.api_key() {
            Ok(Some(key)) => {
                let value =
                    reqwest::header::HeaderValue::from_str(&format!("Bearer {}", key.secret))
                        .ok()
                        .map(|mut v| {
                            v.set_sensitive(true);
                            v
                        });
                let note = match value {
                    Some(_) => format!("the key from {}", key.source),
                    None => format!(
                        "{}: the key holds characters a header cannot carry",
                        key.source
                    ),
                };
                (value, Some(key.secret), Some(note))
            }
            Ok(None) => (None, None, None),
            Err(problem) => (None, None, Some(problem)),
        };
        Engine {
            auth,
            key,
            key_note,
            choice: config.engine,
            native_tools: config.native_tools,
            found: Arc::default(),
            http,
            base: url.trim_end_matches('/').to_string(),
            url: url.to_string(),
            model_name: config.name.clone(),
            max_tokens: config.max_tokens,
            temperature: config.temperature,
            no_tokenizer: Arc::default(),
            request_timeout: Duration::from_secs(config.request_timeout_secs.max(1)),
        }
    }

    /// A request that did not get an answer, with its innermost cause (a TLS certificate the
    /// CA does not vouch for, a refused connection), the key redacted.
    fn connect_error(&self, source: reqwest::Error) -> EngineError {
        let mut reason = source.to_string();
        let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(&source);
        while let Some(inner) = cause {
            reason = inner.to_string();
            cause = inner.source();
        }
        // A TLS server answers a clear-text request with a TLS alert, not HTTP.
        if self.url.starts_with("http:") && reason.contains("invalid HTTP version") {
            return EngineError::SpeaksTls(self.url.clone());
        }
        EngineError::Connect {
            reason: auth::redact(&reason, self.key.as_deref()),
            url: self.url.clone(),
            source,
        }
    }

    /// A request to `path` on the server, with the key when one is configured.
    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> Result<reqwest::RequestBuilder, EngineError> {
        let http = self
            .http
            .as_ref()
            .map_err(|reason| EngineError::NoClient(reason.to_string()))?;
        let builder = http.request(method, format!("{}{path}", self.base));
        Ok(match &self.auth {
            Some(value) => builder.header(reqwest::header::AUTHORIZATION, value.clone()),
            None => builder,
        })
    }

    /// How long a probe or one `/tokenize` may take in all: `model.request_timeout_secs`, at
    /// most [`body::PROBE_DEADLINE`].
    fn probe_deadline(&self) -> Duration {
        self.request_timeout.min(body::PROBE_DEADLINE)
    }

    /// The error for a non-success answer whose body shows an `http` URL reached a TLS port.
    fn speaks_tls(&self, body: &str) -> Option<EngineError> {
        (self.url.starts_with("http:") && PLAIN_TO_TLS.iter().any(|p| body.contains(p)))
            .then(|| EngineError::SpeaksTls(self.url.clone()))
    }

    /// The error for a refused request (401 or 403): what the server said (the key redacted)
    /// and which setting to look at.
    fn refused(&self, status: u16, body: &str) -> EngineError {
        EngineError::Unauthorized {
            status,
            message: auth::refusal(status, body, self.key.as_deref(), self.key_note.as_deref()),
        }
    }

    /// What the server says about itself: `/props` for llama.cpp, else (with `model.engine`
    /// `auto` or `openai`) `/v1/models` for an OpenAI-compatible server. A server with neither
    /// is taken as llama.cpp without `/props`: no native tools, no known context.
    pub async fn server_facts(&self) -> Result<ServerFacts, EngineError> {
        use crate::config::{EngineChoice, NativeTools};
        let mut facts = match self.choice {
            EngineChoice::OpenAi => None,
            EngineChoice::Auto | EngineChoice::LlamaCpp => self.props().await?,
        };
        if facts.is_none() && self.choice != EngineChoice::LlamaCpp {
            facts = self.models().await?;
        }
        let mut facts = facts.unwrap_or_default();
        facts.native_tools = match self.native_tools {
            NativeTools::On => true,
            NativeTools::Off => false,
            NativeTools::Auto => facts.native_tools,
        };
        Ok(facts)
    }

    /// [`Engine::server_facts`], ended at once by `cancel` (a server's `/props` may hang).
    pub async fn server_facts_until(
        &self,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<ServerFacts, EngineError> {
        tokio::select! {
            facts = self.server_facts() => facts,
            () = cancel.cancelled() => Err(EngineError::Cancelled),
        }
    }

    /// [`Engine::count_tokens`], ended at once by `cancel` (no counts then): a server's
    /// `/tokenize` may hang.
    pub async fn count_until(
        &self,
        texts: &[String],
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Option<Vec<u64>> {
        tokio::select! {
            counts = self.count_tokens(texts) => counts,
            () = cancel.cancelled() => None,
        }
    }

    /// `GET path`, or the refusal of its key; `None` for any other non-success. The whole
    /// exchange is bounded in time and the body in size.
    async fn probe_json(&self, path: &str) -> Result<Option<Value>, EngineError> {
        let limits = body::Limits {
            bytes: body::MAX_ANSWER_BYTES,
            within: self.probe_deadline(),
        };
        let mut response = self
            .request(reqwest::Method::GET, path)?
            .timeout(self.probe_deadline())
            .send()
            .await
            .map_err(|source| self.connect_error(source))?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let text = body::error_text(response).await;
            if matches!(status, 401 | 403) {
                return Err(self.refused(status, &text));
            }
            return match self.speaks_tls(&text) {
                Some(tls) => Err(tls),
                None => Ok(None),
            };
        }
        let bytes = body::read(&mut response, limits).await?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| EngineError::Malformed(format!("{path} is not JSON: {e}")))?;
        Ok(Some(value))
    }

    async fn props(&self) -> Result<Option<ServerFacts>, EngineError> {
        let Some(props) = self.probe_json("/props").await? else {
            return Ok(None);
        };
        self.remember(Kind::LlamaCpp, None);
        Ok(Some(facts_from_props(&props)))
    }

    /// An OpenAI-compatible server's `/v1/models`: the model it serves (its `id`, sent as
    /// `model` unless `model.name` is set) and, from vLLM's `max_model_len`, the context.
    async fn models(&self) -> Result<Option<ServerFacts>, EngineError> {
        let Some(models) = self.probe_json("/v1/models").await? else {
            return Ok(None);
        };
        let first = models.pointer("/data/0");
        let id = first
            .and_then(|m| m.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if self.model_name == "local"
            && let Some(id) = &id
        {
            tracing::info!(url = %self.url, model = %id, "model.name is not set: using the model the server lists first");
        }
        self.remember(Kind::OpenAi, id);
        Ok(Some(ServerFacts {
            engine: Kind::OpenAi,
            native_tools: true,
            n_ctx: first
                .and_then(|m| m.get("max_model_len"))
                .and_then(Value::as_u64)
                .filter(|n| *n > 0),
            slots: None,
        }))
    }

    fn remember(&self, kind: Kind, model: Option<String>) {
        if let Ok(mut found) = self.found.lock() {
            *found = (kind, model);
        }
    }

    /// The model an OpenAI-compatible server is asked for because `model.name` is not set:
    /// the first its `/v1/models` lists (`None` for llama.cpp, or when `model.name` says).
    pub fn picked_model(&self) -> Option<String> {
        match self.found() {
            (Kind::OpenAi, Some(served)) if self.model_name == "local" => Some(served),
            _ => None,
        }
    }

    fn found(&self) -> (Kind, Option<String>) {
        self.found.lock().map(|f| f.clone()).unwrap_or_default()
    }

    /// Whether the server's chat template can call tools (`chat_template_caps.supports_tool_calls`).
    /// A server without `/props` is treated as unable: tools are then described as text.
    pub async fn supports_native_tools(&self) -> Result<bool, EngineError> {
        Ok(self.server_facts().await?.native_tools)
    }

    /// The token count of each text by the server's own tokenizer (`POST /tokenize`, no special
    /// tokens added), in order; an empty text is 0 without a request. `None` when any count
    /// failed. A server that shows it has no tokenizer (404, 405 or 501, or a success that is
    /// not `{"tokens": [...]}`) is remembered, and later calls return `None` without asking; a
    /// transient failure (unreachable, loading, a server error) is not remembered.
    pub async fn count_tokens(&self, texts: &[String]) -> Option<Vec<u64>> {
        if self.found().0 == Kind::OpenAi {
            return None;
        }
        let mut counts = Vec::with_capacity(texts.len());
        for text in texts {
            if self.no_tokenizer.load(Ordering::Relaxed) {
                return None;
            }
            if text.is_empty() {
                counts.push(0);
                continue;
            }
            counts.push(self.count_one(text).await?);
        }
        Some(counts)
    }

    /// One `/tokenize`, bounded in time and size like every other answer.
    async fn count_one(&self, text: &str) -> Option<u64> {
        let mut response = self
            .request(reqwest::Method::POST, "/tokenize")
            .ok()?
            .timeout(self.probe_deadline())
            .json(&serde_json::json!({"content": text, "add_special": false}))
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        if matches!(status, 404 | 405 | 501) {
            self.no_tokenizer.store(true, Ordering::Relaxed);
            return None;
        }
        if !response.status().is_success() {
            return None;
        }
        let limits = body::Limits {
            bytes: body::MAX_ANSWER_BYTES,
            within: self.probe_deadline(),
        };
        let body = body::read(&mut response, limits).await.ok()?;
        let count = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|v| v.get("tokens").and_then(Value::as_array).map(Vec::len));
        if count.is_none() {
            self.no_tokenizer.store(true, Ordering::Relaxed);
        }
        count.map(|n| n as u64)
    }

    pub async fn start_chat(&self, body: &Value) -> Result<ChatStream, EngineError> {
        let response = self
            .request(reqwest::Method::POST, "/v1/chat/completions")?
            .json(body)
            .send()
            .await
            .map_err(|source| self.connect_error(source))?;
        let status = response.status();
        if !status.is_success() {
            let text = body::error_text(response).await;
            if matches!(status.as_u16(), 401 | 403) {
                return Err(self.refused(status.as_u16(), &text));
            }
            if let Some(tls) = self.speaks_tls(&text) {
                return Err(tls);
            }
            if let Some(exceeded) = overflow::context_exceeded(&text) {
                return Err(exceeded);
            }
            let text = auth::redact(&text, self.key.as_deref());
            return Err(EngineError::Status {
                status: status.as_u16(),
                body: text.chars().take(300).collect(),
            });
        }
        let streaming = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let answer = body::Limits {
            bytes: body::MAX_ANSWER_BYTES,
            within: self.request_timeout,
        };
        Ok(ChatStream::new(response, streaming, answer))
    }
}

/// The one HTTP client of a model: the CA of `model.ca_file` (proven, see
/// [`crate::config::ca`]), timeouts, and no proxy (the key must not travel through one). Any
/// failure is the error, never a default client.
fn client(config: &ModelConfig) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .read_timeout(Duration::from_secs(config.request_timeout_secs.max(1)))
        .no_proxy();
    for der in config.ca_certificates()? {
        let certificate = reqwest::Certificate::from_der(&der)
            .map_err(|e| format!("model.ca_file {}: {e}", config.ca_file))?;
        builder = builder.add_root_certificate(certificate);
    }
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// The facts a `/props` body states; what it does not state is unknown (no native tools).
fn facts_from_props(props: &Value) -> ServerFacts {
    ServerFacts {
        engine: Kind::LlamaCpp,
        native_tools: props
            .pointer("/chat_template_caps/supports_tool_calls")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        n_ctx: props
            .pointer("/default_generation_settings/n_ctx")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0),
        slots: props
            .get("total_slots")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
    }
}

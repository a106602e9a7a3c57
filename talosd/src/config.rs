//! `config.yaml`: the model engine, tool calling, approvals and turn limits. A file that does
//! not parse, or asks for something unsafe, stops the daemon from accepting turns with a
//! message that names the problem; it never falls back to permissive defaults silently.
// std::fs here: config.yaml, the chat template, the key file and the CA file are the user's, never in a workspace.
#![allow(clippy::disallowed_methods)]

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub mod ca;
mod checkpoint;
mod engine;
mod extensions;
mod housekeeping;
mod mcp;
mod models;
mod permissions;
pub use engine::{EngineChoice, NativeTools};
pub use extensions::{HookConfig, HooksConfig, InstructionsConfig};
pub use mcp::{McpConfig, McpServerConfig, McpSurface, usable_server_name};
pub use models::{IMPLICIT_MODEL, ModelEntryConfig};

pub use checkpoint::CheckpointConfig;
pub use housekeeping::{RetentionConfig, TracesConfig};
pub use permissions::PermissionsConfig;

/// Every section of `config.yaml`. `Serialize` is for docs/configuration.md's tidy test, which
/// compares the documented keys and defaults with `Config::default()` serialized.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub model: ModelConfig,
    /// Named models (issue 25): each entry has the settings of `model:`, and `model.default`
    /// names the one a session uses until it selects another. Empty: `model:` is the one model.
    pub models: std::collections::BTreeMap<String, ModelConfig>,
    pub tools: ToolsConfig,
    pub approval: ApprovalConfig,
    pub turn: TurnConfig,
    pub permissions: PermissionsConfig,
    pub checkpoint: CheckpointConfig,
    pub traces: TracesConfig,
    pub retention: RetentionConfig,
    /// Project instruction files (`AGENTS.md`) a turn reads (issue 28).
    pub instructions: InstructionsConfig,
    /// Commands asked about each call, or told each outcome (issue 28).
    pub hooks: HooksConfig,
    /// MCP servers (issue 28, item 2; docs/extensions.md).
    pub mcp: McpConfig,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    pub mode: ModelMode,
    /// `connect_only` only.
    pub url: String,
    pub allow_remote: bool,
    /// The `model` field sent in chat requests (llama-server ignores it).
    pub name: String,
    pub request_timeout_secs: u64,
    pub max_tokens: u32,
    /// `managed`: the llama-server binary.
    pub server: String,
    /// `managed`: the GGUF model file.
    pub path: String,
    /// `managed`: the loopback port the server listens on.
    pub port: u16,
    pub ctx: u32,
    pub threads: u32,
    /// One slot per session, for prompt-cache reuse.
    pub slots: u32,
    /// `managed`: a tool-capable chat template (`--chat-template-file`), when set.
    pub chat_template_file: String,
    /// How long the server may stay loading before its start counts as failed.
    pub start_timeout_secs: u64,
    /// `off`, `names` or `strict`: the decoding constraint each model request carries
    /// (issue 15, docs/decisions/0030-decoding-constraint.md). Unset: `strict` for the managed
    /// small model, `names` for a `connect_only` server.
    pub constrain: Option<ConstrainLevel>,
    /// The context one request may use when the server does not say (`/props`): unset, the
    /// managed server's `ctx / slots`, else 4,096 tokens (issue 23).
    pub ctx_per_request: Option<u32>,
    /// Tokens of each request's context kept for the reply.
    pub reply_tokens: u64,
    /// The sampling temperature sent with each request (unset: the server's own default).
    pub temperature: Option<f64>,
    /// The name of an environment variable holding the server's API key (sent as
    /// `Authorization: Bearer`; issue 25).
    pub api_key_env: String,
    /// A file holding the server's API key; refused unless owned by the user and readable by
    /// nobody else.
    pub api_key_file: String,
    /// A PEM file of certificate authorities trusted for an `https` `model.url`, besides the
    /// system's.
    pub ca_file: String,
    /// `managed`: more arguments for llama-server, passed through as written (flash attention,
    /// cache types, `--rpc` workers, ...); those Talos sets or checks itself are refused.
    pub server_args: Vec<String>,
    /// `managed`: layers to offload to the GPU (`-ngl`).
    pub gpu_layers: Option<u32>,
    /// What kind of server `model.url` is.
    pub engine: EngineChoice,
    /// Whether tools are offered natively.
    pub native_tools: NativeTools,
    /// The entry of `models:` a session uses until it selects another; `model:` only.
    pub default: String,
    /// `managed` entries of `models:` that may run at once; `model:` only.
    pub max_running: u32,
}

/// llama-server flags `model.server_args` may not hold: they would change the bind address,
/// the port, the API key, the model or the slots that Talos sets and proves itself.
pub const RESERVED_SERVER_ARGS: [&str; 22] = [
    "--host",
    "--port",
    "--api-key",
    "--api-key-file",
    "--ssl-key-file",
    "--ssl-cert-file",
    "-m",
    "--model",
    "-mu",
    "--model-url",
    "-hf",
    "--hf-repo",
    "-hff",
    "--hf-file",
    "-c",
    "--ctx-size",
    "-np",
    "--parallel",
    "--chat-template-file",
    "--reuse-port",
    "--path",
    "--no-webui",
];

/// The GPU-layers flags, given once (`model.gpu_layers`) rather than also in `server_args`.
const GPU_LAYER_ARGS: [&str; 3] = ["-ngl", "--gpu-layers", "--n-gpu-layers"];

/// The server's API key as read, and where from (for messages; the key itself is never shown).
pub struct ApiKey {
    pub secret: String,
    /// `model.api_key_env TALOS_MODEL_KEY` or `model.api_key_file /path`.
    pub source: String,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey(<withheld>, from {})", self.source)
    }
}

/// `model.ctx_per_request` when unset for a `connect_only` server.
pub const DEFAULT_CTX_PER_REQUEST: u64 = 4096;

/// `model.constrain`, checked when the file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct ConstrainLevel(pub talos_core::constrain::Level);

impl TryFrom<String> for ConstrainLevel {
    type Error = String;
    fn try_from(name: String) -> Result<ConstrainLevel, String> {
        talos_core::constrain::Level::parse(&name)
            .map(ConstrainLevel)
            .ok_or_else(|| {
                format!("model.constrain `{name}` is not supported; use off, names or strict")
            })
    }
}

impl Serialize for ConstrainLevel {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.as_str())
    }
}

impl ModelConfig {
    /// The constraint level in force: the configured one, or the mode's default.
    pub fn constrain_level(&self) -> talos_core::constrain::Level {
        use talos_core::constrain::Level;
        match (self.constrain, self.mode) {
            (Some(ConstrainLevel(level)), _) => level,
            (None, ModelMode::Managed) => Level::Strict,
            (None, ModelMode::ConnectOnly) => Level::Names,
        }
    }

    /// The server's API key, from `model.api_key_env` or `model.api_key_file`; `Ok(None)` when
    /// neither is set, `Err` (naming the setting, never the key) when the one set cannot be used.
    pub fn api_key(&self) -> Result<Option<ApiKey>, String> {
        if !self.api_key_env.is_empty() {
            let source = format!("model.api_key_env {}", self.api_key_env);
            return match std::env::var(&self.api_key_env) {
                Ok(secret) if !secret.trim().is_empty() => Ok(Some(ApiKey {
                    secret: secret.trim().to_string(),
                    source,
                })),
                _ => Err(format!(
                    "{source}: the environment variable is not set for talosd (or is empty)"
                )),
            };
        }
        if self.api_key_file.is_empty() {
            return Ok(None);
        }
        let source = format!("model.api_key_file {}", self.api_key_file);
        check_private(&self.api_key_file).map_err(|e| format!("{source}: {e}"))?;
        let text = std::fs::read_to_string(&self.api_key_file)
            .map_err(|e| format!("{source}: cannot read it ({e})"))?;
        match text.trim() {
            "" => Err(format!("{source}: the file is empty")),
            secret => Ok(Some(ApiKey {
                secret: secret.to_string(),
                source,
            })),
        }
    }

    /// The certificates of `model.ca_file` (DER), when set; `Err` names the setting and why the
    /// file cannot be used (see [`ca`]).
    pub fn ca_certificates(&self) -> Result<Vec<Vec<u8>>, String> {
        if self.ca_file.is_empty() {
            return Ok(Vec::new());
        }
        ca::load(&self.ca_file)
            .map(|certificates| certificates.iter().map(|c| c.to_vec()).collect())
            .map_err(|e| format!("model.ca_file {}: {e}", self.ca_file))
    }

    /// The context of one request when the server does not say.
    pub fn ctx_per_request(&self) -> u64 {
        match (self.ctx_per_request, self.mode) {
            (Some(tokens), _) => u64::from(tokens),
            (None, ModelMode::Managed) => u64::from(self.ctx / self.slots.max(1)),
            (None, ModelMode::ConnectOnly) => DEFAULT_CTX_PER_REQUEST,
        }
    }
}

/// Who runs llama-server. Any other value in `model.mode` is refused when the file is read,
/// naming the value and the two that are accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum ModelMode {
    /// `managed` (the default): talosd launches and owns llama-server on 127.0.0.1.
    #[default]
    Managed,
    /// `connect_only`: attach to a llama-server at `url` that someone else started.
    ConnectOnly,
}

impl ModelMode {
    /// The name as `config.yaml` and `model/status` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelMode::Managed => "managed",
            ModelMode::ConnectOnly => "connect_only",
        }
    }
}

impl Serialize for ModelMode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A `model.mode` that is neither `managed` nor `connect_only`.
#[derive(Debug, thiserror::Error)]
#[error("model.mode `{0}` is not supported; use managed or connect_only")]
pub struct UnsupportedModelMode(pub String);

impl TryFrom<String> for ModelMode {
    type Error = UnsupportedModelMode;

    fn try_from(name: String) -> Result<ModelMode, UnsupportedModelMode> {
        [ModelMode::Managed, ModelMode::ConnectOnly]
            .into_iter()
            .find(|mode| mode.as_str() == name)
            .ok_or(UnsupportedModelMode(name))
    }
}

/// `~/x` becomes `$HOME/x`; anything else is kept.
fn expand_home(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) if !home.is_empty() => format!("{home}/{rest}"),
        _ => path.to_string(),
    }
}

/// The default model's file name, and the SHA-256 `packaging/get-llama.sh` pins for it
/// (`talos doctor` compares them; a test holds them equal to the script's).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
pub const DEFAULT_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

/// Where `packaging/get-llama.sh` installs llama-server and the default model.
pub fn default_llama_home() -> std::path::PathBuf {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let Some(dir) = env("TALOS_LLAMA_HOME") {
        return dir.into();
    }
    let data = env("XDG_DATA_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| env("HOME").map(|h| std::path::Path::new(&h).join(".local/share")));
    data.unwrap_or_else(std::env::temp_dir)
        .join("talos")
        .join("llama")
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolsConfig {
    /// `false` describes tools in the prompt and parses calls written as text.
    pub native_calling: bool,
    /// `true` turns tool-name alias rescue off.
    pub strict_names: bool,
    /// With native calling, ask the server for a tool call (`tool_choice: "required"`) on a
    /// turn's first model call when the plan's obligation needs a tool (a change, an
    /// inspection, a listing).
    pub require_tool_call: bool,
    /// Text the assistant turn starts with when a tool call is required (for example
    /// `"<tool_call>\n"` for ChatML templates, which small models otherwise ignore). Empty:
    /// no prefill.
    pub tool_call_prefill: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalConfig {
    /// An approval not answered within this many seconds is denied.
    pub timeout_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TurnConfig {
    pub max_model_calls: usize,
    /// Expected targets of a change up to this size are read by the runtime before the first
    /// model call and put in the prompt (issue 15); 0 turns the pre-read off.
    pub preread_max_bytes: u64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        let llama = default_llama_home();
        let template = llama.join("templates/Qwen-Qwen2.5-7B-Instruct.jinja");
        ModelConfig {
            mode: ModelMode::Managed,
            url: "http://127.0.0.1:8080".into(),
            allow_remote: false,
            name: "local".into(),
            request_timeout_secs: 300,
            max_tokens: 1024,
            server: llama.join("bin/llama-server").display().to_string(),
            path: llama
                .join("models")
                .join(DEFAULT_MODEL_FILE)
                .display()
                .to_string(),
            port: default_port(),
            ctx: 8192,
            threads: std::thread::available_parallelism()
                .map(|n| u32::try_from(n.get()).unwrap_or(2))
                .unwrap_or(2),
            slots: 2,
            chat_template_file: if template.exists() {
                template.display().to_string()
            } else {
                String::new()
            },
            start_timeout_secs: 120,
            constrain: None,
            ctx_per_request: None,
            reply_tokens: 512,
            temperature: None,
            api_key_env: String::new(),
            api_key_file: String::new(),
            ca_file: String::new(),
            server_args: Vec::new(),
            gpu_layers: None,
            engine: EngineChoice::Auto,
            native_tools: NativeTools::Auto,
            default: String::new(),
            max_running: 1,
        }
    }
}
impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            native_calling: true,
            strict_names: false,
            require_tool_call: true,
            tool_call_prefill: String::new(),
        }
    }
}
impl Default for ApprovalConfig {
    fn default() -> Self {
        ApprovalConfig { timeout_secs: 600 }
    }
}
impl Default for TurnConfig {
    fn default() -> Self {
        TurnConfig {
            max_model_calls: 8,
            preread_max_bytes: 16 * 1024,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    /// A path that is there but is not a regular file to read (a dangling symlink, a FIFO, a
    /// device, a directory): an error, never the defaults and never a hang.
    #[error("{path} is {what}; the configuration must be a regular file")]
    NotAFile { path: String, what: &'static str },
    #[error("{path}: {problem}")]
    Invalid { path: String, problem: Invalid },
}

/// A configuration that parsed but cannot be used: which setting and why.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    #[error("model.port must be a port number, not 0")]
    PortZero,
    #[error("model.slots, model.ctx and model.threads must be at least 1")]
    SizeZero,
    #[error(
        "model.reply_tokens ({reply}) must leave room for a prompt in the {context}-token context of one request (model.ctx_per_request)"
    )]
    ReplyTokens { reply: u64, context: u64 },
    #[error("model.temperature ({0}) must be between 0 and 2")]
    Temperature(f64),
    #[error("model.start_timeout_secs must be at least 1")]
    StartTimeoutZero,
    #[error("model.url `{url}` is not a URL: {error}")]
    NotAUrl { url: String, error: url::ParseError },
    #[error("model.url `{0}` must use http or https")]
    NotHttp(String),
    #[error(
        "model.server_args may not hold {0}: Talos sets the bind address, port, API key, model, context and slots itself (model.port, model.path, model.ctx, model.slots)"
    )]
    ReservedServerArg(String),
    #[error("model.server_args holds {0} and model.gpu_layers is set: give the GPU layers once")]
    GpuLayersTwice(String),
    #[error("set one of model.api_key_env and model.api_key_file, not both")]
    TwoKeys,
    #[error("{0}")]
    KeyFile(String),
    #[error("{0}")]
    CaFile(String),
    #[error(
        "model.url `{0}` is not a loopback address; set model.allow_remote: true to use a remote server"
    )]
    NotLoopback(String),
    #[error("model.max_running must be at least 1")]
    MaxRunningZero,
    #[error("{0}")]
    Models(String),
    #[error("models.{name}: {problem}")]
    InEntry { name: String, problem: Box<Invalid> },
    #[error("turn.max_model_calls must be at least 1")]
    MaxModelCallsZero,
    #[error("approval.timeout_secs must be at least 1")]
    ApprovalTimeoutZero,
    #[error("{0}")]
    Retention(&'static str),
    #[error("{0}")]
    Extensions(String),
    /// A server of `mcp.servers`; the message names it and the key.
    #[error("{0}")]
    Mcp(String),
}

impl Config {
    /// Loads the file, or the defaults when it does not exist.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let read = |source| ConfigError::Read {
            path: shown.clone(),
            source,
        };
        let not_a_file = |what| ConfigError::NotAFile {
            path: shown.clone(),
            what,
        };
        // Opened without blocking (a FIFO must not hang start-up) and checked on the handle.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(path);
        let mut file = match file {
            Ok(file) => file,
            // A dangling symlink also says "not found": only a missing path means defaults.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return match std::fs::symlink_metadata(path) {
                    Ok(_) => Err(not_a_file("a symlink whose target does not exist")),
                    Err(_) => Ok(Config::default()),
                };
            }
            Err(source) => return Err(read(source)),
        };
        let kind = file.metadata().map_err(read)?.file_type();
        if !kind.is_file() {
            return Err(not_a_file(if kind.is_dir() {
                "a directory"
            } else {
                "not a regular file (a FIFO, socket or device)"
            }));
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(read)?;
        Config::parse(&text, &shown)
    }

    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let mut config: Config = if text.trim().is_empty() {
            Config::default()
        } else {
            serde_yaml_ng::from_str(text).map_err(|e| ConfigError::Parse {
                path: origin.to_string(),
                message: with_line(&e, text),
            })?
        };
        for model in std::iter::once(&mut config.model).chain(config.models.values_mut()) {
            for path in [
                &mut model.server,
                &mut model.path,
                &mut model.chat_template_file,
                &mut model.api_key_file,
                &mut model.ca_file,
            ] {
                *path = expand_home(path);
            }
        }
        config.validate().map_err(|problem| ConfigError::Invalid {
            path: origin.to_string(),
            problem,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), Invalid> {
        self.validate_models()?;
        if self.turn.max_model_calls == 0 {
            return Err(Invalid::MaxModelCallsZero);
        }
        if self.approval.timeout_secs == 0 {
            return Err(Invalid::ApprovalTimeoutZero);
        }
        if let Some(problem) = self.retention.problem() {
            return Err(Invalid::Retention(problem));
        }
        if let Some(problem) = self.instructions.problem().or_else(|| self.hooks.problem()) {
            return Err(Invalid::Extensions(problem));
        }
        self.mcp.validate()?;
        Ok(())
    }
}

impl ModelConfig {
    /// The checks of one model's settings (`model:`, or an entry of `models:`).
    fn validate(&self) -> Result<(), Invalid> {
        match self.mode {
            ModelMode::ConnectOnly => {}
            ModelMode::Managed => {
                if self.port == 0 {
                    return Err(Invalid::PortZero);
                }
                if self.slots == 0 || self.ctx == 0 || self.threads == 0 {
                    return Err(Invalid::SizeZero);
                }
                if self.start_timeout_secs == 0 {
                    return Err(Invalid::StartTimeoutZero);
                }
                self.check_server_args()?;
            }
        }
        if self.max_running == 0 {
            return Err(Invalid::MaxRunningZero);
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(Invalid::Temperature(t));
        }
        let context = self.ctx_per_request();
        if self.reply_tokens + 256 > context {
            return Err(Invalid::ReplyTokens {
                reply: self.reply_tokens,
                context,
            });
        }
        let url = url::Url::parse(&self.url).map_err(|error| Invalid::NotAUrl {
            url: self.url.clone(),
            error,
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Invalid::NotHttp(self.url.clone()));
        }
        if !self.api_key_env.is_empty() && !self.api_key_file.is_empty() {
            return Err(Invalid::TwoKeys);
        }
        if !self.api_key_file.is_empty() {
            check_private(&self.api_key_file).map_err(|e| {
                Invalid::KeyFile(format!("model.api_key_file {}: {e}", self.api_key_file))
            })?;
        }
        self.ca_certificates().map_err(Invalid::CaFile)?;
        // Clear text to another host needs model.allow_remote; TLS does not.
        if url.scheme() == "http" && !self.allow_remote && !is_loopback(&url) {
            return Err(Invalid::NotLoopback(self.url.clone()));
        }
        Ok(())
    }
}

/// The parser's message, naming the line: from the parser's own location, or, for an
/// unknown key it reports without one, from the first line that starts with that key.
fn with_line(error: &serde_yaml_ng::Error, text: &str) -> String {
    let message = error.to_string();
    if message.contains(" line ") {
        return message;
    }
    if let Some(location) = error.location() {
        return format!(
            "{message} (line {}, column {})",
            location.line(),
            location.column()
        );
    }
    let key = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field"));
    let line = key.and_then(|key| {
        text.lines().position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
    });
    match line {
        Some(index) => format!("{message} (line {})", index + 1),
        None => message,
    }
}

impl ModelConfig {
    fn check_server_args(&self) -> Result<(), Invalid> {
        for arg in &self.server_args {
            let flag = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
            if RESERVED_SERVER_ARGS.contains(&flag) {
                return Err(Invalid::ReservedServerArg(flag.to_string()));
            }
            if self.gpu_layers.is_some() && GPU_LAYER_ARGS.contains(&flag) {
                return Err(Invalid::GpuLayersTwice(flag.to_string()));
            }
        }
        Ok(())
    }
}

/// The first port of the managed default's range.
pub const PORT_BASE: u16 = 18480;

/// The managed server's default port: [`PORT_BASE`] plus the user's uid modulo 1,000 (so
/// 18480 to 19479), so that users sharing a machine each get their own (issue 25).
pub fn default_port() -> u16 {
    port_for_uid(rustix::process::geteuid().as_raw())
}

/// The default port of user `uid`.
pub fn port_for_uid(uid: u32) -> u16 {
    PORT_BASE + u16::try_from(uid % 1000).unwrap_or(0)
}

/// Refuses a key file that is not a regular file owned by this user, or that others may read.
fn check_private(path: &str) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read it ({e})"))?;
    if !meta.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Err("it is not owned by the user talosd runs as".into());
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "others may read it (mode {:o}); chmod 600 it",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves a missing config means the defaults, while a dangling symlink, a FIFO and a
    /// directory are errors naming the path (none hangs, none falls back to the defaults).
    #[test]
    fn a_config_that_is_not_a_regular_file_is_an_error_not_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.yaml");
        assert_eq!(Config::load(&missing).unwrap(), Config::default());
        let dangling = dir.path().join("dangling.yaml");
        std::os::unix::fs::symlink(dir.path().join("gone.yaml"), &dangling).unwrap();
        let fifo = dir.path().join("fifo.yaml");
        let cwd = rustix::fs::CWD;
        rustix::fs::mknodat(cwd, &fifo, rustix::fs::FileType::Fifo, 0o600.into(), 0).unwrap();
        let rows = [
            (dangling, "a symlink whose target does not exist"),
            (fifo, "not a regular file"),
            (dir.path().to_path_buf(), "a directory"),
        ];
        for (path, what) in rows {
            let error = Config::load(&path).unwrap_err().to_string();
            assert!(error.contains(what), "{}: {error}", path.display());
            assert!(error.contains(&path.display().to_string()), "{error}");
        }
    }

    #[test]
    fn constrain_levels_and_their_defaults() {
        use talos_core::constrain::Level;
        let level = |text: &str| Config::parse(text, "c").map(|c| c.model.constrain_level());
        let table = [
            ("", Some(Level::Strict)),
            ("model:\n  mode: connect_only\n", Some(Level::Names)),
            ("model:\n  constrain: off\n", Some(Level::Off)),
            (
                "model:\n  mode: connect_only\n  constrain: strict\n",
                Some(Level::Strict),
            ),
            ("model:\n  constrain: names\n", Some(Level::Names)),
            ("model:\n  constrain: loose\n", None),
        ];
        for (text, want) in table {
            assert_eq!(level(text).ok(), want, "{text}");
        }
        let error = level("model:\n  constrain: loose\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("off, names or strict"), "{error}");
        assert_eq!(Config::default().turn.preread_max_bytes, 16 * 1024);
    }

    #[test]
    fn config_rows() {
        assert_eq!(Config::parse("", "c").unwrap(), Config::default());
        let c = Config::parse(
            "model:\n  url: http://127.0.0.1:9999\ntools:\n  native_calling: false\n",
            "c",
        )
        .unwrap();
        assert_eq!(
            (c.model.url.as_str(), c.tools.native_calling),
            ("http://127.0.0.1:9999", false)
        );
        assert!(Config::parse("model:\n  url: http://localhost:1\n", "c").is_ok());
        assert!(Config::parse("model:\n  url: http://[::1]:1\n", "c").is_ok());
        let remote = Config::parse("model:\n  url: http://10.0.0.5:8080\n", "c")
            .unwrap_err()
            .to_string();
        assert!(remote.contains("not a loopback address"), "{remote}");
        assert!(
            Config::parse(
                "model:\n  url: http://10.0.0.5:8080\n  allow_remote: true\n",
                "c"
            )
            .is_ok()
        );
        assert!(Config::parse("model:\n  url: http://127.0.0.2.evil.com:1\n", "c").is_err());
        let typo = Config::parse("modle:\n  url: x\n", "c")
            .unwrap_err()
            .to_string();
        assert!(typo.contains("line 1"), "{typo}");
        assert!(Config::parse("model: [", "c").is_err());
        let mode = Config::parse("model:\n  mode: manged\n", "c")
            .unwrap_err()
            .to_string();
        assert!(
            mode.contains("model.mode `manged` is not supported; use managed or connect_only"),
            "{mode}"
        );
        let connect = Config::parse("model:\n  mode: connect_only\n", "c").unwrap();
        assert_eq!(connect.model.mode, ModelMode::ConnectOnly);
        assert!(
            Config::parse("model:\n  url: ftp://127.0.0.1:1\n", "c")
                .unwrap_err()
                .to_string()
                .contains("must use http or https")
        );
        // TLS to another host needs no allow_remote; clear text does.
        assert!(Config::parse("model:\n  url: https://gpu.example:8443\n", "c").is_ok());
        assert!(Config::parse("model:\n  url: http://gpu.example:8080\n", "c").is_err());
    }

    #[test]
    fn each_user_has_a_managed_port_of_their_own() {
        let rows = [
            (0, 18480),
            (1000, 18480),
            (1001, 18481),
            (4242, 18722),
            (999, 19479),
        ];
        for (uid, port) in rows {
            assert_eq!(port_for_uid(uid), port, "uid {uid}");
        }
        assert_eq!(Config::default().model.port, default_port());
    }

    #[test]
    fn permission_rules_parse_and_bad_ones_name_their_line() {
        let good = "permissions:\n  rules:\n    - effect: DENY\n      tools: talos.write_file\n      paths: [\"vendor/**\"]\n      reason: vendored\n    - effect: allow\n      tools: [create_file, talos.edit_file]\n      risks: write\n      phases: [apply]\n      paths: docs/**\n";
        let c = Config::parse(good, "c").unwrap();
        let rules = c.permissions.rules();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].reason, "vendored");
        assert_eq!(rules[1].reason, "permission rule");
        assert_eq!(
            rules[1].tools,
            vec![
                talos_core::tools::ToolId::WriteFile,
                talos_core::tools::ToolId::EditFile
            ]
        );
        let rows: &[(&str, &str)] = &[
            ("permissions:\n  rules:\n    - effect: maybe\n", "line 3"),
            (
                "permissions:\n  rules:\n    - effect: allow\n      tools: [rm_rf]\n",
                "line 4",
            ),
            (
                "permissions:\n  rules:\n    - effect: allow\n      risks: [spicy]\n",
                "line 4",
            ),
            (
                "permissions:\n  rules:\n    - effect: allow\n      phases: [respond]\n",
                "line 4",
            ),
            (
                "permissions:\n  rules:\n    - effect: allow\n      paths: \"\"\n",
                "line 4",
            ),
            (
                "permissions:\n  rules:\n    - effect: allow\n      pathz: [a]\n",
                "line 4",
            ),
            (
                "permissions:\n  rules:\n    - tools: [talos.write_file]\n",
                "effect",
            ),
            ("permissions:\n  rules: allow everything\n", "line 2"),
        ];
        for (text, expected) in rows {
            let error = Config::parse(text, "c").unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }
}

//! `talos acp`: an Agent Client Protocol agent on stdio, a thin bridge to `talosd` (started on
//! demand, as `talos run` does). Editors that speak ACP (Zed, JetBrains IDEs, Neovim's
//! CodeCompanion, Emacs's agent-shell) get Talos's governed turns without plugin code.
//!
//! Shape: the main thread reads stdin line by line. Responses to the bridge's own requests
//! (`session/request_permission`) go to the thread that waits for them; `session/cancel` is
//! acted on at once (`turn/cancel` on a connection of its own, and the session's open
//! permission requests deny); every request runs on a thread of its own, so a running prompt
//! never stops the bridge from reading. Each prompt has its own daemon connection, which holds
//! the turn and answers its approvals. Writes stay Talos's own (checkpoint, boundary, read-back):
//! the editor's `fs/write_text_file` is never used (docs/decisions/0027-acp-bridge.md).

mod commands;
mod leave;
mod links;
mod map;
mod mcp;
mod prompt;
mod session;
mod wire;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, Implementation, InitializeRequest, InitializeResponse, McpCapabilities,
    PromptCapabilities,
};
use serde_json::Value;
use talos_protocol::Mode;

use crate::client::Client;
use crate::failure::Failure;
use crate::socket::{self, AutoStart, SocketTarget};
use wire::{Incoming, Wire};

/// One ACP session: a Talos session on a workspace in one mode. The ACP id stays the same when
/// `session/set_mode` moves it to a Talos session in another mode.
#[derive(Debug, Clone)]
struct Session {
    workspace: String,
    mode: Mode,
    talos_id: String,
    /// Set while a prompt runs: whether `session/cancel` asked to stop it.
    running: Option<Arc<AtomicBool>>,
    /// The editor's MCP servers, handed to each Talos session of this editor session.
    mcp: Vec<talos_protocol::EditorMcpServer>,
}

/// The bridge's state, shared by the request threads.
#[derive(Clone)]
struct Bridge {
    wire: Wire,
    target: SocketTarget,
    sessions: Arc<Mutex<HashMap<String, Session>>>,
    /// Where the chains of Talos sessions behind each editor session are kept, once the
    /// daemon has said where its home is.
    links: Arc<OnceLock<links::Links>>,
}

/// A request's failure, answered as a JSON-RPC error.
#[derive(Debug)]
struct Refused {
    code: i64,
    message: String,
    /// The error's `data`, when ACP defines one (the `sessionId` of a session not found).
    data: Option<Value>,
}

impl Refused {
    fn new(code: i64, message: impl Into<String>) -> Refused {
        Refused {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn params(message: impl Into<String>) -> Refused {
        Refused::new(wire::INVALID_PARAMS, message)
    }

    /// ACP's "Resource not found" for a session the bridge does not know, with the
    /// `sessionId` in `data` as ACP's error section asks.
    fn session_not_found(acp_id: &str) -> Refused {
        Refused {
            code: wire::RESOURCE_NOT_FOUND,
            message: format!("session not found: {acp_id}"),
            data: Some(serde_json::json!({ "sessionId": acp_id })),
        }
    }
}

impl Refused {
    /// A daemon error about the session `acp_id`: a session not found gets its `sessionId`.
    fn about_session(self, acp_id: &str) -> Refused {
        if self.code == wire::RESOURCE_NOT_FOUND {
            return Refused::session_not_found(acp_id);
        }
        self
    }
}

impl From<Failure> for Refused {
    /// The daemon's errors as ACP errors. Its codes in JSON-RPC's server range are Talos's own;
    /// the two ACP gives a meaning of its own are translated: the daemon's "no such session"
    /// (`-32001`) is ACP's "Resource not found" (`-32002`), and the daemon's "shutting down"
    /// (its `-32002`) is an internal error, so an editor never reads it as a missing session.
    fn from(failure: Failure) -> Refused {
        match failure {
            Failure::Rpc(error) => {
                let code = match error.code {
                    c if c == talos_protocol::rpc::ErrorCode::SessionNotFound.code() => {
                        wire::RESOURCE_NOT_FOUND
                    }
                    c if c == talos_protocol::rpc::ErrorCode::ShuttingDown.code() => {
                        wire::INTERNAL_ERROR
                    }
                    c => c,
                };
                Refused::new(code, error.message)
            }
            other => Refused::new(wire::INTERNAL_ERROR, other.to_string()),
        }
    }
}

/// Reads typed params, or refuses them as invalid params naming what was wrong.
fn typed<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T, Refused> {
    serde_json::from_value(params)
        .map_err(|e| Refused::params(format!("invalid {method} params: {e}")))
}

/// Runs the bridge until stdin closes, then releases the sessions it holds; the exit code
/// is 0.
pub fn run(target: &SocketTarget) -> Result<u8, Failure> {
    let bridge = Bridge {
        wire: Wire::new(Box::new(std::io::stdout())),
        target: target.clone(),
        sessions: Arc::new(Mutex::new(HashMap::new())),
        links: Arc::new(OnceLock::new()),
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        match wire::read_line(&mut input, wire::MAX_LINE) {
            wire::Line::End => break,
            wire::Line::Text(line) if line.trim().is_empty() => {}
            wire::Line::Text(line) => bridge.on_line(&line),
            wire::Line::Unreadable(message) => bridge.wire.fail(
                &Value::Null,
                wire::PARSE_ERROR,
                &format!("parse error: {message}"),
            ),
        }
    }
    bridge.leave();
    Ok(0)
}

impl Bridge {
    fn on_line(&self, line: &str) {
        match wire::classify(line) {
            Incoming::Invalid { id, code, message } => self.wire.fail(&id, code, &message),
            Incoming::Response(message) => {
                // An answer to nothing the bridge asked is dropped, as JSON-RPC allows.
                self.wire.deliver(&message);
            }
            Incoming::Notification { method, params } => self.on_notification(&method, params),
            // Requests that never wait (no daemon, no editor) are answered in line; the rest
            // run on a thread each, so a prompt never stops the bridge from reading.
            Incoming::Request { id, method, params } if answers_at_once(&method) => {
                match self.on_request(&method, params) {
                    Ok(result) => self.wire.respond(&id, result),
                    Err(refused) => self.wire.refuse(&id, refused),
                }
            }
            Incoming::Request { id, method, params } => {
                let bridge = self.clone();
                std::thread::spawn(move || {
                    let loaded = params["sessionId"].as_str().map(str::to_string);
                    match bridge.on_request(&method, params) {
                        Ok(result) => {
                            // The editor hears of the session's commands once it knows the
                            // session.
                            let opened = match method.as_str() {
                                "session/new" => result["sessionId"].as_str().map(str::to_string),
                                "session/load" => loaded,
                                _ => None,
                            };
                            bridge.wire.respond(&id, result);
                            if let Some(acp_id) = opened {
                                bridge.announce_commands(&acp_id);
                            }
                        }
                        Err(refused) => bridge.wire.refuse(&id, refused),
                    }
                });
            }
        }
    }

    fn on_notification(&self, method: &str, params: Value) {
        if method == "session/cancel" {
            let Ok(cancel) = serde_json::from_value::<
                agent_client_protocol_schema::v1::CancelNotification,
            >(params) else {
                return;
            };
            self.cancel(&cancel.session_id.0);
        }
        // Other notifications (including `$/cancel_request` and extensions) need no answer.
    }

    fn on_request(&self, method: &str, params: Value) -> Result<Value, Refused> {
        let result = match method {
            "initialize" => to_value(initialize(typed(method, params)?)),
            "authenticate" => Ok(serde_json::json!({})),
            "session/new" => to_value(self.new_session(typed(method, params)?)?),
            "session/load" => to_value(self.load_session(typed(method, params)?)?),
            "session/set_mode" => to_value(self.set_mode(typed(method, params)?)?),
            "session/prompt" => to_value(self.prompt(typed(method, params)?)?),
            _ => Err(Refused::new(
                wire::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        }?;
        Ok(result)
    }

    /// `session/cancel`: the running turn is cancelled through the daemon, and the session's
    /// open permission requests end without an answer (the daemon's cancel decides them). The
    /// daemon is asked even when this bridge runs no prompt in the session: after a
    /// `session/load` of a session whose turn still runs, the turn is the daemon's to stop.
    fn cancel(&self, acp_id: &str) {
        let Some(session) = self.session(acp_id) else {
            return;
        };
        if let Some(flag) = &session.running {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        self.wire.abandon(acp_id);
        let target = self.target.clone();
        std::thread::spawn(move || {
            if let Err(failure) = crate::interrupt::cancel(&target, &session.talos_id) {
                eprintln!("talos acp: cannot cancel the turn: {failure}");
            }
        });
    }

    /// The home's chains, asking the daemon where its home is the first time.
    fn links(&self, client: &mut Client) -> Result<&links::Links, Refused> {
        if let Some(links) = self.links.get() {
            return Ok(links);
        }
        let status: talos_protocol::DaemonStatusResult = serde_json::from_value(client.call(
            talos_protocol::DAEMON_STATUS,
            serde_json::json!({}),
            &mut crate::client::ignore_messages,
        )?)
        .map_err(|e| Refused::from(Failure::Connection(e.to_string())))?;
        Ok(self
            .links
            .get_or_init(|| links::Links::in_home(std::path::Path::new(&status.home))))
    }

    fn session(&self, acp_id: &str) -> Option<Session> {
        self.lock().get(acp_id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection to the daemon, started if it is not running.
    fn connect(&self) -> Result<Client, Failure> {
        let mut client = Client::new(socket::connect(&self.target, AutoStart::Start)?)?;
        client.initialize()?;
        Ok(client)
    }
}

/// `initialize`, `authenticate` and methods the bridge does not have.
fn answers_at_once(method: &str) -> bool {
    !matches!(
        method,
        "session/new" | "session/load" | "session/set_mode" | "session/prompt"
    )
}

fn to_value<T: serde::Serialize>(value: T) -> Result<Value, Refused> {
    serde_json::to_value(value).map_err(|e| {
        Refused::new(
            wire::INTERNAL_ERROR,
            format!("cannot encode the result: {e}"),
        )
    })
}

/// `initialize`: ACP version 1 (the only one Talos speaks, answered whatever the client asked,
/// as ACP's negotiation says), sessions that load, prompts with text and embedded context, no
/// authentication.
fn initialize(request: InitializeRequest) -> InitializeResponse {
    let _ = request.protocol_version;
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .mcp_capabilities(McpCapabilities::new().http(true))
                .prompt_capabilities(PromptCapabilities::new().embedded_context(true)),
        )
        .auth_methods(Vec::new())
        .agent_info(
            Implementation::new("talos", env!("CARGO_PKG_VERSION")).title("Talos".to_string()),
        )
}

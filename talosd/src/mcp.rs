//! MCP servers (issue 28, item 2; docs/extensions.md, docs/decisions/0056-mcp-servers.md): the
//! hub that knows the configured servers (`mcp.servers`) and the editor's (ACP `mcpServers`, per
//! session), connects each on first use (a stdio server once per workspace, started in it),
//! lists and caches its tools, and calls them, each call bounded and its result made safe
//! (`output`). A crash, a timeout or a malformed answer is a failed call with a clear message;
//! the next use starts the server again. What a turn may call, and when it must ask, is decided
//! elsewhere (the surface and the ladder): the hub only carries calls.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::config::{McpConfig, McpServerConfig};

mod connection;
mod http;
mod links;
mod notices;
mod offer;
pub use offer::editor_servers;
pub mod output;
mod servers;
mod stdio;

use connection::Live;
use servers::{ServerDef, Transport, config_def, editor_def, info};

/// One tool as Talos offers it (as `mcp.SERVER.NAME`).
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub server: String,
    pub name: String,
    /// Escaped and capped.
    pub description: String,
    pub input_schema: serde_json::Value,
    /// The server's claim (`annotations.readOnlyHint`), not checked.
    pub read_only_hint: bool,
    /// The server's claim (`annotations.destructiveHint`), when it makes one; not checked.
    pub destructive_hint: Option<bool>,
}

/// One call's result: untrusted text, escaped and capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOutput {
    pub text: String,
    pub is_error: bool,
    pub truncated: bool,
}

/// A server's tools: those offered, and why each other one is not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    pub tools: Vec<McpTool>,
    pub skipped: Vec<String>,
}

/// Who asks: the session (for its editor's servers) and the workspace a stdio server runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub session_id: String,
    pub workspace: PathBuf,
}

impl Scope {
    pub fn of(session_id: &str, workspace: &std::path::Path) -> Scope {
        Scope {
            session_id: session_id.to_string(),
            workspace: workspace.to_path_buf(),
        }
    }
}

/// A server as `configured` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// `surface: always`.
    pub surface_always: bool,
    pub trust_read_only_hints: bool,
    /// `config` or `editor`.
    pub origin: &'static str,
}

/// A server the editor named in ACP `session/new` (`mcpServers`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorServer {
    /// Started with exactly `env` as its environment.
    Stdio {
        name: String,
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    Http {
        name: String,
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// Why a call has no result: before it was sent (no server, no such tool, no connection), or
/// after (timed out, cancelled, crashed, a malformed answer).
#[derive(Debug)]
enum Failure {
    NotSent(String),
    Sent(String),
}

impl Failure {
    fn into_text(self) -> String {
        match self {
            Failure::NotSent(text) | Failure::Sent(text) => text,
        }
    }
}

/// A connection's identity: origin (`config`, or the editor's session), name, workspace.
type Key = (String, String, PathBuf);
type Slot = Arc<tokio::sync::Mutex<Option<Arc<Live>>>>;

/// Every MCP server of one daemon.
#[derive(Debug, Default)]
pub struct McpHub {
    configured: BTreeMap<String, McpServerConfig>,
    editor: Mutex<HashMap<String, BTreeMap<String, ServerDef>>>,
    live: Mutex<HashMap<Key, Slot>>,
}

impl McpHub {
    /// The hub of `config`'s servers; nothing is started until first use.
    pub fn new(config: &McpConfig) -> McpHub {
        McpHub {
            configured: config.servers.clone(),
            ..McpHub::default()
        }
    }

    /// Every configured server, then no editor's (those are per session: see `session_servers`).
    pub fn configured(&self) -> Vec<ServerInfo> {
        self.configured
            .iter()
            .map(|(name, c)| info(&config_def(name, c)))
            .collect()
    }

    /// The editor's servers of `session_id`.
    pub fn session_servers(&self, session_id: &str) -> Vec<ServerInfo> {
        self.editor
            .lock()
            .ok()
            .and_then(|e| e.get(session_id).map(|s| s.values().map(info).collect()))
            .unwrap_or_default()
    }

    /// The tools of `server`, connecting it first when needed.
    pub async fn tools(&self, scope: &Scope, server: &str) -> Result<Listing, String> {
        let (_, live) = self.live(scope, server).await?;
        Ok(live.listing.clone())
    }

    /// Connects `server` (for `talos doctor`): its listing, and the containment asked for and
    /// not granted (empty when none is missing).
    pub async fn probe(&self, scope: &Scope, server: &str) -> Result<(Listing, String), String> {
        let (_, live) = self.live(scope, server).await?;
        Ok((live.listing.clone(), live.uncontained.clone()))
    }

    /// Calls `tool` of `server`; a failure names `mcp.SERVER.TOOL` and what happened.
    pub async fn call(
        &self,
        scope: &Scope,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: CancellationToken,
    ) -> Result<McpOutput, String> {
        self.send(scope, (server, tool), arguments, cancel)
            .await
            .map_err(Failure::into_text)
    }

    /// [`McpHub::call`], saying whether the failure came before anything was sent.
    async fn send(
        &self,
        scope: &Scope,
        (server, tool): (&str, &str),
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: CancellationToken,
    ) -> Result<McpOutput, Failure> {
        let (def, live) = self.live(scope, server).await.map_err(Failure::NotSent)?;
        if !live.listing.tools.iter().any(|t| t.name == tool) {
            return Err(Failure::NotSent(format!(
                "mcp.{server} offers no tool `{}`",
                output::escape_controls(tool)
            )));
        }
        let result = live.call(&def, tool, arguments, &cancel).await;
        if !live.alive() {
            // The next use starts it again.
            self.forget(&self.key(scope, &def)).await;
        }
        result.map_err(Failure::Sent)
    }

    /// Registers the editor's servers for `session_id`; refuses an unusable name, a name given
    /// twice, or one a configured server has.
    pub fn add_editor_servers(
        &self,
        session_id: &str,
        servers: Vec<EditorServer>,
    ) -> Result<(), String> {
        let mut defs = BTreeMap::new();
        for server in servers {
            let def = editor_def(server);
            if !crate::config::usable_server_name(&def.name) {
                return Err(format!(
                    "the editor's MCP server `{}` is not a usable name; use a-z, 0-9, `_` and `-` (at most 32)",
                    def.name.escape_default()
                ));
            }
            if self.configured.contains_key(&def.name) {
                return Err(format!(
                    "the editor's MCP server `{}` has the name of a configured server (mcp.servers.{0})",
                    def.name
                ));
            }
            if defs.insert(def.name.clone(), def).is_some() {
                return Err("the editor named two MCP servers alike".into());
            }
        }
        if let Ok(mut editor) = self.editor.lock() {
            editor.insert(session_id.to_string(), defs);
        }
        Ok(())
    }

    /// Forgets `session_id`'s editor servers and stops those running.
    pub fn forget_session(&self, session_id: &str) {
        if let Ok(mut editor) = self.editor.lock() {
            editor.remove(session_id);
        }
        let origin = format!("editor:{session_id}");
        let dropped: Vec<Slot> = match self.live.lock() {
            Ok(mut live) => {
                let keys: Vec<Key> = live.keys().filter(|k| k.0 == origin).cloned().collect();
                keys.iter().filter_map(|k| live.remove(k)).collect()
            }
            Err(_) => Vec::new(),
        };
        for slot in dropped {
            if let Ok(mut guard) = slot.try_lock() {
                guard.take();
            }
        }
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        let slots: Vec<Slot> = self
            .live
            .lock()
            .map(|mut l| l.drain().map(|(_, s)| s).collect())
            .unwrap_or_default();
        for slot in slots {
            if let Some(live) = slot.lock().await.take() {
                live.close().await;
            }
        }
    }

    fn def(&self, scope: &Scope, server: &str) -> Result<ServerDef, String> {
        if let Some(config) = self.configured.get(server) {
            return Ok(config_def(server, config));
        }
        self.editor
            .lock()
            .ok()
            .and_then(|e| e.get(&scope.session_id)?.get(server).cloned())
            .ok_or_else(|| {
                format!(
                    "no MCP server is named `{}`",
                    output::escape_controls(server)
                )
            })
    }

    fn key(&self, scope: &Scope, def: &ServerDef) -> Key {
        let origin = match def.origin {
            "editor" => format!("editor:{}", scope.session_id),
            other => other.to_string(),
        };
        let workspace = match def.transport {
            Transport::Stdio { .. } => scope.workspace.clone(),
            Transport::Http { .. } => PathBuf::new(),
        };
        (origin, def.name.clone(), workspace)
    }

    /// The live connection of `server` for `scope`, connecting (once) when there is none or
    /// the one there has ended.
    async fn live(&self, scope: &Scope, server: &str) -> Result<(ServerDef, Arc<Live>), String> {
        let def = self.def(scope, server)?;
        let key = self.key(scope, &def);
        let slot = match self.live.lock() {
            Ok(mut live) => live.entry(key).or_default().clone(),
            Err(_) => return Err("the MCP hub is unusable".into()),
        };
        let mut guard = slot.lock().await;
        if let Some(live) = guard.as_ref().filter(|l| l.alive()) {
            return Ok((def, live.clone()));
        }
        if let Some(old) = guard.take() {
            old.close().await;
        }
        let live = Arc::new(connection::connect(&def, &scope.workspace).await?);
        tracing::info!(server = %def.name, tools = live.listing.tools.len(), skipped = live.listing.skipped.len(), "MCP server connected");
        *guard = Some(live.clone());
        Ok((def, live))
    }

    async fn forget(&self, key: &Key) {
        let slot = self.live.lock().ok().and_then(|l| l.get(key).cloned());
        if let Some(slot) = slot
            && let Some(live) = slot.lock().await.take()
        {
            live.close().await;
        }
    }
}

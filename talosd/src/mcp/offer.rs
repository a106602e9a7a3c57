//! The MCP hub for a turn: which servers are listed (a server configured `surface: always`,
//! one the request names, and any whose tools are already known), the tools handed to the
//! core (which decides what the turn offers, `talos_core::mcp::offered`), and each call's
//! result as the core reads it. A server nobody named is never started by a turn.

use talos_core::mcp::{self, ExternalTool, Offer, ServerPolicy};
use talos_core::turn::call::{ExternalOutput, Input};
use tokio_util::sync::CancellationToken;

use super::{Listing, McpHub, McpTool, Scope};

impl McpHub {
    /// The tools a turn on `scope` with this request may be offered, and why a server that
    /// should have been listed could not be.
    pub async fn offer(
        &self,
        scope: &Scope,
        request: &str,
        read_only: bool,
    ) -> (Offer, Vec<String>) {
        let servers: Vec<super::ServerInfo> = self
            .configured()
            .into_iter()
            .chain(self.session_servers(&scope.session_id))
            .collect();
        if servers.is_empty() {
            return (Offer::default(), Vec::new());
        }
        let mut tools = Vec::new();
        let mut problems = Vec::new();
        for server in &servers {
            let wanted = server.surface_always || mcp::mentions(request, &server.name);
            let listing = if wanted {
                match self.tools(scope, &server.name).await {
                    Ok(listing) => Some(listing),
                    Err(e) => {
                        problems.push(format!(
                            "MCP server `{}` is not available: {e}",
                            server.name
                        ));
                        None
                    }
                }
            } else {
                self.known(scope, &server.name)
            };
            tools.extend(listing.into_iter().flat_map(|l| l.tools).map(external));
        }
        let policies: Vec<ServerPolicy> = servers
            .iter()
            .map(|s| ServerPolicy {
                name: s.name.clone(),
                always: s.surface_always,
                trust_read_only_hints: s.trust_read_only_hints,
            })
            .collect();
        let mut offer = mcp::offered(request, read_only, &policies, &tools);
        offer.workspace = scope.workspace.display().to_string();
        (offer, problems)
    }

    /// One call as the turn's core reads its result, saying when nothing was sent; not made
    /// when a path nobody was asked about (`unasked`, relative to the workspace) leads out of it
    /// on disk.
    pub async fn call_for_turn(
        &self,
        scope: &Scope,
        (server, tool): (&str, &str),
        arguments: serde_json::Map<String, serde_json::Value>,
        (files, unasked): (&crate::workspace::Workspace, &[String]),
        cancel: CancellationToken,
    ) -> Input {
        if let Some(why) = super::links::leads_out(files, unasked) {
            return Input::ExternalNotSent(why);
        }
        match self.send(scope, (server, tool), arguments, cancel).await {
            Ok(output) => Input::External(Ok(ExternalOutput {
                text: output.text,
                is_error: output.is_error,
                truncated: output.truncated,
            })),
            Err(super::Failure::NotSent(why)) => Input::ExternalNotSent(why),
            Err(super::Failure::Sent(why)) => Input::External(Err(why)),
        }
    }

    /// The listing of a connection that is up, without connecting.
    fn known(&self, scope: &Scope, server: &str) -> Option<Listing> {
        let def = self.def(scope, server).ok()?;
        let key = self.key(scope, &def);
        let slot = self.live.lock().ok()?.get(&key).cloned()?;
        let guard = slot.try_lock().ok()?;
        guard
            .as_ref()
            .filter(|live| live.alive())
            .map(|live| live.listing.clone())
    }
}

/// Registers the editor's servers for a session (`session/new`'s and `session/resume`'s
/// `mcpServers`).
pub fn editor_servers(
    hub: &McpHub,
    session_id: &str,
    servers: &[talos_protocol::EditorMcpServer],
) -> Result<(), String> {
    let mut defs = Vec::with_capacity(servers.len());
    for s in servers {
        defs.push(match (&s.command, &s.url) {
            (Some(command), None) => super::EditorServer::Stdio {
                name: s.name.clone(),
                command: command.clone(),
                args: s.args.clone(),
                env: s.env.clone(),
            },
            (None, Some(url)) => super::EditorServer::Http {
                name: s.name.clone(),
                url: url.clone(),
                headers: s.headers.clone(),
            },
            _ => {
                return Err(format!(
                    "the editor's MCP server `{}` needs exactly one of command and url",
                    s.name.escape_default()
                ));
            }
        });
    }
    hub.add_editor_servers(session_id, defs)
}

fn external(tool: McpTool) -> ExternalTool {
    ExternalTool {
        server: tool.server,
        name: tool.name,
        description: tool.description,
        input_schema: tool.input_schema,
        read_only_hint: tool.read_only_hint,
        destructive_hint: tool.destructive_hint,
    }
}

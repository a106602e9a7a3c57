//! The editor's MCP servers (ACP `session/new`'s `mcpServers`) for the daemon: each stdio or
//! HTTP server is handed to the Talos session, which connects it on first use under the same
//! rules as a configured one (docs/extensions.md). A name is made usable (`GitHub` becomes
//! `github`); an SSE server, or one whose name cannot be made usable or is given twice, is
//! not used, and the session's `_meta` says which were used and why others were not.

use agent_client_protocol_schema::v1::McpServer;
use serde_json::{Value, json};
use talos_protocol::EditorMcpServer;

/// The servers the daemon is given, and a note for each one it is not.
pub(super) fn editor_servers(offered: &[McpServer]) -> (Vec<EditorMcpServer>, Vec<String>) {
    let mut used: Vec<EditorMcpServer> = Vec::new();
    let mut notes = Vec::new();
    for server in offered {
        let (name, server) = match server {
            McpServer::Stdio(s) => (
                s.name.clone(),
                EditorMcpServer {
                    name: String::new(),
                    command: Some(s.command.display().to_string()),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                    url: None,
                    headers: Vec::new(),
                },
            ),
            McpServer::Http(h) => (
                h.name.clone(),
                EditorMcpServer {
                    name: String::new(),
                    command: None,
                    args: Vec::new(),
                    env: Vec::new(),
                    url: Some(h.url.clone()),
                    headers: h
                        .headers
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                },
            ),
            _ => {
                notes.push(format!(
                    "{}: not used (Talos speaks stdio and streamable HTTP, not SSE)",
                    shown(server_name(server))
                ));
                continue;
            }
        };
        let usable = usable_name(&name);
        if usable.is_empty() {
            notes.push(format!("{}: not used (no usable name)", shown(&name)));
        } else if used.iter().any(|u| u.name == usable) {
            notes.push(format!(
                "{}: not used (a second server named {usable})",
                shown(&name)
            ));
        } else {
            used.push(EditorMcpServer {
                name: usable,
                ..server
            });
        }
    }
    (used, notes)
}

fn server_name(server: &McpServer) -> &str {
    match server {
        McpServer::Stdio(s) => &s.name,
        McpServer::Http(h) => &h.name,
        McpServer::Sse(s) => &s.name,
        #[allow(unreachable_patterns)]
        _ => "",
    }
}

/// `a-z`, `0-9`, `_` and `-`, at most 32: lower-cased, anything else as `-`.
fn usable_name(name: &str) -> String {
    let mapped: String = name
        .trim()
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .take(32)
        .collect();
    mapped.trim_matches('-').to_string()
}

fn shown(name: &str) -> String {
    crate::render::printable_line(name)
        .chars()
        .take(60)
        .collect()
}

/// What the session's `_meta.talos.mcpServers` says.
pub(super) fn meta(used: &[EditorMcpServer], notes: &[String]) -> serde_json::Map<String, Value> {
    let names: Vec<String> = used.iter().map(|s| format!("mcp.{}.*", s.name)).collect();
    let mut meta = serde_json::Map::new();
    meta.insert(
        "talos".into(),
        json!({
            "mcpServers": {
                "used": names,
                "notUsed": notes,
                "rules": "each call asks unless a permission rule names the tool; tools join a turn only when the request names the server or the tool",
            }
        }),
    );
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_usable_and_clashes_and_sse_are_not_used() {
        let offered: Vec<McpServer> = serde_json::from_value(json!([
            {"name": "GitHub", "command": "/usr/bin/gh-mcp", "args": [], "env": [{"name": "T", "value": "1"}]},
            {"name": "github", "command": "/usr/bin/other", "args": [], "env": []},
            {"type": "http", "name": "Docs Server", "url": "http://127.0.0.1:9/mcp", "headers": []},
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
            {"name": "\u{202e}", "command": "/x", "args": [], "env": []}
        ]))
        .unwrap();
        let (used, notes) = editor_servers(&offered);
        let names: Vec<&str> = used.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["github", "docs-server"]);
        assert_eq!(used[0].env, vec![("T".to_string(), "1".to_string())]);
        assert_eq!(notes.len(), 3, "{notes:?}");
    }
}

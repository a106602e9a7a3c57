//! The servers the hub knows, each fully decided: how it is reached (its argv and exact
//! environment, or its URL, key source and headers) and its limits, from `mcp.servers.NAME` or
//! from the editor's `mcpServers` (with the defaults of a configured server, no containment, and
//! exactly the environment the editor sent).

use std::time::Duration;

use super::EditorServer;
use super::ServerInfo;
use super::http::KeySource;
use super::stdio;
use crate::config::{McpServerConfig, McpSurface};

/// One server, fully decided.
#[derive(Debug, Clone)]
pub struct ServerDef {
    pub name: String,
    pub origin: &'static str,
    pub transport: Transport,
    pub surface_always: bool,
    pub trust_read_only_hints: bool,
    pub timeout: Duration,
    pub max_output: usize,
}

#[derive(Debug, Clone)]
pub enum Transport {
    Stdio {
        argv: Vec<String>,
        /// The whole environment of the child.
        env: Vec<(String, String)>,
        isolation: talos_core::command::Isolation,
    },
    Http {
        url: String,
        key: KeySource,
        headers: Vec<(String, String)>,
    },
}

pub fn info(def: &ServerDef) -> ServerInfo {
    ServerInfo {
        name: def.name.clone(),
        transport: match def.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        },
        surface_always: def.surface_always,
        trust_read_only_hints: def.trust_read_only_hints,
        origin: def.origin,
    }
}

/// A configured server, its environment read from talosd's now (only the allowed names).
pub fn config_def(name: &str, c: &McpServerConfig) -> ServerDef {
    let transport = if c.command.is_empty() {
        Transport::Http {
            url: c.url.clone(),
            key: match c.api_key_env.as_str() {
                "" => KeySource::None,
                var => KeySource::Env(var.to_string()),
            },
            headers: Vec::new(),
        }
    } else {
        Transport::Stdio {
            argv: c.command.clone(),
            env: stdio::allowed_env(&c.env_allow),
            isolation: c.isolation(),
        }
    };
    ServerDef {
        name: name.to_string(),
        origin: "config",
        transport,
        surface_always: c.surface == McpSurface::Always,
        trust_read_only_hints: c.trust_read_only_hints,
        timeout: Duration::from_secs(c.timeout_secs.max(1)),
        max_output: c.max_output_bytes.max(1),
    }
}

/// An editor's server with the defaults of a configured one; its environment is exactly what
/// the editor sent.
pub fn editor_def(server: EditorServer) -> ServerDef {
    let defaults = McpServerConfig::default();
    let (name, transport) = match server {
        EditorServer::Stdio {
            name,
            command,
            args,
            env,
        } => {
            let argv = std::iter::once(command).chain(args).collect();
            let isolation = talos_core::command::Isolation::default();
            (
                name,
                Transport::Stdio {
                    argv,
                    env,
                    isolation,
                },
            )
        }
        EditorServer::Http { name, url, headers } => (
            name,
            Transport::Http {
                url,
                key: KeySource::None,
                headers,
            },
        ),
    };
    ServerDef {
        name,
        origin: "editor",
        transport,
        surface_always: false,
        trust_read_only_hints: false,
        timeout: Duration::from_secs(defaults.timeout_secs),
        max_output: defaults.max_output_bytes,
    }
}

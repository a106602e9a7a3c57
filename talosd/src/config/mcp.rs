//! `mcp:` (issue 28, item 2): the MCP servers talosd may connect, each under
//! `mcp.servers.NAME`, either a program it starts (`command`, stdio) or a streamable-HTTP
//! endpoint (`url`). The checks here refuse a server whose settings contradict each other; what
//! a server may do once connected is decided elsewhere (`crate::mcp`, the ladder).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Invalid;

/// The longest server name.
pub const MAX_SERVER_NAME: usize = 32;

/// `mcp:`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The servers by name (`[a-z0-9_-]{1,32}`).
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// One `mcp.servers.NAME`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpServerConfig {
    /// A stdio server: the program and its arguments (no shell).
    pub command: Vec<String>,
    /// A streamable-HTTP server: its endpoint.
    pub url: String,
    /// stdio only: the variables of talosd's environment the child gets; nothing else.
    pub env_allow: Vec<String>,
    /// stdio only: `network` and/or `writes`, as for command profiles.
    pub isolate: Vec<String>,
    /// url only: the environment variable holding the key sent as `Authorization: Bearer`.
    pub api_key_env: String,
    /// Whether the server's tools join every turn's surface or only when the request names them.
    pub surface: McpSurface,
    /// Whether a tool's `readOnlyHint` lets it into a read-only turn.
    pub trust_read_only_hints: bool,
    /// The limit of one call, in seconds.
    pub timeout_secs: u64,
    /// The most bytes of one call's result text kept.
    pub max_output_bytes: usize,
}

/// `mcp.servers.NAME.surface`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum McpSurface {
    /// Only when the request names the server or one of its tools.
    #[default]
    Named,
    /// In every turn's surface (still never in a read-only mode without trusted hints).
    Always,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: Vec::new(),
            url: String::new(),
            env_allow: Vec::new(),
            isolate: Vec::new(),
            api_key_env: String::new(),
            surface: McpSurface::Named,
            trust_read_only_hints: false,
            timeout_secs: 30,
            max_output_bytes: 64 * 1024,
        }
    }
}

/// Whether `name` is a usable server name (`[a-z0-9_-]{1,32}`).
pub fn usable_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-'))
}

impl McpConfig {
    /// The checks of every server; the first problem, naming the server and the key.
    pub(super) fn validate(&self) -> Result<(), Invalid> {
        for (name, server) in &self.servers {
            if !usable_server_name(name) {
                return Err(Invalid::Mcp(format!(
                    "mcp.servers: `{}` is not a usable server name; use a-z, 0-9, `_` and `-` (at most {MAX_SERVER_NAME})",
                    name.escape_debug()
                )));
            }
            server.problem().map_or(Ok(()), |p| {
                Err(Invalid::Mcp(format!("mcp.servers.{name}: {p}")))
            })?;
        }
        Ok(())
    }
}

impl McpServerConfig {
    /// What is wrong with this server's settings, if anything.
    fn problem(&self) -> Option<String> {
        let stdio = !self.command.is_empty();
        let http = !self.url.is_empty();
        if stdio == http {
            return Some(
                "give exactly one of command (a stdio server) and url (an HTTP server)".into(),
            );
        }
        if self.timeout_secs == 0 {
            return Some("timeout_secs must be at least 1".into());
        }
        if self.max_output_bytes == 0 {
            return Some("max_output_bytes must be at least 1".into());
        }
        if stdio {
            self.stdio_problem()
        } else {
            self.http_problem()
        }
    }

    fn stdio_problem(&self) -> Option<String> {
        if self
            .command
            .iter()
            .any(|a| a.is_empty() || a.contains('\0'))
        {
            return Some("command holds an empty argument".into());
        }
        if !self.api_key_env.is_empty() {
            return Some(
                "api_key_env is for url servers; a command server gets only env_allow".into(),
            );
        }
        if let Some(bad) = self.env_allow.iter().find(|n| !variable_name(n)) {
            return Some(format!(
                "env_allow `{}` is not a variable name",
                bad.escape_debug()
            ));
        }
        if let Some(bad) = self
            .isolate
            .iter()
            .find(|i| !matches!(i.as_str(), "network" | "writes"))
        {
            return Some(format!(
                "isolate `{}` is not known; use network and writes",
                bad.escape_debug()
            ));
        }
        None
    }

    fn http_problem(&self) -> Option<String> {
        if !self.env_allow.is_empty() || !self.isolate.is_empty() {
            return Some("env_allow and isolate are for command servers".into());
        }
        let url = match url::Url::parse(&self.url) {
            Ok(url) => url,
            Err(e) => return Some(format!("url `{}` is not a URL: {e}", self.url)),
        };
        match url.scheme() {
            "http" if super::is_loopback(&url) => None,
            "http" => Some(format!(
                "url `{}` is not a loopback address; plain http is for servers on this machine",
                self.url
            )),
            "https" => Some(format!(
                "url `{}`: https MCP servers are not supported yet; use http on this machine",
                self.url
            )),
            _ => Some(format!("url `{}` must use http", self.url)),
        }
    }

    /// `isolate` as the containment module takes it.
    pub fn isolation(&self) -> talos_core::command::Isolation {
        talos_core::command::Isolation {
            network: self.isolate.iter().any(|i| i == "network"),
            writes: self.isolate.iter().any(|i| i == "writes"),
        }
    }
}

fn variable_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    /// Proves each contradictory or unusable server setting is refused naming the server and
    /// the key, and a plain stdio or loopback http server is accepted.
    #[test]
    fn mcp_refusals_name_the_server_and_the_key() {
        let rows = [
            (
                "mcp:\n  servers:\n    Fs:\n      command: [x]\n",
                "mcp.servers: `Fs` is not a usable server name",
            ),
            (
                "mcp:\n  servers:\n    a: {}\n",
                "mcp.servers.a: give exactly one of command",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      url: http://127.0.0.1:1/\n",
                "mcp.servers.a: give exactly one",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      timeout_secs: 0\n",
                "mcp.servers.a: timeout_secs must be at least 1",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      max_output_bytes: 0\n",
                "mcp.servers.a: max_output_bytes must be at least 1",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x, \"\"]\n",
                "mcp.servers.a: command holds an empty argument",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      api_key_env: K\n",
                "mcp.servers.a: api_key_env is for url servers",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      env_allow: [\"A=B\"]\n",
                "mcp.servers.a: env_allow `A=B` is not a variable name",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      isolate: [disk]\n",
                "mcp.servers.a: isolate `disk` is not known",
            ),
            (
                "mcp:\n  servers:\n    a:\n      url: http://127.0.0.1:1/\n      env_allow: [HOME]\n",
                "mcp.servers.a: env_allow and isolate are for command servers",
            ),
            (
                "mcp:\n  servers:\n    a:\n      url: nope\n",
                "mcp.servers.a: url `nope` is not a URL",
            ),
            (
                "mcp:\n  servers:\n    a:\n      url: http://10.0.0.5/mcp\n",
                "mcp.servers.a: url `http://10.0.0.5/mcp` is not a loopback address",
            ),
            (
                "mcp:\n  servers:\n    a:\n      url: https://mcp.example/mcp\n",
                "https MCP servers are not supported yet",
            ),
            (
                "mcp:\n  servers:\n    a:\n      url: ftp://127.0.0.1/\n",
                "mcp.servers.a: url `ftp://127.0.0.1/` must use http",
            ),
            (
                "mcp:\n  servers:\n    a:\n      command: [x]\n      surface: sometimes\n",
                "unknown variant `sometimes`",
            ),
        ];
        for (text, want) in rows {
            let error = Config::parse(text, "c").unwrap_err().to_string();
            assert!(error.contains(want), "{text:?}: {error}");
        }
        let good = "mcp:\n  servers:\n    fs:\n      command: [npx, server]\n      env_allow: [HOME]\n      isolate: [network]\n      surface: always\n    web_1:\n      url: http://127.0.0.1:3001/mcp\n      api_key_env: K\n";
        let config = Config::parse(good, "c").unwrap();
        assert_eq!(config.mcp.servers["fs"].timeout_secs, 30);
        assert!(config.mcp.servers["fs"].isolation().network);
    }
}

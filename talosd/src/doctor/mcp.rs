//! `talos doctor`'s check of each configured MCP server (issue 28, item 2): started (or
//! reached) and its tools listed within a few seconds, in the folder the doctor runs in; how many
//! tools it offers, how many were skipped, and containment asked for and not granted.

use std::time::Duration;

use super::{Check, Status};
use crate::config::Config;
use crate::mcp::{McpHub, Scope};

/// How long one server may take to start and list its tools.
const PROBE_TIME: Duration = Duration::from_secs(10);

/// One check per configured server (none when there are none).
pub fn checks(config: &Config) -> Vec<Check> {
    if config.mcp.servers.is_empty() {
        return Vec::new();
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return vec![Check::new(
                "mcp",
                Status::Warn,
                format!("not checked: {e}"),
                "",
            )];
        }
    };
    let hub = McpHub::new(&config.mcp);
    let scope = Scope {
        session_id: "doctor".into(),
        workspace: std::env::current_dir().unwrap_or_else(|_| std::env::temp_dir()),
    };
    runtime.block_on(async {
        let mut checks = Vec::new();
        for name in config.mcp.servers.keys() {
            let probe = tokio::time::timeout(PROBE_TIME, hub.probe(&scope, name)).await;
            checks.push(verdict(
                name,
                probe.unwrap_or_else(|_| {
                    Err(format!(
                        "mcp.{name}: no tool listing within {} s",
                        PROBE_TIME.as_secs()
                    ))
                }),
            ));
        }
        hub.shutdown().await;
        checks
    })
}

/// The verdict on one server's probe: its listing and missing containment, or why it failed.
fn verdict(name: &str, probe: Result<(crate::mcp::Listing, String), String>) -> Check {
    match probe {
        Err(e) => Check::new(
            "mcp",
            Status::Fail,
            e,
            "check mcp.servers in config.yaml (the command, its env_allow, the url); talosd's log has the server's stderr",
        ),
        Ok((listing, uncontained)) => {
            let mut detail = format!(
                "mcp.servers.{name}: {} tools, {} skipped",
                listing.tools.len(),
                listing.skipped.len()
            );
            if !uncontained.is_empty() {
                detail.push_str(&format!("; uncontained: {uncontained}"));
            }
            let status = if uncontained.is_empty() && listing.skipped.is_empty() {
                Status::Ok
            } else {
                Status::Warn
            };
            Check::new(
                "mcp",
                status,
                detail,
                "skipped tools have unusable names; containment depends on the kernel (docs/extensions.md)",
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_rows() {
        let listing = |skipped: usize| crate::mcp::Listing {
            tools: Vec::new(),
            skipped: vec![String::new(); skipped],
        };
        let rows = [
            (
                Ok((listing(0), String::new())),
                Status::Ok,
                "mcp.servers.a: 0 tools, 0 skipped",
            ),
            (Ok((listing(1), String::new())), Status::Warn, "1 skipped"),
            (
                Ok((listing(0), "network".into())),
                Status::Warn,
                "uncontained: network",
            ),
            (
                Err("mcp.a: cannot connect: x".into()),
                Status::Fail,
                "cannot connect",
            ),
        ];
        for (probe, status, detail) in rows {
            let check = verdict("a", probe);
            assert_eq!(check.status, status);
            assert!(check.detail.contains(detail), "{}", check.detail);
        }
    }
}

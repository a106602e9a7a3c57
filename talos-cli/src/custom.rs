//! Custom commands from the CLI's side (issue 28): `/NAME [args]` in the interactive session and
//! in an editor's prompt is expanded by the daemon (`command/expand`) into the request it makes,
//! which then runs as any typed request; `command/list` says which exist and where each is from.

use talos_protocol::{
    COMMAND_EXPAND, COMMAND_LIST, CommandExpandParams, CommandExpandResult, CommandListParams,
    CommandListResult,
};

use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;

/// `/NAME rest`: the name (a usable command name) and what follows it, else `None`.
pub fn split(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('/')?;
    let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let usable = (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    usable.then_some((name, arguments.trim()))
}

/// The session's custom commands.
pub fn list(client: &mut Client, session_id: &str) -> Result<CommandListResult, Failure> {
    let raw = client.call(
        COMMAND_LIST,
        params(serde_json::to_value(CommandListParams {
            session_id: session_id.to_string(),
        })),
        &mut ignore_messages,
    )?;
    serde_json::from_value(raw)
        .map_err(|e| Failure::Connection(format!("invalid {COMMAND_LIST} result: {e}")))
}

/// The request `/name arguments` makes.
pub fn expand(
    client: &mut Client,
    session_id: &str,
    name: &str,
    arguments: &str,
) -> Result<CommandExpandResult, Failure> {
    let raw = client.call(
        COMMAND_EXPAND,
        params(serde_json::to_value(CommandExpandParams {
            session_id: session_id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        })),
        &mut ignore_messages,
    )?;
    serde_json::from_value(raw)
        .map_err(|e| Failure::Connection(format!("invalid {COMMAND_EXPAND} result: {e}")))
}

/// The lines `/commands` (and `/help`) show: one per command, with where it is from.
pub fn lines(listed: &CommandListResult) -> Vec<String> {
    let mut out: Vec<String> = listed
        .commands
        .iter()
        .map(|c| {
            let from = if c.source == "workspace" {
                "from the workspace (.talos/commands)"
            } else {
                "yours"
            };
            let ignored = if c.ignored.is_empty() {
                String::new()
            } else {
                format!("; ignored: {}", c.ignored.join(", "))
            };
            let usage = format!("/{} [args]", c.name);
            format!(
                "  {usage:<44} {} ({from}{ignored})",
                crate::render::printable_line(&c.description)
            )
        })
        .collect();
    out.extend(
        listed
            .problems
            .iter()
            .map(|p| format!("  (not offered: {})", crate::render::printable_line(p))),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_a_command_only_with_a_usable_name() {
        assert_eq!(
            split("/review src/lib.rs now"),
            Some(("review", "src/lib.rs now"))
        );
        assert_eq!(split("/review"), Some(("review", "")));
        assert_eq!(split("/etc/hosts is odd"), None);
        assert_eq!(split("/Review"), None);
        assert_eq!(split("review"), None);
    }
}

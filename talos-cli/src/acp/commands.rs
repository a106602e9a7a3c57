//! Custom commands in an editor (issue 28): after `session/new` and `session/load` the editor is
//! told the session's commands (`available_commands_update`, each saying whether it comes from
//! the workspace), and a prompt that starts with `/NAME` is the request that command makes.

use agent_client_protocol_schema::v1::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use super::Bridge;
use crate::client::Client;
use crate::failure::Failure;

impl Bridge {
    /// Sends the session's custom commands to the editor (nothing when there are none, or
    /// the daemon cannot say).
    pub(super) fn announce_commands(&self, acp_id: &str) {
        let Some(session) = self.session(acp_id) else {
            return;
        };
        let Ok(mut client) = self.connect() else {
            return;
        };
        let Ok(listed) = crate::custom::list(&mut client, &session.talos_id) else {
            return;
        };
        if listed.commands.is_empty() {
            return;
        }
        let commands = listed
            .commands
            .iter()
            .map(|c| {
                let from = if c.source == "workspace" {
                    " (from the workspace's .talos/commands)"
                } else {
                    ""
                };
                AvailableCommand::new(c.name.clone(), format!("{}{from}", c.description)).input(
                    AvailableCommandInput::Unstructured(UnstructuredCommandInput::new("arguments")),
                )
            })
            .collect();
        self.update(
            acp_id,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
        );
    }
}

/// The request a prompt makes: a custom command's expansion when it starts with `/NAME` for a
/// command the session has (with a line saying so), else the text as typed.
pub(super) fn request_of(
    client: &mut Client,
    talos_id: &str,
    text: &str,
) -> Result<(String, Option<String>), Failure> {
    let Some((name, arguments)) = crate::custom::split(text) else {
        return Ok((text.to_string(), None));
    };
    match crate::custom::expand(client, talos_id, name, arguments) {
        Ok(expanded) => {
            let from = if expanded.source == "workspace" {
                "a workspace command"
            } else {
                "your command"
            };
            let note = format!("[/{name} is {from}; it asks: {}]\n\n", expanded.request);
            Ok((expanded.request, Some(note)))
        }
        Err(Failure::Rpc(e)) if e.code == talos_protocol::ErrorCode::InvalidParams.code() => {
            Ok((text.to_string(), None))
        }
        Err(other) => Err(other),
    }
}

//! A workspace's custom commands (`/NAME [args]`): `command/list` and `command/expand`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `command/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandListParams {
    /// The session whose workspace's commands (and the user's) are listed.
    pub session_id: String,
}

/// One custom command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomCommand {
    /// Run as `/NAME [args]`.
    pub name: String,
    /// `workspace` (`.talos/commands/NAME.md`: text someone else may have written) or `user`
    /// (`commands/NAME.md` in the Talos config dir).
    pub source: String,
    /// Its front matter's `description`, else its first line.
    pub description: String,
    /// Front-matter keys that were ignored: a command is only text (it cannot set a mode, a
    /// surface or a rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// The result of `command/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandListResult {
    /// Sorted by name; the user's command wins a name both have.
    pub commands: Vec<CustomCommand>,
    /// Why each command file that was found is not offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Params of `command/expand`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandExpandParams {
    /// The session whose commands are meant.
    pub session_id: String,
    /// The command's name, without the `/`.
    pub name: String,
    /// What followed the name; it replaces each `$ARGUMENTS`.
    #[serde(default)]
    pub arguments: String,
}

/// The result of `command/expand`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExpandResult {
    /// The request to send as a turn's prompt.
    pub request: String,
    /// `workspace` or `user`.
    pub source: String,
}

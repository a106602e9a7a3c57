//! The params and results of the methods that let a session outlive a turn or a daemon:
//! `turn/cancel` stops the running turn, `session/resume` reopens a persisted session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SessionInfo;

/// Params of `turn/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnCancelParams {
    /// The session whose running turn is cancelled.
    pub session_id: String,
}

/// The result of `turn/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnCancelResult {
    /// `true` when a turn was running and was told to stop (its `turn/start` then answers with
    /// status `CANCELLED`); `false` when no turn ran (it had already ended).
    pub cancelled: bool,
}

/// Params of `session/resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionResumeParams {
    /// The persisted session to reopen.
    pub session_id: String,
    /// MCP servers the editor offers for it (as in `session/new`), replacing any it had.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<crate::EditorMcpServer>,
}

/// The result of `session/resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionResumeResult {
    /// The session as `session/list` shows it.
    pub session: SessionInfo,
    /// `true` when it was read from its file now; `false` when it was already open.
    pub loaded: bool,
}

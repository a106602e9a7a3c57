//! One instruction file a turn used ([`InstructionFile`]), as the turn events, the trace
//! record and `session/list` name it. A leaf: it names nothing else in the crate (re-exported
//! from `event`, where it was first published).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One instruction file a turn used (events, traces, `session/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstructionFile {
    /// Workspace-relative (`AGENTS.md`, `src/AGENTS.md`), or the file's path under the Talos
    /// config dir for the user-wide one.
    pub path: String,
    /// `workspace` or `user`.
    pub origin: String,
    /// `sha256:<hex>` of the whole file as read.
    pub sha256: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// How many of its bytes were sent (fewer when `instructions.max_bytes` cut it).
    pub sent_bytes: u64,
}

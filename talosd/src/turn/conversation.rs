//! The model conversation of a turn, kept after the tool loop so that the one web repair
//! round goes on with it (`model_loop::repair`).

use serde_json::Value;
use talos_core::prompt::ToolCalling;

/// The messages so far, the call mode, and the index of the next model call.
pub struct Conversation {
    pub messages: Vec<Value>,
    pub calling: ToolCalling,
    pub next: usize,
    /// What the decoding constraint knows besides the plan (issue 15).
    pub aid: super::constraint::Aid,
}

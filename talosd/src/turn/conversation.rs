//! The model conversation of a turn, kept after the tool loop so that the one web repair
//! round goes on with it (`model_loop::repair`), and what the decoding constraint knows
//! besides the plan (`constraint.rs`).

use serde_json::Value;
use talos_core::constrain::Level;
use talos_core::prompt::ToolCalling;

/// The messages so far, the call mode, and the index of the next model call.
pub struct Conversation {
    pub messages: Vec<Value>,
    pub calling: ToolCalling,
    pub next: usize,
    /// What the decoding constraint knows besides the plan (issue 15).
    pub aid: Aid,
}

/// What the constraint knows besides the plan.
#[derive(Debug, Default)]
pub struct Aid {
    pub level: Option<Level>,
    /// Named files that exist (expected and evidence targets).
    pub readable: Vec<String>,
    /// Files and their text as this turn read them.
    pub read_texts: Vec<(String, String)>,
    /// The last request carried a schema: a reply that is exactly `{"answer": …}` can only
    /// be its answer variant, and is read as prose.
    pub constrained: bool,
}

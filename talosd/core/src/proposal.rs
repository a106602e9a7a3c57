//! A proposed call: from the model's reply to a decision. The pre-approval checks, rules and
//! the permission ladder, hooks and MCP tools, loop discipline, what a change must hold, the
//! decoding constraint of the next reply, and the read view.

pub mod change_rule;
pub mod check;
pub mod constrain;
pub mod discipline;
pub mod hooks;
pub mod ladder;
pub mod mcp;
pub mod rules;
pub mod view;

//! A proposed call: from the model's reply to a decision. The tool catalogue, calls written as
//! text, path text, protected paths and deceptive characters, the pre-approval checks, rules and
//! the permission ladder, hooks and MCP tools, loop discipline, sanitising, the diff preview,
//! edits and what a change must hold, typed operations, command plans and the read view.

pub mod change_rule;
pub mod check;
pub mod command;
pub mod deceptive;
pub mod diff;
pub mod discipline;
pub mod edit;
pub mod hooks;
pub mod ladder;
pub mod mcp;
pub mod ops;
pub mod pathname;
pub mod protected;
pub mod rules;
pub mod sanitize;
pub mod textcall;
pub mod tools;
pub mod view;

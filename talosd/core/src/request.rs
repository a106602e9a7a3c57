//! The request: what a person asked, as a task contract. The contract and its targets, the
//! roles of each target, follow-ups that inherit an earlier contract (and the outcomes they
//! read), the task vocabulary and phases, and the text a turn reads beside the request (project
//! instructions, custom commands).

pub mod change;
pub mod contract;
pub mod custom_command;
pub mod history;
pub mod instructions;
pub mod intent;
pub mod outcome;
pub mod phase;
pub mod targets;
pub mod task;

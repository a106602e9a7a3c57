//! The request: what a person asked, as a task contract. The contract and its targets
//! over the lexical toolkit, the roles of each target, follow-ups that inherit an earlier
//! contract, the task vocabulary and phases, session modes, and the text a turn reads beside the
//! request (project instructions, custom commands).

pub mod contract;
pub mod custom_command;
pub mod history;
pub mod instructions;
pub mod intent;
pub(crate) mod lexical;
pub mod modes;
pub mod phase;
pub mod targets;
pub mod task;

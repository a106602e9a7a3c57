//! talos-core: the deterministic runtime of Talos, pure.
//!
//! It takes values and returns values. The task contract, the posture, the turn plan, the
//! tool catalogue and surface, tool-call parsing, the pre-approval checks, the permission
//! ladder, the diff preview, write verification and the outcome classification all live here,
//! so each can be pinned by table-driven tests. No IO, no clock, no environment, no process,
//! no async runtime: the daemon (`talosd`) performs every effect and passes the facts in.

pub mod activation;
pub mod budget;
pub mod change_rule;
pub mod check;
pub mod command;
pub mod constrain;
pub mod contract;
pub mod custom_command;
pub mod deceptive;
pub mod diff;
pub mod digest;
pub mod discipline;
pub mod edit;
pub mod guard;
pub mod history;
pub mod hooks;
pub mod instructions;
pub mod intent;
pub mod ladder;
pub(crate) mod lexical;
pub mod mcp;
pub mod modes;
pub mod ops;
pub mod outcome;
pub mod pathname;
pub mod phase;
pub mod plan;
pub mod posture;
pub mod prompt;
pub mod protected;
pub mod restore;
pub mod retention;
pub mod retrieval;
pub mod rules;
pub mod sanitize;
pub mod streamfilter;
pub mod surface;
pub mod targets;
pub mod task;
pub mod textcall;
pub mod tools;
pub mod turn;
pub mod view;

//! talos-core: the deterministic runtime of Talos, pure.
//!
//! It takes values and returns values. The task contract, the posture, the turn plan, the
//! tool catalogue and surface, tool-call parsing, the pre-approval checks, the permission
//! ladder, the diff preview, write verification and the outcome classification all live here,
//! so each can be pinned by table-driven tests. No IO, no clock, no environment, no process,
//! no async runtime: the daemon (`talosd`) performs every effect and passes the facts in.

// By what a turn meets, in order (docs/architecture.md): the request, the plan, each proposed
// call, the turn that drives them, and its end.
pub mod request;

pub mod planning;

pub mod proposal;

pub mod turn;

pub mod ending;

/// Outside any turn: how the daemon is started.
pub mod activation;

// The paths the daemon, the CLI and the tests use (`talos_core::contract`, ...), kept as they
// were before the modules were grouped into the folders above (issue 30, item 6).
pub use ending::{digest, guard, outcome, restore, retention, streamfilter};
pub use planning::{budget, constrain, plan, posture, prompt, retrieval, surface};
pub use proposal::{
    change_rule, check, command, deceptive, diff, discipline, edit, hooks, ladder, mcp, ops,
    pathname, protected, rules, sanitize, textcall, tools, view,
};
pub use request::{
    contract, custom_command, history, instructions, intent, modes, phase, targets, task,
};

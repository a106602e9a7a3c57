//! talos-core: the deterministic runtime of Talos, pure.
//!
//! It takes values and returns values. The task contract, the posture, the turn plan, the
//! tool catalogue and surface, tool-call parsing, the pre-approval checks, the permission
//! ladder, the diff preview, write verification and the outcome classification all live here,
//! so each can be pinned by table-driven tests. No IO, no clock, no environment, no process,
//! no async runtime: the daemon (`talosd`) performs every effect and passes the facts in.

// By what a turn meets, in order (docs/architecture.md), after the text every stage reads: each
// folder names only those before it (tests/tests/tidy/layering.rs), and the turn, which drives
// them all, names any.
pub mod text;

pub mod request;

pub mod planning;

pub mod proposal;

pub mod ending;

pub mod turn;

/// Outside any turn: how the daemon is started.
pub mod activation;

/// Outside any turn: which managed model server a turn uses, starts or stops.
pub mod model_room;

// The paths the daemon, the CLI and the tests use (`talos_core::contract`, ...), kept as they
// were before the modules were grouped into the folders above (issue 30, item 6).
pub use ending::{guard, restore, retention};
pub use planning::{budget, command, modes, ops, plan, posture, prompt, retrieval, surface, tools};
pub use proposal::{change_rule, check, constrain, discipline, hooks, ladder, mcp, rules, view};
pub use request::{
    change, contract, custom_command, history, instructions, intent, outcome, phase, targets, task,
};
pub use text::{
    deceptive, diff, digest, edit, pathname, protected, sanitize, streamfilter, textcall,
};

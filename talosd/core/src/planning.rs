//! The plan: what a turn may do, from its contract. Session modes and the posture each caps,
//! the turn plan, the tool catalogue and the surface of tools per phase, typed operations and
//! command plans, the system prompt, the context budget, and what the index retrieves.

pub mod budget;
pub mod command;
pub mod modes;
pub mod ops;
pub mod plan;
pub mod posture;
pub mod prompt;
pub mod retrieval;
pub mod surface;
pub mod tools;

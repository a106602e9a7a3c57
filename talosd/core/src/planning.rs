//! The plan: what a turn may do, from its contract. The posture a mode caps, the turn plan,
//! the surface of tools per phase, the system prompt, the context budget, the decoding
//! constraint of the next reply, and what the index retrieves.

pub mod budget;
pub mod constrain;
pub mod plan;
pub mod posture;
pub mod prompt;
pub mod retrieval;
pub mod surface;

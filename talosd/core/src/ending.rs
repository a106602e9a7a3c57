//! The end of a turn and after: answer guards, restores of checkpoints and retention of the
//! home's records.

pub mod external;
pub mod guard;
pub mod restore;
pub mod retention;

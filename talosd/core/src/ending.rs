//! The end of a turn and after: outcomes decided from the records, answer guards, digests,
//! the stream filter, restores of checkpoints and retention of the home's records.

pub mod digest;
pub mod guard;
pub mod outcome;
pub mod restore;
pub mod retention;
pub mod streamfilter;

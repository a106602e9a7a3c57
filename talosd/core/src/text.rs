//! Text, the ground every stage stands on: the lexical toolkit, path text, protected paths and
//! deceptive characters, digests, the diff preview, sanitising, edits, calls written as text and
//! the stream filter. These name no other folder.

pub mod assignment;
pub mod deceptive;
pub mod diff;
pub mod digest;
pub mod edit;
pub(crate) mod lexical;
pub mod pathname;
pub mod protected;
pub mod sanitize;
pub mod streamfilter;
pub mod textcall;

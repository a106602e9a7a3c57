//! The wire between `talosd` and its clients.
//!
//! JSON-RPC 2.0, one compact JSON message per line, over a local socket. This crate owns
//! the envelope ([`rpc`]), every method's params and results ([`methods`]) and a request as
//! one typed value ([`request`]), the closed set of turn events ([`event`]), the trace record
//! written for each turn ([`trace`]), the words those three share ([`verdict`],
//! [`instructions`]), the rule for where the daemon's socket is by default ([`socket`]), how a
//! Talos man page is finished ([`manpage`], text only), and generates the JSON Schema of all of
//! it ([`schema`], committed under `protocol/schema/`).
//! It depends on serde, serde_json and schemars only and does no IO, so any client can reuse it
//! without pulling in the daemon. `tests/wire/examples.rs` round-trips a JSON fixture of every
//! method, event kind and trace record, and decodes every example in `docs/protocol.md`;
//! `tests/wire/schema.rs` checks the committed schema is current and validates every fixture with it.

#![warn(missing_docs)]

pub mod event;
pub mod instructions;
pub mod manpage;
pub mod methods;
pub mod request;
pub mod rpc;
pub mod schema;
pub mod socket;
pub mod time;
pub mod trace;
pub mod verdict;

pub use event::{CallStatus, InstructionFile, PlanStep, TurnEvent, TurnEventParams};
pub use methods::*;
pub use request::{Request, RequestError};
pub use rpc::{ErrorCode, Message, RpcError};

/// The protocol version returned by `initialize`. Changes after a release are additive.
pub const PROTOCOL_VERSION: u32 = 1;

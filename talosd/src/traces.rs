//! The trace writer: one JSON document per turn under `traces/<sessionId>/`, and beside it, when
//! `traces.turn_log` is on, the turn log (`turnlog`): the request and the committed answer in
//! plain text. The trace is evidence for review, not an integrity guarantee; it is a plain file
//! and is not tamper-evident. `listing` reads both back for `trace/list` and `trace/get`.
pub mod listing;
pub mod requests;
pub mod turnlog;

use std::path::PathBuf;

use crate::home::{Durability, Store};

use talos_protocol::trace::TraceRecord;

pub use turnlog::TurnText;

/// Writes the trace and, when `turn_log` is given, the turn log beside it; returns the trace's
/// path. A turn log that cannot be written is logged and does not fail the trace. Both are new
/// files written unsynced: the turn syncs the home once, before it reports the outcome
/// (`home::Store::sync_filesystem`; home.rs says why that keeps every guarantee).
pub fn write(
    traces: &Store,
    record: &TraceRecord,
    turn_log: Option<&TurnText<'_>>,
) -> std::io::Result<PathBuf> {
    // A real folder of the home, never a planted link out of it (issue 26): the store refuses
    // a link at any position.
    let dir = traces.child(&record.session_id);
    let stem = format!("{:06}-{}", record.turn_number, record.trace_id);
    let name = format!("{stem}.json");
    let json = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    dir.write(&name, &json, Durability::None)?;
    if let Some(text) = turn_log {
        let log = format!("{stem}.{}", turnlog::EXTENSION);
        let rendered = turnlog::render(record, text);
        if let Err(e) = dir.write(&log, rendered.as_bytes(), Durability::None) {
            tracing::error!(error = %e, trace = %record.trace_id, "cannot write turn log");
        }
    }
    Ok(dir.shown(&name))
}

/// Writes a turn's trace (and its turn log when `traces.turn_log` is on), off the async
/// workers; the trace's path, or `None` when it could not be written (logged).
pub fn write_turn(
    (traces, turn_log): (&Store, bool),
    trace: &TraceRecord,
    workspace: &std::path::Path,
    (request, answer): (&str, &str),
) -> Option<String> {
    let workspace = workspace.display().to_string();
    let turn_log = turn_log.then_some(TurnText {
        request,
        answer,
        workspace: &workspace,
    });
    let written = crate::offload::blocking(|| write(traces, trace, turn_log.as_ref()));
    match written {
        Ok(path) => Some(path.display().to_string()),
        Err(e) => {
            tracing::error!(error = %e, "cannot write trace");
            None
        }
    }
}

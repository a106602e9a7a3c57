//! The trace writer: one JSON document per turn under `traces/<sessionId>/`, and beside it, when
//! `traces.turn_log` is on, the turn log (`turnlog`): the request and the committed answer in
//! plain text. The trace is evidence for review, not an integrity guarantee; it is a plain file
//! and is not tamper-evident. `listing` reads both back for `trace/list` and `trace/get`.
// std::fs here: writes traces under the Talos home, never a workspace file.
#![allow(clippy::disallowed_methods)]

pub mod listing;
pub mod requests;
pub mod turnlog;

use std::path::PathBuf;

use talos_protocol::trace::TraceRecord;

pub use turnlog::TurnText;

/// Writes the trace and, when `turn_log` is given, the turn log beside it; returns the trace's
/// path. A turn log that cannot be written is logged and does not fail the trace. Both are new
/// files written unsynced: the turn syncs the home once, before it reports the outcome
/// (`durable::sync_filesystem`; durable.rs says why that keeps every guarantee).
pub fn write(
    traces_root: &std::path::Path,
    record: &TraceRecord,
    turn_log: Option<&TurnText<'_>>,
) -> std::io::Result<PathBuf> {
    let dir = traces_root.join(&record.session_id);
    // A real folder of the home, never a planted link out of it (issue 26).
    crate::home_files::real_dir(traces_root, &dir)?;
    let stem = format!("{:06}-{}", record.turn_number, record.trace_id);
    let path = dir.join(format!("{stem}.json"));
    let json = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    crate::durable::write_unsynced(&path, &json)?;
    if let Some(text) = turn_log {
        let log = dir.join(format!("{stem}.{}", turnlog::EXTENSION));
        if let Err(e) =
            crate::durable::write_unsynced(&log, turnlog::render(record, text).as_bytes())
        {
            tracing::error!(error = %e, trace = %record.trace_id, "cannot write turn log");
        }
    }
    Ok(path)
}

/// Writes a turn's trace (and its turn log when `traces.turn_log` is on), off the async
/// workers; the trace's path, or `None` when it could not be written (logged).
pub fn write_turn(
    (traces, turn_log): (&std::path::Path, bool),
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

//! The trace writer: one JSON document per turn under `traces/<sessionId>/`. The trace is
//! evidence for review, not an integrity guarantee; it is a plain file and is not
//! tamper-evident.
// std::fs here: writes traces under the Talos home, never a workspace file.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;

use talos_protocol::trace::TraceRecord;

pub fn write(traces_root: &std::path::Path, record: &TraceRecord) -> std::io::Result<PathBuf> {
    let dir = traces_root.join(&record.session_id);
    if !dir.is_dir() {
        std::fs::create_dir_all(&dir)?;
        // The new session folder's own entry must survive a power loss too.
        crate::durable::sync_directory(traces_root)?;
    }
    let path = dir.join(format!(
        "{:06}-{}.json",
        record.turn_number, record.trace_id
    ));
    let json = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    crate::durable::replace(&path, &json)?;
    Ok(path)
}

//! Reading traces back for `trace/list` and `trace/get`. Ids from a request are checked for
//! their exact shape (`trc-` / `ses-` + 32 lowercase hex) and then only compared with the names
//! of entries listed under `traces/`, never joined into a path; entries are read without
//! following symlinks, and anything that is not a regular file or folder is skipped.

use std::io::Read;

use talos_protocol::trace::TraceRecord;
use talos_protocol::{TraceGetResult, TraceSummary};

use super::turnlog;
use crate::home::Store;
use crate::workspace::EntryKind;

/// A trace or turn log larger than this is not read (traces are a few KiB).
const MAX_READ_BYTES: u64 = 64 << 20;

/// Which turns `trace/list` wants.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this session's folder.
    pub session_id: Option<String>,
    /// Only traces whose `workspaceHash` is this.
    pub workspace_hash: Option<String>,
}

/// One trace file on disk, before it is read.
#[derive(Debug, Clone)]
pub struct TraceFile {
    pub session_id: String,
    /// The session's folder and the trace's name in it.
    pub folder: Store,
    pub name: String,
    pub modified_ms: u64,
}

/// Whether `id` is `prefix-` followed by exactly 32 lowercase hex digits.
pub fn valid_id(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|hex| {
            hex.len() == 32
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// The newest turns matching `filter`, at most `limit`, newest first.
pub fn list(traces_root: &Store, filter: &Filter, limit: usize) -> Vec<TraceSummary> {
    let mut files = trace_files(traces_root, filter.session_id.as_deref());
    files.sort_by(|a, b| {
        (b.modified_ms, &b.session_id, &b.name).cmp(&(a.modified_ms, &a.session_id, &a.name))
    });
    let mut found = Vec::new();
    for file in files {
        if found.len() >= limit {
            break;
        }
        let Some(record) = read_record(&file.folder, &file.name) else {
            continue;
        };
        if filter
            .workspace_hash
            .as_ref()
            .is_some_and(|hash| *hash != record.workspace_hash)
        {
            continue;
        }
        let request = read_text(&file.folder, &log_name(&file.name))
            .and_then(|log| turnlog::first_request_line(&log));
        found.push(TraceSummary {
            trace_id: record.trace_id,
            session_id: record.session_id,
            turn_number: record.turn_number,
            started_at_ms: record.started_at_ms,
            finished_at_ms: record.finished_at_ms,
            mode: record.mode,
            status: record.outcome.status,
            classification: record.outcome.classification,
            request,
        });
    }
    found.sort_by(|a, b| {
        (b.finished_at_ms, b.started_at_ms).cmp(&(a.finished_at_ms, a.started_at_ms))
    });
    found
}

/// The trace with this id (already checked by [`valid_id`]) and its turn log, if kept.
pub fn get(traces_root: &Store, trace_id: &str) -> Option<TraceGetResult> {
    let suffix = format!("-{trace_id}.json");
    let file = trace_files(traces_root, None)
        .into_iter()
        .find(|file| file.name.ends_with(&suffix))?;
    let trace = read_record(&file.folder, &file.name)?;
    let turn_log = read_text(&file.folder, &log_name(&file.name));
    Some(TraceGetResult { trace, turn_log })
}

/// Every trace file (`*.json`, not hidden) in the session folders under `traces_root`, or in
/// the one folder named `session_id`.
pub fn trace_files(traces_root: &Store, session_id: Option<&str>) -> Vec<TraceFile> {
    let mut out = Vec::new();
    for session in traces_root.names(".", EntryKind::Directory) {
        if session_id.is_some_and(|wanted| wanted != session) {
            continue;
        }
        let folder = traces_root.child(&session);
        for name in folder.names(".", EntryKind::File) {
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            let modified_ms = folder.stamp(&name).map_or(0, |stamp| stamp.modified_ms);
            out.push(TraceFile {
                session_id: session.clone(),
                folder: folder.clone(),
                name,
                modified_ms,
            });
        }
    }
    out
}

/// The turn log's name beside the trace `name`.
fn log_name(name: &str) -> String {
    let stem = name.strip_suffix(".json").unwrap_or(name);
    format!("{stem}.{}", turnlog::EXTENSION)
}

fn read_record(folder: &Store, name: &str) -> Option<TraceRecord> {
    serde_json::from_str(&read_text(folder, name)?).ok()
}

/// The text of the regular file `name` in `folder` (at most 64 MiB), never through a link.
pub fn read_text(folder: &Store, name: &str) -> Option<String> {
    let (file, stamp) = folder.open_regular(name).ok()?;
    if stamp.size > MAX_READ_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_READ_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
// std::fs in the tests: hostile homes are built by path.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_ids_are_valid() {
        let good = "trc-0123456789abcdef0123456789abcdef";
        for (id, expected) in [
            (good, true),
            ("trc-0123456789ABCDEF0123456789abcdef", false),
            ("trc-0123456789abcdef0123456789abcde", false),
            ("trc-0123456789abcdef0123456789abcdef0", false),
            ("ses-0123456789abcdef0123456789abcdef", false),
            ("trc-../../../../etc/passwd", false),
            ("trc-0123456789abcdef/123456789abcdef", false),
            ("trc-0123456789abcdef\u{0}123456789abcdef", false),
            ("../trc-0123456789abcdef0123456789abcdef", false),
            ("", false),
        ] {
            assert_eq!(valid_id("trc", id), expected, "{id:?}");
        }
        assert!(valid_id("ses", "ses-0123456789abcdef0123456789abcdef"));
    }

    #[test]
    fn a_symlinked_trace_or_session_folder_is_not_read() {
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let traces = home.path().join("traces");
        std::fs::create_dir_all(traces.join("ses-a")).unwrap();
        std::fs::write(outside.path().join("000001-trc-x.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path(), traces.join("ses-link")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("000001-trc-x.json"),
            traces.join("ses-a/000002-trc-y.json"),
        )
        .unwrap();
        let paths = crate::paths::Home::from_root(home.path());
        assert!(trace_files(&paths.traces(), None).is_empty());
        let linked_root = home.path().join("traces-link");
        std::os::unix::fs::symlink(&traces, &linked_root).unwrap();
        std::fs::write(traces.join("ses-a/000003-trc-z.json"), "{}").unwrap();
        assert_eq!(trace_files(&paths.traces(), None).len(), 1);
        assert!(
            trace_files(&paths.state_store().child("traces-link"), None).is_empty(),
            "a symlinked traces folder"
        );
        assert_eq!(
            read_text(&paths.traces().child("ses-a"), "000002-trc-y.json"),
            None
        );
    }
}

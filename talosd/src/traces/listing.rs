//! Reading traces back for `trace/list` and `trace/get`. Ids from a request are checked for
//! their exact shape (`trc-` / `ses-` + 32 lowercase hex) and then only compared with the names
//! of entries listed under `traces/`, never joined into a path; entries are read without
//! following symlinks, and anything that is not a regular file or folder is skipped.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use talos_protocol::trace::TraceRecord;
use talos_protocol::{TraceGetResult, TraceSummary};

use super::turnlog;

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
    pub path: PathBuf,
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
pub fn list(traces_root: &Path, filter: &Filter, limit: usize) -> Vec<TraceSummary> {
    let mut files = trace_files(traces_root, filter.session_id.as_deref());
    files.sort_by(|a, b| (b.modified_ms, &b.path).cmp(&(a.modified_ms, &a.path)));
    let mut found = Vec::new();
    for file in files {
        if found.len() >= limit {
            break;
        }
        let Some(record) = read_record(&file.path) else {
            continue;
        };
        if filter
            .workspace_hash
            .as_ref()
            .is_some_and(|hash| *hash != record.workspace_hash)
        {
            continue;
        }
        let request = read_text(&file.path.with_extension(turnlog::EXTENSION))
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
pub fn get(traces_root: &Path, trace_id: &str) -> Option<TraceGetResult> {
    let suffix = format!("-{trace_id}.json");
    let file = trace_files(traces_root, None).into_iter().find(|file| {
        file.path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().ends_with(&suffix))
    })?;
    let trace = read_record(&file.path)?;
    let turn_log = read_text(&file.path.with_extension(turnlog::EXTENSION));
    Some(TraceGetResult { trace, turn_log })
}

/// Every trace file (`*.json`, not hidden) in the session folders under `traces_root`, or in
/// the one folder named `session_id`.
pub fn trace_files(traces_root: &Path, session_id: Option<&str>) -> Vec<TraceFile> {
    let mut out = Vec::new();
    for (session, dir) in entries(traces_root, true) {
        if session_id.is_some_and(|wanted| wanted != session) {
            continue;
        }
        for (name, path) in entries(&dir, false) {
            if name.starts_with('.') || !name.ends_with(".json") {
                continue;
            }
            let modified_ms = std::fs::symlink_metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            out.push(TraceFile {
                session_id: session.clone(),
                path,
                modified_ms,
            });
        }
    }
    out
}

/// The entries of `dir` (itself a real folder, not a symlink to one) that are folders
/// (`folders`) or regular files, never symlinks.
fn entries(dir: &Path, folders: bool) -> Vec<(String, PathBuf)> {
    let is_real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_dir());
    let Some(read) = is_real_dir.then(|| std::fs::read_dir(dir).ok()).flatten() else {
        return Vec::new();
    };
    read.flatten()
        .filter(|entry| {
            entry.file_type().is_ok_and(|kind| {
                if folders {
                    kind.is_dir()
                } else {
                    kind.is_file()
                }
            })
        })
        .filter_map(|entry| Some((entry.file_name().into_string().ok()?, entry.path())))
        .collect()
}

fn read_record(path: &Path) -> Option<TraceRecord> {
    serde_json::from_str(&read_text(path)?).ok()
}

/// A regular file's text, opened without following a symlink and read up to the cap.
pub fn read_text(path: &Path) -> Option<String> {
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_READ_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_READ_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
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
        assert!(trace_files(&traces, None).is_empty());
        let linked_root = home.path().join("traces-link");
        std::os::unix::fs::symlink(&traces, &linked_root).unwrap();
        std::fs::write(traces.join("ses-a/000003-trc-z.json"), "{}").unwrap();
        assert_eq!(trace_files(&traces, None).len(), 1);
        assert!(
            trace_files(&linked_root, None).is_empty(),
            "a symlinked traces folder"
        );
        assert_eq!(read_text(&traces.join("ses-a/000002-trc-y.json")), None);
    }
}

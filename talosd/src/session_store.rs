//! Sessions on disk: `<home>/sessions/<sessionId>.json`, one file per session, written with
//! the home's handle (`crate::home::Store`, never through a link) after every turn and read back when a new daemon starts or a client calls
//! `session/resume`. The file holds the session's id, workspace, mode, turn count, remembered
//! requests with their outcomes, last outcome and last findings; never its grants.
//!
//! Nothing in a file is trusted until it is checked: the name must be a well-formed session id,
//! the file a regular file (not a link) owned by the daemon's user and writable by nobody else,
//! at most [`MAX_FILE_BYTES`], of this kind and schema version, naming the same id, an absolute
//! workspace, known outcomes and at most `HISTORY_TURNS` requests. Anything else is a
//! [`Skipped`] with its reason, which the caller logs.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use talos_core::history::PriorOutcome;
use talos_protocol::{Mode, TurnOutcome};

use crate::home::{Durability, Store};
use crate::ids::SessionId;
use crate::sessions::{HISTORY_TURNS, Snapshot};
use crate::workspace::EntryKind;

/// The schema this daemon writes and the only one it reads.
pub const SCHEMA_VERSION: u32 = 1;
/// What the `kind` field of a session file says.
pub const KIND: &str = "talos-session";
/// A larger file is not read.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// The session files under `<home>/sessions/`.
#[derive(Debug, Clone)]
pub struct SessionStore {
    store: Store,
}

/// A session file that was not loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionFile {
    kind: String,
    schema_version: u32,
    session_id: String,
    workspace: String,
    mode: Mode,
    turns: u64,
    history: Vec<HistoryEntry>,
    last_outcome: Option<TurnOutcome>,
    last_findings: Vec<String>,
    /// The model chosen with `model/select` (absent: `model.default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    /// The folder the session works from (absent: the workspace root).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    directory: String,
    saved_at_ms: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HistoryEntry {
    request: String,
    outcome: String,
    /// The committed answer and the files changed (absent in files from before issue 23).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    answer: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    changed: Vec<String>,
}

impl SessionStore {
    /// The store in `store` (the daemon's is `Home::sessions`).
    pub fn new(store: Store) -> SessionStore {
        SessionStore { store }
    }

    /// Where the session `id` is kept (for messages and tests; the store's IO never uses it).
    pub fn path(&self, id: &str) -> PathBuf {
        self.store.shown(&file_name(id))
    }

    /// Writes the session's state, replacing the previous file: its data is synced, and the
    /// caller syncs the home's filesystem (`Store::sync_filesystem`) before it reports what
    /// the state records.
    pub fn save(&self, snapshot: &Snapshot, now_ms: u64) -> std::io::Result<()> {
        let file = SessionFile {
            kind: KIND.into(),
            schema_version: SCHEMA_VERSION,
            session_id: snapshot.id.to_string(),
            workspace: snapshot.workspace.display().to_string(),
            mode: snapshot.mode,
            turns: snapshot.turns,
            history: snapshot
                .requests
                .iter()
                .enumerate()
                .map(|(i, (request, outcome))| {
                    let (answer, changed) = snapshot.answers.get(i).cloned().unwrap_or_default();
                    HistoryEntry {
                        request: request.clone(),
                        outcome: outcome.as_str().into(),
                        answer,
                        changed,
                    }
                })
                .collect(),
            last_outcome: snapshot.last_outcome.clone(),
            last_findings: snapshot.last_findings.clone(),
            model: snapshot.model.clone(),
            directory: snapshot.directory.clone(),
            saved_at_ms: now_ms,
        };
        let json = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
        // The data is synced before the rename, so the file is the old state or the new one;
        // the turn's one sync of the home then makes the rename durable (home.rs).
        self.store
            .write(&file_name(snapshot.id.as_str()), &json, Durability::Data)
    }

    /// Deletes the session's file; `false` when there was none.
    pub fn remove(&self, id: &str) -> std::io::Result<bool> {
        if SessionId::parse(id).is_none() {
            return Ok(false);
        }
        match self.store.remove_file(&file_name(id)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Retention for sessions: removes the files of sessions not saved since `cutoff_ms`
    /// (their modification time) whose id is not in `open`; returns how many and their bytes.
    /// Only `<id>.json` regular files are considered; links, hidden and other names are left.
    pub fn prune_older_than(
        &self,
        cutoff_ms: u64,
        open: &std::collections::HashSet<String>,
    ) -> (u64, u64) {
        let Ok(entries) = self.store.entries(".") else {
            return (0, 0);
        };
        let (mut files, mut bytes) = (0, 0);
        for entry in entries {
            let name = entry.name;
            let Some(id) = name.strip_suffix(".json") else {
                continue;
            };
            if SessionId::parse(id).is_none() || open.contains(id) {
                continue;
            }
            let Some(stamp) = self.store.stamp(&name) else {
                continue;
            };
            if stamp.kind != EntryKind::File || stamp.modified_ms >= cutoff_ms {
                continue;
            }
            match self.store.remove_file(&name) {
                Ok(()) => {
                    files += 1;
                    bytes += stamp.size;
                }
                Err(e) => {
                    tracing::warn!(path = %self.store.shown(&name).display(), error = %e, "retention: cannot remove");
                }
            }
        }
        (files, bytes)
    }

    /// The session `id` from its file, checked (see the module docs).
    pub fn load(&self, id: &str) -> Result<Snapshot, Skipped> {
        self.load_dated(id).map(|(_, snapshot)| snapshot)
    }

    /// [`SessionStore::load`], with when the file was saved (ms since the epoch).
    fn load_dated(&self, id: &str) -> Result<(u64, Snapshot), Skipped> {
        let path = self.path(id);
        let skipped = |reason: String| Skipped {
            path: path.clone(),
            reason,
        };
        let Some(id) = SessionId::parse(id) else {
            return Err(skipped("the name is not a session id".into()));
        };
        let text = read_owned(&self.store, &file_name(id.as_str())).map_err(skipped)?;
        let file: SessionFile =
            serde_json::from_str(&text).map_err(|e| skipped(format!("not a session file: {e}")))?;
        let saved_at_ms = file.saved_at_ms;
        checked(file, id)
            .map(|snapshot| (saved_at_ms, snapshot))
            .map_err(skipped)
    }

    /// Every session file in the folder, checked: the sessions, most recently saved first, and
    /// the files skipped. Names that are not `<id>.json` (such as a crashed write's temporary
    /// file) are skipped too.
    pub fn load_all(&self) -> (Vec<Snapshot>, Vec<Skipped>) {
        let mut loaded: Vec<(u64, Snapshot)> = Vec::new();
        let mut skipped = Vec::new();
        let entries = match self.store.entries(".") {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), skipped),
            // A link (or anything else) in the store's place is not followed out of the home.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                skipped.push(Skipped {
                    path: self.store.path(),
                    reason: format!("not a real folder (a symlink or a file); not followed: {e}"),
                });
                return (Vec::new(), skipped);
            }
            Err(e) => {
                skipped.push(Skipped {
                    path: self.store.path(),
                    reason: format!("cannot list the folder: {e}"),
                });
                return (Vec::new(), skipped);
            }
        };
        let names: Vec<String> = entries.into_iter().map(|entry| entry.name).collect();
        for name in names {
            if name.starts_with('.') {
                // A temporary file of an interrupted write: `recovery` removes those.
                continue;
            }
            let Some(id) = name.strip_suffix(".json") else {
                skipped.push(Skipped {
                    path: self.store.shown(&name),
                    reason: "not a session file name".into(),
                });
                continue;
            };
            match self.load_dated(id) {
                Ok(dated) => loaded.push(dated),
                Err(skip) => skipped.push(skip),
            }
        }
        // Newest first; the sort is stable, so equal times keep the names' order.
        loaded.sort_by_key(|(saved_at_ms, _)| std::cmp::Reverse(*saved_at_ms));
        (loaded.into_iter().map(|(_, s)| s).collect(), skipped)
    }
}

/// The file's text: a regular file, not a link, owned by this user, writable by no one else,
/// and not larger than [`MAX_FILE_BYTES`].
/// A session's file name in the store.
fn file_name(id: &str) -> String {
    format!("{id}.json")
}

fn read_owned(store: &Store, name: &str) -> Result<String, String> {
    let (file, meta) = store.open_regular(name).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => "not a regular file".to_string(),
        _ => format!("cannot open: {e}"),
    })?;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid != me {
        return Err(format!("owned by uid {}, not by uid {me}", meta.uid));
    }
    if meta.mode & 0o022 != 0 {
        return Err(format!(
            "writable by other users (mode {:o})",
            meta.mode & 0o777
        ));
    }
    if meta.size > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(text)
}

/// The snapshot a parsed file describes, when every field is one this daemon wrote.
fn checked(file: SessionFile, id: SessionId) -> Result<Snapshot, String> {
    if file.kind != KIND {
        return Err(format!("kind {:?} is not {KIND:?}", file.kind));
    }
    if file.schema_version != SCHEMA_VERSION {
        return Err(format!(
            "schema version {} is not {SCHEMA_VERSION}",
            file.schema_version
        ));
    }
    if file.session_id != id.as_str() {
        return Err(format!("it names another session ({})", file.session_id));
    }
    let workspace = PathBuf::from(&file.workspace);
    if !workspace.is_absolute() || workspace == Path::new("/") {
        return Err(format!("workspace {:?} is not usable", file.workspace));
    }
    if file.history.len() > HISTORY_TURNS {
        return Err(format!(
            "{} remembered turns, more than {HISTORY_TURNS}",
            file.history.len()
        ));
    }
    // `turns` counts the session's own turns; its history may hold more, carried over from
    // the session it continues (`continueFrom`), so the two are not compared.
    let mut requests = Vec::with_capacity(file.history.len());
    let mut answers = Vec::with_capacity(file.history.len());
    for entry in file.history {
        let outcome = PriorOutcome::parse(&entry.outcome)
            .ok_or_else(|| format!("unknown outcome {:?}", entry.outcome))?;
        requests.push((entry.request, outcome));
        answers.push((entry.answer, entry.changed));
    }
    Ok(Snapshot {
        id,
        workspace,
        mode: file.mode,
        turns: file.turns,
        requests,
        answers,
        last_outcome: file.last_outcome,
        last_findings: file.last_findings,
        model: file.model,
        directory: file.directory,
    })
}

#[cfg(test)]
mod tests;

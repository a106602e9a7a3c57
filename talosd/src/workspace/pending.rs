//! The record of workspace writes in flight, kept under the Talos home (never in the
//! workspace): before a temporary file is created beside a target, a small entry names the
//! workspace root and the temporary file's location; once the file is renamed into place (or
//! removed after a failure) the entry goes. After a crash (kill -9 between the create and the
//! rename), the next daemon's start reads the entries left and removes exactly those temporary
//! files: only names of the daemon's own temp shape, only as regular files, never through a
//! link, and only beneath the root the entry names.
//!
//! The entries are not synced: they survive a killed process, which is what they are for. After
//! a power loss an entry can be missing; its temporary file stays hidden from listings but is
//! not removed.

use std::path::PathBuf;

use rustix::fs::AtFlags;

use crate::home::{Durability, Store};
use serde::{Deserialize, Serialize};

use super::{EntryKind, Workspace};

/// Where the entries live (`<home>/pending-writes`).
#[derive(Debug, Clone)]
pub struct PendingLog {
    dir: Store,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PendingEntry {
    root: PathBuf,
    temp: String,
}

/// The largest entry file read back (a root path and a location).
const MAX_ENTRY_BYTES: u64 = 16 * 1024;

impl PendingLog {
    pub fn new(dir: Store) -> PendingLog {
        PendingLog { dir }
    }

    /// Records that `temp` (a workspace location) is about to be created under `root`. Returns
    /// the entry to remove once the temporary file is gone; `None` if it could not be written
    /// (the write goes ahead: its temporary file is hidden either way).
    pub(super) fn begin(&self, root: &std::path::Path, temp: &str, key: &str) -> Option<Entry> {
        let entry = PendingEntry {
            root: root.to_path_buf(),
            temp: temp.to_string(),
        };
        let name = format!("{key}.json");
        let written = serde_json::to_vec(&entry)
            .map_err(std::io::Error::other)
            .and_then(|json| self.dir.write(&name, &json, Durability::None));
        match written {
            Ok(()) => Some(Entry {
                dir: self.dir.clone(),
                name,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "cannot record a pending write; a crash now would leave its temporary file");
                None
            }
        }
    }

    pub(super) fn end(entry: Option<Entry>) {
        if let Some(entry) = entry {
            let _ = entry.dir.remove_file(&entry.name);
        }
    }

    /// Removes the temporary files of the writes a crash interrupted, and their entries.
    /// Returns how many temporary files were removed.
    pub fn sweep(&self) -> usize {
        let mut removed = 0;
        for name in self.dir.names(".", EntryKind::File) {
            if let Some(entry) = read_entry(&self.dir, &name) {
                match Workspace::open(&entry.root).map(|ws| ws.remove_leftover(&entry.temp)) {
                    Ok(Ok(true)) => removed += 1,
                    Ok(Ok(false)) => {}
                    Ok(Err(e)) => {
                        tracing::warn!(root = %entry.root.display(), temp = entry.temp, error = %e, "cannot remove a leftover temporary file");
                    }
                    Err(e) => {
                        tracing::info!(root = %entry.root.display(), error = %e, "a pending write's workspace is gone")
                    }
                }
            }
            let _ = self.dir.remove_file(&name);
        }
        removed
    }
}

/// One entry written, removed when its write is done.
#[derive(Debug)]
pub(super) struct Entry {
    dir: Store,
    name: String,
}

fn read_entry(dir: &Store, name: &str) -> Option<PendingEntry> {
    let text = dir.read(name, MAX_ENTRY_BYTES).ok()?;
    serde_json::from_slice(&text).ok()
}

impl Workspace {
    /// Removes `location` if it is one of the daemon's temporary files and a regular file
    /// (never following a link); `Ok(false)` when there is nothing of that shape to remove.
    pub fn remove_leftover(&self, location: &str) -> std::io::Result<bool> {
        let Some((parent, name)) = self.parent_and_name(location)? else {
            return Ok(false);
        };
        if !talos_core::pathname::is_temp_name(name) {
            return Ok(false);
        }
        match crate::beneath::kind_at(&parent, name) {
            Ok(EntryKind::File) => {
                rustix::fs::unlinkat(&parent, name, AtFlags::empty())?;
                Ok(true)
            }
            Ok(_) | Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

//! The manifest of one checkpoint as stored (`manifests/<checkpointId>.json`): written when the
//! checkpoint is taken, completed with each path's state after the change once the change ran
//! (`after`), and read back by listing, showing and restoring. What a restore decides from it
//! is `talos_core::restore`; this module only converts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use talos_core::restore::{Captured, Row, Summary};

use crate::home::{Durability, Store};
use crate::workspace::{EntryKind, Workspace};

/// The trigger of a safety checkpoint a restore takes first.
pub const RESTORE_TRIGGER: &str = "talos.restore";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    pub checkpoint_id: String,
    pub workspace: String,
    pub created_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub trace_id: String,
    pub turn_id: String,
    pub call_id: String,
    /// The tool whose change it guards, or [`RESTORE_TRIGGER`].
    pub tool: String,
    /// For a safety checkpoint taken by `turn/undo`: the turn it undid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestFile {
    pub relative_path: String,
    /// `FILE`, `DIRECTORY`, or `PATH` (nothing there).
    pub entry_type: String,
    pub existed_before: bool,
    pub blob_sha256: Option<String>,
    pub size_bytes: u64,
    /// The path's state once the change ran; absent until recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<AfterState>,
}

/// A path's state after the change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AfterState {
    /// `FILE`, `DIRECTORY`, `ABSENT`, or `OTHER` (a link or special file).
    pub entry_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default)]
    pub size_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("no checkpoint {0}")]
    NotFound(String),
    #[error("cannot read checkpoint manifest {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("checkpoint manifest {} is not valid: {source}", path.display())]
    Invalid {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot write checkpoint manifest {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("checkpoint object {sha256} is missing or damaged")]
    Object { sha256: String },
}

/// One path's after-state as the after file keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AfterRecord {
    relative_path: String,
    after: AfterState,
}

/// The largest manifest (or after file) read: far above any real one.
const MAX_MANIFEST_BYTES: u64 = 64 * 1024 * 1024;
/// The largest checkpoint object read.
pub const MAX_OBJECT_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// Where the after-states of the manifest `name` are kept: `<checkpointId>.after`, a file of
/// its own beside it, so recording them never rewrites the manifest (issue 26, defect 10).
pub fn after_name(name: &str) -> String {
    let stem = name.strip_suffix(".json").unwrap_or(name);
    format!("{stem}.after")
}

impl Manifest {
    /// The manifest `name` in `manifests`, with the after-states of its after file when one is
    /// there and reads (an unreadable one is as if none had been recorded: a restore then
    /// treats the paths as possibly changed).
    pub fn read(manifests: &Store, name: &str) -> Result<Manifest, ManifestError> {
        let path = manifests.shown(name);
        let bytes =
            manifests
                .read(name, MAX_MANIFEST_BYTES)
                .map_err(|source| ManifestError::Read {
                    path: path.clone(),
                    source,
                })?;
        let mut manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|source| ManifestError::Invalid {
                path: path.clone(),
                source,
            })?;
        let recorded = manifests
            .read(&after_name(name), MAX_MANIFEST_BYTES)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Vec<AfterRecord>>(&bytes).ok());
        for record in recorded.into_iter().flatten() {
            if let Some(file) = manifest
                .files
                .iter_mut()
                .find(|f| f.relative_path == record.relative_path)
            {
                file.after = Some(record.after);
            }
        }
        Ok(manifest)
    }

    /// Writes the after-states to the manifest's after file, unsynced: the turn's last sync
    /// makes it durable with the trace (home.rs).
    pub fn write_after(&self, manifests: &Store, name: &str) -> Result<(), ManifestError> {
        let path = manifests.shown(name);
        let records: Vec<AfterRecord> = self
            .files
            .iter()
            .filter_map(|f| {
                Some(AfterRecord {
                    relative_path: f.relative_path.clone(),
                    after: f.after.clone()?,
                })
            })
            .collect();
        let json =
            serde_json::to_vec_pretty(&records).map_err(|source| ManifestError::Invalid {
                path: path.clone(),
                source,
            })?;
        manifests
            .write(&after_name(name), &json, Durability::None)
            .map_err(|source| ManifestError::Write { path, source })
    }

    /// Bytes captured (the sum of the captured files' sizes).
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size_bytes).sum()
    }

    /// The rows the core's restore decisions read.
    pub fn rows(&self) -> Vec<Row> {
        self.files
            .iter()
            .map(|f| Row {
                path: f.relative_path.clone(),
                before: before(f),
                after: f.after.as_ref().map(after),
            })
            .collect()
    }

    /// What `turn/undo` needs to choose its unit.
    pub fn summary(&self) -> Summary {
        let changed = self.rows().iter().any(|row| match &row.after {
            Some(after) => *after != row.before,
            None => false,
        });
        Summary {
            checkpoint_id: self.checkpoint_id.clone(),
            session_id: self.session_id.clone(),
            turn_id: self.turn_id.clone(),
            created_at_ms: self.created_at_ms,
            by_restore: self.tool == RESTORE_TRIGGER,
            undoes: self.undoes.clone(),
            changed,
        }
    }

    /// Records each path's state as it is now (after the change ran), read through the
    /// workspace handle.
    pub fn record_after(&mut self, files: &Workspace, max_file_bytes: u64) {
        for file in &mut self.files {
            file.after = Some(state_now(files, &file.relative_path, max_file_bytes));
        }
    }
}

fn before(f: &ManifestFile) -> Captured {
    match (f.entry_type.as_str(), &f.blob_sha256) {
        ("FILE", Some(sha256)) => Captured::File {
            sha256: sha256.clone(),
            size: f.size_bytes,
        },
        ("DIRECTORY", _) => Captured::Directory,
        _ => Captured::Absent,
    }
}

fn after(a: &AfterState) -> Captured {
    match (a.entry_type.as_str(), &a.sha256) {
        ("FILE", Some(sha256)) => Captured::File {
            sha256: sha256.clone(),
            size: a.size_bytes,
        },
        ("DIRECTORY", _) => Captured::Directory,
        ("ABSENT", _) => Captured::Absent,
        // A link or special file: a state no capture equals, so any difference is a conflict.
        _ => Captured::File {
            sha256: String::new(),
            size: 0,
        },
    }
}

fn state_now(files: &Workspace, relative: &str, max_file_bytes: u64) -> AfterState {
    let other = AfterState {
        entry_type: "OTHER".into(),
        sha256: None,
        size_bytes: 0,
    };
    let resolved = files.resolve(relative);
    let Some(location) = resolved.location.filter(|l| l == relative) else {
        return other;
    };
    match files.kind(&location) {
        Ok(None) => AfterState {
            entry_type: "ABSENT".into(),
            sha256: None,
            size_bytes: 0,
        },
        Ok(Some(EntryKind::Directory)) => AfterState {
            entry_type: "DIRECTORY".into(),
            sha256: None,
            size_bytes: 0,
        },
        Ok(Some(EntryKind::File)) => {
            match files.read_limited(&location, relative, max_file_bytes) {
                Ok(Some(bytes)) => AfterState {
                    entry_type: "FILE".into(),
                    sha256: Some(talos_core::digest::sha256_hex(&bytes)),
                    size_bytes: bytes.len() as u64,
                },
                Ok(None) => AfterState {
                    entry_type: "ABSENT".into(),
                    sha256: None,
                    size_bytes: 0,
                },
                Err(_) => other,
            }
        }
        Ok(Some(EntryKind::Symlink | EntryKind::Other)) | Err(_) => other,
    }
}

/// Whether `id` has the shape of a checkpoint id (`chk-` + 32 lowercase hex), so it can name a
/// file under the store without leaving it.
pub fn valid_id(id: &str) -> bool {
    id.strip_prefix("chk-").is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Where a manifest was found: the workspace folder it is stored under, that folder's
/// `manifests/` and its name there.
#[derive(Debug, Clone)]
pub struct Found {
    pub workspace_folder: String,
    pub manifests: Store,
    pub name: String,
}

/// The manifest of checkpoint `id` anywhere in the store (real folders and files only).
pub fn find(store: &Store, id: &str) -> Result<Found, ManifestError> {
    if !valid_id(id) {
        return Err(ManifestError::NotFound(id.into()));
    }
    let name = format!("{id}.json");
    store
        .names(".", EntryKind::Directory)
        .into_iter()
        .map(|folder| Found {
            manifests: store.child(&folder).child("manifests"),
            workspace_folder: folder,
            name: name.clone(),
        })
        .find(|found| {
            found
                .manifests
                .stamp(&found.name)
                .is_some_and(|stamp| stamp.kind == EntryKind::File)
        })
        .ok_or_else(|| ManifestError::NotFound(id.into()))
}

/// Every readable manifest in `dir` (a workspace's `manifests/`), newest first; unreadable
/// ones are logged and skipped.
pub fn all_in(dir: &Store) -> Vec<(PathBuf, Manifest)> {
    // A store folder that is a link is not followed out of the home (the store refuses it).
    let mut out: Vec<(PathBuf, Manifest)> = dir
        .entries(".")
        .unwrap_or_default()
        .into_iter()
        .map(|entry| entry.name)
        .filter(|name| name.ends_with(".json"))
        .filter_map(|name| match Manifest::read(dir, &name) {
            Ok(manifest) => Some((dir.shown(&name), manifest)),
            Err(e) => {
                tracing::warn!(error = %e, "skipping an unreadable checkpoint manifest");
                None
            }
        })
        .collect();
    out.sort_by(|(_, a), (_, b)| {
        b.created_at_ms
            .cmp(&a.created_at_ms)
            .then(b.checkpoint_id.cmp(&a.checkpoint_id))
    });
    out
}

/// The captured bytes of object `sha256`, checked against their name (a damaged or swapped
/// object is refused, never restored).
pub fn object(objects: &Store, sha256: &str) -> Result<Vec<u8>, ManifestError> {
    let damaged = || ManifestError::Object {
        sha256: sha256.into(),
    };
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(damaged());
    }
    // Read only as a regular file, never through a link or from a FIFO or device planted in
    // the store; objects are at most `checkpoint.max_file_bytes`, which is capped below this.
    let bytes = objects
        .read(sha256, MAX_OBJECT_BYTES)
        .map_err(|_| damaged())?;
    if talos_core::digest::sha256_hex(&bytes) != sha256 {
        return Err(damaged());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(
        path: &str,
        entry: &str,
        blob: Option<&str>,
        after: Option<(&str, Option<&str>)>,
    ) -> ManifestFile {
        ManifestFile {
            relative_path: path.into(),
            entry_type: entry.into(),
            existed_before: entry != "PATH",
            blob_sha256: blob.map(str::to_string),
            size_bytes: 3,
            after: after.map(|(kind, sha)| AfterState {
                entry_type: kind.into(),
                sha256: sha.map(str::to_string),
                size_bytes: 3,
            }),
        }
    }

    fn manifest(tool: &str, files: Vec<ManifestFile>) -> Manifest {
        Manifest {
            schema_version: 2,
            checkpoint_id: "chk-1".into(),
            workspace: "/ws".into(),
            created_at_ms: 5,
            session_id: Some("ses-1".into()),
            trace_id: "t".into(),
            turn_id: "turn-1".into(),
            call_id: "c".into(),
            tool: tool.into(),
            undoes: None,
            files,
        }
    }

    /// Proves stored entries become the core's rows (an unknown after kind is a state no
    /// capture equals) and a checkpoint counts as changed only when an after record differs.
    #[test]
    fn manifests_become_rows_and_summaries() {
        let m = manifest(
            "talos.write_file",
            vec![
                file("a", "FILE", Some("aa"), Some(("FILE", Some("bb")))),
                file("n", "PATH", None, Some(("OTHER", None))),
                file("d", "DIRECTORY", None, None),
            ],
        );
        assert_eq!(
            m.rows(),
            vec![
                Row {
                    path: "a".into(),
                    before: Captured::File {
                        sha256: "aa".into(),
                        size: 3
                    },
                    after: Some(Captured::File {
                        sha256: "bb".into(),
                        size: 3
                    }),
                },
                Row {
                    path: "n".into(),
                    before: Captured::Absent,
                    after: Some(Captured::File {
                        sha256: String::new(),
                        size: 0
                    }),
                },
                Row {
                    path: "d".into(),
                    before: Captured::Directory,
                    after: None
                },
            ]
        );
        assert!(m.summary().changed && !m.summary().by_restore);
        let unchanged = manifest(
            RESTORE_TRIGGER,
            vec![file("a", "FILE", Some("aa"), Some(("FILE", Some("aa"))))],
        );
        assert!(!unchanged.summary().changed && unchanged.summary().by_restore);
        // Schema 1 manifests (no session, no after) still read.
        let old: Manifest = serde_json::from_str(
            r#"{"schemaVersion":1,"checkpointId":"chk-1","workspace":"/ws","createdAtMs":1,"traceId":"t","turnId":"u","callId":"c","tool":"talos.edit_file","files":[{"relativePath":"a","entryType":"FILE","existedBefore":true,"blobSha256":"aa","sizeBytes":3}]}"#,
        )
        .unwrap();
        assert!(old.session_id.is_none() && old.files[0].after.is_none());
    }

    /// Proves only `chk-` + 32 lower-case hex names a manifest file.
    #[test]
    fn only_well_formed_ids_name_a_manifest() {
        for (id, valid) in [
            ("chk-0123456789abcdef0123456789abcdef", true),
            ("chk-0123456789ABCDEF0123456789abcdef", false),
            ("chk-../../etc/passwd", false),
            ("chk-0123", false),
            ("ses-0123456789abcdef0123456789abcdef", false),
        ] {
            assert_eq!(valid_id(id), valid, "{id}");
        }
    }
}

//! Checkpoints: before a change is written, the target's current bytes are stored
//! content-addressed (SHA-256) under the Talos home, with a manifest naming what was captured.
//! A failed checkpoint blocks the write.
//!
//! Layout: `checkpoints/<workspaceId>/objects/<sha256>` and
//! `checkpoints/<workspaceId>/manifests/<checkpointId>.json`.
//!
//! The store writes under the Talos home through the home's handle (`crate::home::Store`);
//! what it captures from the workspace it reads through the `Workspace` handle.

pub mod job;
pub mod list;
pub mod manifest;
pub mod record;
pub mod restore;
pub mod serve;

use std::path::{Path, PathBuf};

use manifest::{Manifest, ManifestFile};

use crate::home::{Durability, Store};
use crate::ids::CheckpointId;
use crate::workspace::ops::Placed;
use crate::workspace::{EntryKind, Workspace, WorkspaceError};

#[derive(Debug, Clone)]
pub struct CheckpointStore {
    root: Store,
    /// `checkpoint.max_file_bytes`: the largest single file a checkpoint copies.
    max_file_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub checkpoint_id: CheckpointId,
    pub existed_before: bool,
    pub blob_sha256: Option<String>,
    pub manifest: PathBuf,
}

/// Who asked for the checkpoint, recorded in its manifest.
#[derive(Debug, Clone)]
pub struct CaptureContext<'a> {
    pub session_id: Option<&'a str>,
    pub trace_id: &'a str,
    pub turn_id: &'a str,
    pub call_id: &'a str,
    pub tool: &'a str,
    pub created_at_ms: u64,
    /// For a safety checkpoint taken by `turn/undo`: the turn being undone.
    pub undoes: Option<&'a str>,
}

#[derive(Debug, thiserror::Error)]
#[error("Failed to create checkpoint for {path}: {problem}")]
pub struct CheckpointError {
    pub path: String,
    pub problem: CaptureProblem,
}

/// What went wrong while capturing or storing a checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum CaptureProblem {
    #[error("cannot inspect: {0}")]
    Inspect(std::io::Error),
    #[error("refusing to capture a symlink")]
    Symlink,
    #[error("cannot read: the file disappeared")]
    Disappeared,
    #[error("more than {} MiB to capture", MAX_CAPTURE_BYTES >> 20)]
    TooMuch,
    #[error(
        "the file is larger than checkpoint.max_file_bytes ({limit} bytes), so no checkpoint can be taken and the change is refused; raise checkpoint.max_file_bytes in config.yaml to allow it"
    )]
    FileTooLarge { limit: u64 },
    #[error("cannot read: {0}")]
    Read(WorkspaceError),
    #[error("cannot list: {0}")]
    List(std::io::Error),
    #[error("cannot create {}: {source}", dir.display())]
    CreateStore {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Id(#[from] crate::ids::IdError),
    #[error("cannot store object: {0}")]
    StoreObject(std::io::Error),
    #[error("{0}")]
    Manifest(serde_json::Error),
    #[error("cannot write manifest: {0}")]
    WriteManifest(std::io::Error),
}

impl CheckpointStore {
    pub fn new(root: Store) -> CheckpointStore {
        CheckpointStore {
            root,
            max_file_bytes: crate::config::CheckpointConfig::default().max_file_bytes,
        }
    }

    /// The store with `checkpoint.max_file_bytes` set.
    pub fn with_max_file_bytes(self, max_file_bytes: u64) -> CheckpointStore {
        CheckpointStore {
            max_file_bytes,
            ..self
        }
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// The store's root (`<home>/checkpoints`).
    pub fn root(&self) -> &Store {
        &self.root
    }

    /// The name of `workspace`'s folder in the store (32 hex of the root's SHA-256).
    pub fn workspace_folder(workspace: &Path) -> String {
        let id = talos_core::digest::sha256_hex(workspace.to_string_lossy().as_bytes());
        id[..32].to_string()
    }

    pub fn workspace_dir(&self, workspace: &Path) -> Store {
        self.root
            .child(&CheckpointStore::workspace_folder(workspace))
    }

    /// Where the manifests of `workspace` are stored.
    pub fn manifests(&self, workspace: &Path) -> Store {
        self.workspace_dir(workspace).child("manifests")
    }

    /// Where the objects of `workspace` are stored.
    pub fn objects(&self, workspace: &Path) -> Store {
        self.workspace_dir(workspace).child("objects")
    }

    /// Completes checkpoint `id`'s manifest with each path's state now, after its change ran,
    /// so a later restore can tell a change by someone else from the change it guarded.
    pub fn record_after(&self, files: &Workspace, id: &str) -> Result<(), manifest::ManifestError> {
        let manifests = self.manifests(files.root());
        let name = format!("{id}.json");
        let mut manifest = Manifest::read(&manifests, &name)?;
        manifest.record_after(files, self.max_file_bytes);
        manifest.write_after(&manifests, &name)
    }

    /// Stores `before` (the target's bytes, `None` when absent) and a manifest for it.
    pub fn capture(
        &self,
        workspace: &Path,
        relative: &str,
        before: Option<&[u8]>,
        ctx: &CaptureContext<'_>,
    ) -> Result<Captured, CheckpointError> {
        if let Some(bytes) = before
            && bytes.len() as u64 > self.max_file_bytes
        {
            return Err(CheckpointError {
                path: relative.to_string(),
                problem: CaptureProblem::FileTooLarge {
                    limit: self.max_file_bytes,
                },
            });
        }
        let entry = match before {
            Some(bytes) => Entry::File {
                relative: relative.to_string(),
                bytes: bytes.to_vec(),
            },
            None => Entry::Absent {
                relative: relative.to_string(),
            },
        };
        self.capture_entries(workspace, &[entry], ctx)
    }

    /// Captures every path a workspace operation touches: files with their bytes, directories
    /// with every regular file beneath them, absent paths as absent (so a restore removes them).
    pub fn capture_paths(
        &self,
        workspace: &Path,
        files: &Workspace,
        paths: &[Placed],
        ctx: &CaptureContext<'_>,
    ) -> Result<Captured, CheckpointError> {
        let mut entries = Vec::new();
        let mut total: u64 = 0;
        for placed in paths {
            collect(
                files,
                &placed.shown,
                &placed.location,
                &mut entries,
                &mut Budget {
                    total: &mut total,
                    max_file_bytes: self.max_file_bytes,
                },
            )
            .map_err(|problem| CheckpointError {
                path: placed.shown.clone(),
                problem,
            })?;
        }
        self.capture_entries(workspace, &entries, ctx)
    }

    fn capture_entries(
        &self,
        workspace: &Path,
        entries: &[Entry],
        ctx: &CaptureContext<'_>,
    ) -> Result<Captured, CheckpointError> {
        let first = entries
            .first()
            .map(Entry::relative)
            .unwrap_or_default()
            .to_string();
        let fail = |problem: CaptureProblem| CheckpointError {
            path: first.clone(),
            problem,
        };
        let objects = self.objects(workspace);
        let manifests = self.manifests(workspace);
        for d in [&objects, &manifests] {
            // Real folders all the way down from the store, never a planted link out of it.
            d.make_dirs(".").map_err(|source| {
                fail(CaptureProblem::CreateStore {
                    dir: d.path(),
                    source,
                })
            })?;
        }
        let mut files = Vec::new();
        for entry in entries {
            let (existed_before, blob_sha256, size_bytes, entry_type) = match entry {
                Entry::File { bytes, .. } => {
                    let hex = talos_core::digest::sha256_hex(bytes);
                    // A stored object is trusted only when it holds these bytes: one written
                    // unsynced before a power loss may be empty or short (home.rs).
                    if !holds(&objects, &hex, bytes) {
                        objects
                            .write(&hex, bytes, Durability::None)
                            .map_err(|e| fail(CaptureProblem::StoreObject(e)))?;
                    }
                    (true, Some(hex), bytes.len() as u64, "FILE")
                }
                Entry::Directory { .. } => (true, None, 0, "DIRECTORY"),
                Entry::Absent { .. } => (false, None, 0, "PATH"),
            };
            files.push(ManifestFile {
                relative_path: entry.relative().to_string(),
                entry_type: entry_type.to_string(),
                existed_before,
                blob_sha256,
                size_bytes,
                after: None,
            });
        }
        let checkpoint_id = CheckpointId::new().map_err(|e| fail(CaptureProblem::Id(e)))?;
        let manifest = Manifest {
            schema_version: 2,
            checkpoint_id: checkpoint_id.as_str().to_string(),
            workspace: workspace.display().to_string(),
            created_at_ms: ctx.created_at_ms,
            session_id: ctx.session_id.map(str::to_string),
            trace_id: ctx.trace_id.to_string(),
            turn_id: ctx.turn_id.to_string(),
            call_id: ctx.call_id.to_string(),
            tool: ctx.tool.to_string(),
            undoes: ctx.undoes.map(str::to_string),
            files,
        };
        let json =
            serde_json::to_vec_pretty(&manifest).map_err(|e| fail(CaptureProblem::Manifest(e)))?;
        let name = format!("{checkpoint_id}.json");
        manifests
            .write(&name, &json, Durability::None)
            .map_err(|e| fail(CaptureProblem::WriteManifest(e)))?;
        // One sync makes the object, the manifest and any new folder durable before the
        // change is written (no checkpoint, no write).
        manifests
            .sync_filesystem()
            .map_err(|e| fail(CaptureProblem::WriteManifest(e)))?;
        let path = manifests.shown(&name);
        let (existed_before, blob_sha256) = match entries.first() {
            Some(Entry::File { bytes, .. }) => (true, Some(talos_core::digest::sha256_hex(bytes))),
            Some(Entry::Directory { .. }) => (true, None),
            Some(Entry::Absent { .. }) | None => (false, None),
        };
        Ok(Captured {
            checkpoint_id,
            existed_before,
            blob_sha256,
            manifest: path,
        })
    }
}

/// One captured path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File { relative: String, bytes: Vec<u8> },
    Directory { relative: String },
    Absent { relative: String },
}

impl Entry {
    fn relative(&self) -> &str {
        match self {
            Entry::File { relative, .. }
            | Entry::Directory { relative }
            | Entry::Absent { relative } => relative,
        }
    }
}

/// Largest total a workspace-operation checkpoint copies.
const MAX_CAPTURE_BYTES: u64 = 50 << 20;

/// What a capture may still copy: the total left, and the per-file limit.
struct Budget<'a> {
    total: &'a mut u64,
    max_file_bytes: u64,
}

fn collect(
    files: &Workspace,
    relative: &str,
    location: &str,
    out: &mut Vec<Entry>,
    budget: &mut Budget<'_>,
) -> Result<(), CaptureProblem> {
    let kind = match files.kind(location) {
        Ok(Some(kind)) => kind,
        Ok(None) => {
            out.push(Entry::Absent {
                relative: relative.to_string(),
            });
            return Ok(());
        }
        Err(e) => return Err(CaptureProblem::Inspect(e)),
    };
    match kind {
        EntryKind::Symlink => return Err(CaptureProblem::Symlink),
        EntryKind::File | EntryKind::Other => {
            let remaining = MAX_CAPTURE_BYTES.saturating_sub(*budget.total);
            let limit = remaining.min(budget.max_file_bytes);
            let bytes = match files.read_limited(location, relative, limit) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return Err(CaptureProblem::Disappeared),
                Err(WorkspaceError::TooLarge { .. }) if limit == budget.max_file_bytes => {
                    return Err(CaptureProblem::FileTooLarge {
                        limit: budget.max_file_bytes,
                    });
                }
                Err(WorkspaceError::TooLarge { .. }) => return Err(CaptureProblem::TooMuch),
                Err(e) => return Err(CaptureProblem::Read(e)),
            };
            *budget.total += bytes.len() as u64;
            out.push(Entry::File {
                relative: relative.to_string(),
                bytes,
            });
            return Ok(());
        }
        EntryKind::Directory => {}
    }
    out.push(Entry::Directory {
        relative: relative.to_string(),
    });
    let children = files.read_dir(location).map_err(CaptureProblem::List)?;
    for child in children {
        collect(
            files,
            &format!("{}/{}", relative.trim_end_matches('/'), child.name),
            &crate::workspace::child(location, &child.name),
            out,
            budget,
        )?;
    }
    Ok(())
}

/// Whether the object `name` in `objects` is a regular file holding exactly `bytes`.
fn holds(objects: &Store, name: &str, bytes: &[u8]) -> bool {
    objects
        .read(name, bytes.len() as u64)
        .is_ok_and(|stored| stored == bytes)
}

#[cfg(test)]
// std::fs in the tests: hostile homes are built by path.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn captures_are_content_addressed_and_a_blocked_store_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let home = crate::paths::Home::from_root(tmp.path());
        let store = CheckpointStore::new(home.checkpoints());
        let ctx = CaptureContext {
            session_id: Some("s"),
            undoes: None,
            trace_id: "t",
            turn_id: "u",
            call_id: "c",
            tool: "talos.edit_file",
            created_at_ms: 1,
        };
        let c = store
            .capture(Path::new("/ws"), "a.py", Some(b"TIMEOUT = 30\n"), &ctx)
            .unwrap();
        let hex = c.blob_sha256.clone().unwrap();
        assert_eq!(
            std::fs::read(store.objects(Path::new("/ws")).shown(&hex)).unwrap(),
            b"TIMEOUT = 30\n"
        );
        assert!(c.manifest.exists());
        let absent = store
            .capture(Path::new("/ws"), "new.py", None, &ctx)
            .unwrap();
        assert!(!absent.existed_before && absent.blob_sha256.is_none());

        std::fs::write(
            tmp.path().join("blocked"),
            b"a file where a folder should be",
        )
        .unwrap();
        let blocked = CheckpointStore::new(home.state_store().child("blocked"));
        assert!(
            blocked
                .capture(Path::new("/ws"), "a.py", Some(b"x"), &ctx)
                .is_err()
        );
    }
}

//! The index's own files under the Talos home: the folder per workspace, its format marker
//! and the manifest of what was indexed (path, size, mtime, content hash) and of documents
//! whose extraction failed. Never workspace files: the workspace is read only through
//! `crate::workspace::Workspace`.
// std::fs here: the index folder under the Talos home, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Bumped whenever the schema, the tokenizer or the chunking changes: an index with another
/// marker is rebuilt, never trusted.
pub const FORMAT: &str = "talos-index-1 tantivy-0.25 chunks-40";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Meta {
    pub format: String,
    pub root: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Entry {
    pub size: u64,
    pub mtime_ns: i128,
    pub hash: String,
    pub chunks: u64,
}

/// A document whose text could not be extracted from these bytes, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Failed {
    pub size: u64,
    pub mtime_ns: i128,
    pub hash: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    pub files: BTreeMap<String, Entry>,
    /// Milliseconds since the epoch of the last completed update.
    pub updated_ms: u64,
    /// Documents whose extraction failed, by path: not extracted again until their bytes
    /// change (a manifest written before issue 26 has none).
    #[serde(default)]
    pub failed: BTreeMap<String, Failed>,
}

/// The folder of one workspace's index: `<home>/index/<first 16 hex of sha256(root)>`.
pub fn folder(index_home: &Path, root: &Path) -> PathBuf {
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    index_home.join(hex)
}

pub fn tantivy_dir(folder: &Path) -> PathBuf {
    folder.join("tantivy")
}

/// Makes an empty folder (0700) for a fresh index, removing whatever was there.
pub fn reset(folder: &Path, root: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(folder).is_ok() {
        // A link planted in the folder's place is removed itself, never followed.
        if std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir()) {
            std::fs::remove_dir_all(folder)?;
        } else {
            std::fs::remove_file(folder)?;
        }
    }
    let index_home = folder.parent().unwrap_or(folder);
    crate::home_files::real_dir(index_home, &tantivy_dir(folder))?;
    let meta = Meta {
        format: FORMAT.into(),
        root: root.display().to_string(),
    };
    write_json(&folder.join("meta.json"), &meta)?;
    write_json(&folder.join("manifest.json"), &Manifest::default())
}

/// The marker and manifest when both read and the marker is this build's; `None` means
/// rebuild.
pub fn load(folder: &Path, root: &Path) -> Option<Manifest> {
    // The folder and its tantivy folder must be real folders of the home (a planted link
    // means rebuild), and its files regular files within their caps.
    let index_home = folder.parent()?;
    crate::home_files::real_dir(index_home, &tantivy_dir(folder)).ok()?;
    let meta: Meta = serde_json::from_slice(&read(&folder.join("meta.json"))?).ok()?;
    if meta.format != FORMAT || meta.root != root.display().to_string() {
        return None;
    }
    serde_json::from_slice(&read(&folder.join("manifest.json"))?).ok()
}

/// The largest index manifest read.
const MAX_MANIFEST_BYTES: u64 = 256 * 1024 * 1024;

fn read(path: &Path) -> Option<Vec<u8>> {
    crate::home_files::read_regular(path, MAX_MANIFEST_BYTES).ok()
}

/// Writes the manifest atomically (temporary file, then rename).
pub fn save(folder: &Path, manifest: &Manifest) -> std::io::Result<()> {
    write_json(&folder.join("manifest.json"), manifest)
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let temporary = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path)
}

/// The index folders under `index_home` that should go: the workspace they index is no longer
/// a directory, their last update is older than `max_age_ms`, or their marker does not read.
pub fn stale_folders(index_home: &Path, now_ms: u64, max_age_ms: u64) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(index_home) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let folder = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let meta: Option<Meta> =
            read(&folder.join("meta.json")).and_then(|b| serde_json::from_slice(&b).ok());
        let manifest: Option<Manifest> =
            read(&folder.join("manifest.json")).and_then(|b| serde_json::from_slice(&b).ok());
        let stale = match (meta, manifest) {
            (Some(meta), Some(manifest)) => {
                !Path::new(&meta.root).is_dir()
                    || (manifest.updated_ms > 0
                        && now_ms.saturating_sub(manifest.updated_ms) > max_age_ms)
            }
            _ => true,
        };
        if stale {
            out.push(folder);
        }
    }
    out
}

/// Removes an index folder.
pub fn remove(folder: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(folder)
}

/// Bytes the index folder holds on disk.
pub fn bytes(folder: &Path) -> u64 {
    fn walk(dir: &Path) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => walk(&e.path()),
                Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
                _ => 0,
            })
            .sum()
    }
    walk(folder)
}

pub fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

//! The index's own files under the Talos home: the folder per workspace, its format marker
//! and the manifest of what was indexed (path, size, mtime, content hash) and of documents
//! whose extraction failed. Never workspace files: the workspace is read only through
//! `crate::workspace::Workspace`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::home::{Durability, Store};
use crate::workspace::EntryKind;

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
pub fn folder(index_home: &Store, root: &Path) -> Store {
    index_home.child(&folder_name(root))
}

fn folder_name(root: &Path) -> String {
    let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The path tantivy opens (it takes a path, not a descriptor: the genuine exception of the
/// index, after the folders on the way were checked to be real folders of the home).
pub fn tantivy_dir(folder: &Store) -> PathBuf {
    folder.shown("tantivy")
}

/// Makes an empty folder (0700) for a fresh index, removing whatever was there.
pub fn reset(index_home: &Store, root: &Path) -> std::io::Result<Store> {
    let name = folder_name(root);
    if index_home.stamp(&name).is_some() {
        // A link planted in the folder's place is removed itself, never followed.
        index_home.remove_tree(&name)?;
    }
    let folder = index_home.child(&name);
    folder.make_dirs("tantivy")?;
    let meta = Meta {
        format: FORMAT.into(),
        root: root.display().to_string(),
    };
    write_json(&folder, "meta.json", &meta)?;
    write_json(&folder, "manifest.json", &Manifest::default())?;
    Ok(folder)
}

/// The marker and manifest when both read and the marker is this build's; `None` means
/// rebuild.
pub fn load(folder: &Store, root: &Path) -> Option<Manifest> {
    // The folder and its tantivy folder must be real folders of the home (a planted link
    // means rebuild), and its files regular files within their caps.
    folder.make_dirs("tantivy").ok()?;
    let meta: Meta = serde_json::from_slice(&read(folder, "meta.json")?).ok()?;
    if meta.format != FORMAT || meta.root != root.display().to_string() {
        return None;
    }
    serde_json::from_slice(&read(folder, "manifest.json")?).ok()
}

/// The largest index manifest read.
const MAX_MANIFEST_BYTES: u64 = 256 * 1024 * 1024;

fn read(folder: &Store, name: &str) -> Option<Vec<u8>> {
    folder.read(name, MAX_MANIFEST_BYTES).ok()
}

/// Writes the manifest atomically (temporary file, then rename).
pub fn save(folder: &Store, manifest: &Manifest) -> std::io::Result<()> {
    write_json(folder, "manifest.json", manifest)
}

/// A cache's file: replaced atomically (temporary file, then rename), not synced, as before.
fn write_json<T: Serialize>(folder: &Store, name: &str, value: &T) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    folder.write(name, &bytes, Durability::None)
}

/// The index folders under `index_home` that should go: the workspace they index is no longer
/// a directory, their last update is older than `max_age_ms`, or their marker does not read.
pub fn stale_folders(index_home: &Store, now_ms: u64, max_age_ms: u64) -> Vec<String> {
    let mut out = Vec::new();
    for name in index_home.names(".", EntryKind::Directory) {
        let folder = index_home.child(&name);
        let meta: Option<Meta> =
            read(&folder, "meta.json").and_then(|b| serde_json::from_slice(&b).ok());
        let manifest: Option<Manifest> =
            read(&folder, "manifest.json").and_then(|b| serde_json::from_slice(&b).ok());
        let stale = match (meta, manifest) {
            (Some(meta), Some(manifest)) => {
                !crate::workspace::is_directory(Path::new(&meta.root))
                    || (manifest.updated_ms > 0
                        && now_ms.saturating_sub(manifest.updated_ms) > max_age_ms)
            }
            _ => true,
        };
        if stale {
            out.push(name);
        }
    }
    out
}

/// Removes the index folder `name` of `index_home`.
pub fn remove(index_home: &Store, name: &str) -> std::io::Result<()> {
    index_home.remove_tree(name)
}

/// Bytes the index folder holds on disk (links not followed).
pub fn bytes(folder: &Store) -> u64 {
    folder
        .entries(".")
        .unwrap_or_default()
        .into_iter()
        .map(|entry| match entry.kind {
            EntryKind::Directory => bytes(&folder.child(&entry.name)),
            EntryKind::File => folder.stamp(&entry.name).map_or(0, |s| s.size),
            EntryKind::Symlink | EntryKind::Other => 0,
        })
        .sum()
}

pub fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

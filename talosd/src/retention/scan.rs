//! What the stores hold, as the retention plan takes it: one item per turn (its trace and turn
//! log) and per checkpoint manifest, and the checkpoint objects by workspace folder and content
//! address. Only real folders and regular files are listed (symlinks never), hidden names (a
//! write in progress, `.NAME.talos-tmp-…`) are left alone, and a manifest is read without
//! following a link.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde_json::Value;
use talos_core::retention::Item;

use super::Stores;

/// What a file is, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Trace,
    TurnLog,
    Manifest,
}

/// One file of an item.
#[derive(Debug, Clone)]
pub struct StoredFile {
    pub path: PathBuf,
    pub kind: Kind,
    pub bytes: u64,
}

/// One item with the files it stands for.
#[derive(Debug, Clone)]
pub struct StoredItem {
    pub item: Item,
    pub files: Vec<StoredFile>,
    /// The session folder of a turn, which may be left empty.
    pub session_dir: Option<PathBuf>,
}

/// One checkpoint object.
#[derive(Debug, Clone)]
pub struct StoredObject {
    pub path: PathBuf,
    pub bytes: u64,
}

/// Everything listed.
#[derive(Debug, Default)]
pub struct Stored {
    pub items: Vec<StoredItem>,
    /// Keyed `<workspace folder>/<sha256>`, as manifest references are.
    pub objects: BTreeMap<String, StoredObject>,
}

/// Lists the stores. Turns in `running` are kept; checkpoints are kept unless `checkpoints`.
pub fn scan(stores: Stores<'_>, running: &HashSet<String>, checkpoints: bool) -> Stored {
    let mut stored = Stored::default();
    for (_, session_dir) in entries(stores.traces, Entry::Folder) {
        let mut turns: BTreeMap<String, StoredItem> = BTreeMap::new();
        for (name, path) in entries(&session_dir, Entry::File) {
            let (stem, kind) = match name.rsplit_once('.') {
                Some((stem, "json")) => (stem, Kind::Trace),
                Some((stem, "log")) => (stem, Kind::TurnLog),
                _ => continue,
            };
            let Some((bytes, modified_ms)) = size_and_time(&path) else {
                continue;
            };
            let trace_id = stem.split_once('-').map_or(stem, |(_, id)| id);
            let turn = turns.entry(stem.to_string()).or_insert_with(|| StoredItem {
                item: Item {
                    time_ms: 0,
                    bytes: 0,
                    objects: Vec::new(),
                    keep: running.contains(trace_id),
                },
                files: Vec::new(),
                session_dir: Some(session_dir.clone()),
            });
            turn.item.time_ms = turn.item.time_ms.max(modified_ms);
            turn.item.bytes += bytes;
            turn.files.push(StoredFile { path, kind, bytes });
        }
        stored.items.extend(turns.into_values());
    }
    for (workspace, dir) in entries(stores.checkpoints, Entry::Folder) {
        for (name, path) in entries(&dir.join("objects"), Entry::File) {
            if let Some((bytes, _)) = size_and_time(&path) {
                stored
                    .objects
                    .insert(format!("{workspace}/{name}"), StoredObject { path, bytes });
            }
        }
        for (name, path) in entries(&dir.join("manifests"), Entry::File) {
            if !name.ends_with(".json") {
                continue;
            }
            let Some((bytes, modified_ms)) = size_and_time(&path) else {
                continue;
            };
            let manifest: Value = crate::traces::listing::read_text(&path)
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or(Value::Null);
            let mut objects = Vec::new();
            references(&manifest, &mut objects);
            stored.items.push(StoredItem {
                item: Item {
                    time_ms: manifest["createdAtMs"].as_u64().unwrap_or(modified_ms),
                    bytes,
                    objects: objects
                        .into_iter()
                        .map(|sha| format!("{workspace}/{sha}"))
                        .collect(),
                    keep: !checkpoints,
                },
                files: manifest_files(path, bytes),
                session_dir: None,
            });
        }
    }
    stored
}

/// A manifest and, when one was recorded, its after file (removed together).
fn manifest_files(path: PathBuf, bytes: u64) -> Vec<StoredFile> {
    let after = crate::checkpoint::manifest::after_path(&path);
    let mut files = vec![StoredFile {
        path,
        kind: Kind::Manifest,
        bytes,
    }];
    if let Some((bytes, _)) = size_and_time(&after) {
        files.push(StoredFile {
            path: after,
            kind: Kind::Manifest,
            bytes,
        });
    }
    files
}

/// Every `blobSha256` string in a manifest, without a `sha256:` prefix.
fn references(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                match (key.as_str(), field) {
                    ("blobSha256", Value::String(sha)) => {
                        out.push(sha.trim_start_matches("sha256:").to_string());
                    }
                    _ => references(field, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, out)),
        _ => {}
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Folder,
    File,
}

/// The entries of a real folder (not a symlink to one) that are real folders or regular files,
/// hidden names left out.
fn entries(dir: &Path, wanted: Entry) -> Vec<(String, PathBuf)> {
    let is_real_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_dir());
    let Some(read) = is_real_dir.then(|| std::fs::read_dir(dir).ok()).flatten() else {
        return Vec::new();
    };
    read.flatten()
        .filter(|entry| {
            entry.file_type().is_ok_and(|kind| match wanted {
                Entry::Folder => kind.is_dir(),
                Entry::File => kind.is_file(),
            })
        })
        .filter_map(|entry| Some((entry.file_name().into_string().ok()?, entry.path())))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect()
}

/// Size and modification time (ms since the epoch) of an entry, not following a link.
fn size_and_time(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    meta.file_type().is_file().then_some((meta.len(), modified))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_blob_reference_in_a_manifest_is_found_whatever_its_shape() {
        let manifest = json!({
            "createdAtMs": 5,
            "files": [
                {"relativePath": "a", "blobSha256": "aa"},
                {"relativePath": "b", "blobSha256": null},
                {"nested": {"blobSha256": "sha256:bb"}}
            ]
        });
        let mut found = Vec::new();
        references(&manifest, &mut found);
        assert_eq!(found, vec!["aa".to_string(), "bb".to_string()]);
    }
}

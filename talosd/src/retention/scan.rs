//! What the stores hold, as the retention plan takes it: one item per turn (its trace and turn
//! log) and per checkpoint manifest, and the checkpoint objects by workspace folder and content
//! address. Only real folders and regular files are listed (symlinks never), hidden names (a
//! write in progress, `.NAME.talos-tmp-…`) are left alone, and a manifest is read without
//! following a link.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;
use talos_core::retention::Item;

use super::Stores;
use crate::home::Store;
use crate::workspace::EntryKind;

/// Where a listed entry is: its folder's store and its name there.
#[derive(Debug, Clone)]
pub struct Place {
    pub folder: Store,
    pub name: String,
}

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
    pub place: Place,
    pub kind: Kind,
    pub bytes: u64,
}

/// One item with the files it stands for.
#[derive(Debug, Clone)]
pub struct StoredItem {
    pub item: Item,
    pub files: Vec<StoredFile>,
    /// The session folder of a turn, which may be left empty.
    pub session_dir: Option<Place>,
}

/// One checkpoint object.
#[derive(Debug, Clone)]
pub struct StoredObject {
    pub place: Place,
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
    for session in entries(stores.traces, EntryKind::Directory) {
        let session_dir = stores.traces.child(&session);
        let mut turns: BTreeMap<String, StoredItem> = BTreeMap::new();
        for name in entries(&session_dir, EntryKind::File) {
            let (stem, kind) = match name.rsplit_once('.') {
                Some((stem, "json")) => (stem, Kind::Trace),
                Some((stem, "log")) => (stem, Kind::TurnLog),
                _ => continue,
            };
            let Some((bytes, modified_ms)) = size_and_time(&session_dir, &name) else {
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
                session_dir: Some(Place {
                    folder: stores.traces.clone(),
                    name: session.clone(),
                }),
            });
            turn.item.time_ms = turn.item.time_ms.max(modified_ms);
            turn.item.bytes += bytes;
            let place = Place {
                folder: session_dir.clone(),
                name: name.clone(),
            };
            turn.files.push(StoredFile { place, kind, bytes });
        }
        stored.items.extend(turns.into_values());
    }
    for workspace in entries(stores.checkpoints, EntryKind::Directory) {
        let objects_dir = stores.checkpoints.child(&workspace).child("objects");
        for name in entries(&objects_dir, EntryKind::File) {
            if let Some((bytes, _)) = size_and_time(&objects_dir, &name) {
                let place = Place {
                    folder: objects_dir.clone(),
                    name: name.clone(),
                };
                stored
                    .objects
                    .insert(format!("{workspace}/{name}"), StoredObject { place, bytes });
            }
        }
        let manifests = stores.checkpoints.child(&workspace).child("manifests");
        for name in entries(&manifests, EntryKind::File) {
            if !name.ends_with(".json") {
                continue;
            }
            let Some((bytes, modified_ms)) = size_and_time(&manifests, &name) else {
                continue;
            };
            let manifest: Value = crate::traces::listing::read_text(&manifests, &name)
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
                files: manifest_files(&manifests, name, bytes),
                session_dir: None,
            });
        }
    }
    stored
}

/// A manifest and, when one was recorded, its after file (removed together).
fn manifest_files(folder: &Store, name: String, bytes: u64) -> Vec<StoredFile> {
    let after = crate::checkpoint::manifest::after_name(&name);
    let mut files = vec![StoredFile {
        place: Place {
            folder: folder.clone(),
            name,
        },
        kind: Kind::Manifest,
        bytes,
    }];
    if let Some((bytes, _)) = size_and_time(folder, &after) {
        files.push(StoredFile {
            place: Place {
                folder: folder.clone(),
                name: after,
            },
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

/// The names of the entries of `kind` in the real folder `folder` (not a symlink to one),
/// hidden names left out.
fn entries(folder: &Store, kind: EntryKind) -> Vec<String> {
    folder
        .names(".", kind)
        .into_iter()
        .filter(|name| !name.starts_with('.'))
        .collect()
}

/// Size and modification time (ms since the epoch) of a regular file, not following a link.
fn size_and_time(folder: &Store, name: &str) -> Option<(u64, u64)> {
    let stamp = folder.stamp(name)?;
    (stamp.kind == EntryKind::File).then_some((stamp.size, stamp.modified_ms))
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

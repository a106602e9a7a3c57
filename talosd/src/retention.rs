//! Bounded disk: the home's traces, turn logs and checkpoints kept under `retention.max_age_days`
//! and `retention.max_bytes`. This module lists what is stored, hands it to the core's decision
//! (`talos_core::retention::plan`) and removes what the plan names; `gc` runs it at start,
//! hourly and on `daemon/gc`.
//!
//! What it will not do: follow a symlink (listings skip them, removal unlinks the entry itself),
//! remove the trace or turn log of a running turn (their ids are registered in the [`Gate`]),
//! or touch checkpoints while any turn runs: a turn holds the gate shared for its whole length,
//! and the checkpoint sweep needs it exclusively, so an object cannot be swept between a
//! capture finding it stored and its manifest being written. Checkpoint manifests are read only
//! as JSON values: every `blobSha256` string anywhere in one is a reference, and its
//! `createdAtMs` (else the file's time) is its age.

mod scan;

use std::collections::{BTreeMap, HashSet};

use talos_core::retention::{self, Limits};
use talos_protocol::{DaemonGcResult, GcCount};

use scan::{Kind, Place};

use crate::home::Store;

pub use crate::store_gate::{Exclusive, Gate, StoreUse};

/// Where the stores are.
#[derive(Debug, Clone, Copy)]
pub struct Stores<'a> {
    pub traces: &'a Store,
    pub checkpoints: &'a Store,
}

/// Applies the limits once. With `exclusive`, checkpoints (manifests and objects) are pruned
/// too and emptied session folders removed; without it only traces and turn logs of turns not
/// in `running` are.
pub fn sweep(
    stores: Stores<'_>,
    limits: Limits,
    now_ms: u64,
    running: &HashSet<String>,
    exclusive: Option<&Exclusive>,
) -> DaemonGcResult {
    let stored = scan::scan(stores, running, exclusive.is_some());
    let items: Vec<retention::Item> = stored.items.iter().map(|s| s.item.clone()).collect();
    let objects: BTreeMap<String, u64> = stored
        .objects
        .iter()
        .map(|(key, object)| (key.clone(), object.bytes))
        .collect();
    let plan = retention::plan(&items, &objects, limits, now_ms, exclusive.is_some());
    let mut result = DaemonGcResult {
        traces: GcCount::default(),
        turn_logs: GcCount::default(),
        checkpoints: GcCount::default(),
        checkpoint_objects: GcCount::default(),
        sessions: GcCount::default(),
        bytes_after: plan.bytes_after,
        max_bytes: limits.max_bytes,
        max_age_days: limits.max_age_ms / 86_400_000,
        checkpoints_deferred: exclusive.is_none(),
    };
    let mut emptied = Vec::new();
    for (index, _) in &plan.items {
        let Some(stored_item) = stored.items.get(*index) else {
            continue;
        };
        for file in &stored_item.files {
            if remove(&file.place) {
                count(&mut result, file.kind).files += 1;
                count(&mut result, file.kind).bytes += file.bytes;
            }
        }
        if let Some(dir) = &stored_item.session_dir {
            emptied.push(dir.clone());
        }
    }
    for (key, _) in &plan.objects {
        if let Some(object) = stored.objects.get(key)
            && remove(&object.place)
        {
            result.checkpoint_objects.files += 1;
            result.checkpoint_objects.bytes += object.bytes;
        }
    }
    if exclusive.is_some() {
        emptied.sort_by(|a: &Place, b: &Place| a.name.cmp(&b.name));
        emptied.dedup_by(|a, b| a.name == b.name);
        for dir in emptied {
            // Fails, as it should, unless the folder is empty.
            let _ = dir.folder.remove_dir(&dir.name);
        }
    }
    result
}

fn count(result: &mut DaemonGcResult, kind: Kind) -> &mut GcCount {
    match kind {
        Kind::Trace => &mut result.traces,
        Kind::TurnLog => &mut result.turn_logs,
        Kind::Manifest => &mut result.checkpoints,
    }
}

/// Unlinks one entry (a symlink put there meanwhile is removed itself, never followed).
fn remove(place: &Place) -> bool {
    match place.folder.remove_file(&place.name) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(path = %place.folder.shown(&place.name).display(), error = %e, "retention: cannot remove");
            false
        }
    }
}

#[cfg(test)]
mod tests;

//! The gate between the turns and the retention sweep: a turn (or another checkpoint writer)
//! holds it shared for its whole length, the checkpoint sweep needs it exclusively, and it keeps
//! the trace ids of the turns running now, whose traces and turn logs are never removed. A leaf
//! shared by the daemon's state (`server::Daemon` holds one), the turns and `retention`, which
//! re-exports it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

/// Who is using the stores: turns (shared) against the checkpoint sweep (exclusive), and the
/// trace ids of the turns running now.
#[derive(Debug, Default)]
pub struct Gate {
    lock: Arc<RwLock<()>>,
    running: Arc<Mutex<HashSet<String>>>,
}

/// Held by a running turn (or anything else that writes checkpoints): the sweep waits for it.
#[derive(Debug)]
pub struct StoreUse {
    _shared: OwnedRwLockReadGuard<()>,
    running: Arc<Mutex<HashSet<String>>>,
    trace_id: Option<String>,
}

/// Held by a sweep that may touch checkpoints: no turn runs meanwhile.
#[derive(Debug)]
pub struct Exclusive {
    _guard: OwnedRwLockWriteGuard<()>,
}

impl Gate {
    /// Enters the stores for a turn whose trace is `trace_id` (or, with `None`, for other
    /// checkpoint writers); waits while a sweep holds them.
    pub async fn enter(&self, trace_id: Option<&str>) -> StoreUse {
        let shared = self.lock.clone().read_owned().await;
        if let (Some(id), Ok(mut running)) = (trace_id, self.running.lock()) {
            running.insert(id.to_string());
        }
        StoreUse {
            _shared: shared,
            running: self.running.clone(),
            trace_id: trace_id.map(str::to_string),
        }
    }

    /// The stores alone, when no one uses them now.
    pub fn try_exclusive(&self) -> Option<Exclusive> {
        self.lock
            .clone()
            .try_write_owned()
            .ok()
            .map(|guard| Exclusive { _guard: guard })
    }

    /// The trace ids of the turns running now.
    pub fn running(&self) -> HashSet<String> {
        self.running.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for StoreUse {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut running)) = (&self.trace_id, self.running.lock()) {
            running.remove(id);
        }
    }
}

//! The gate (turns shared, the checkpoint sweep exclusive, running trace ids registered) and the
//! sweep keeping a running turn's files.

// std::fs here: the test homes are built and broken by path.
#![allow(clippy::disallowed_methods)]

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;

const DAY_MS: u64 = 86_400_000;

fn plant(dir: &Path, name: &str, days: u64) {
    let path = dir.join(name);
    std::fs::write(&path, "x").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(days * 86_400))
        .unwrap();
}

fn limits() -> Limits {
    Limits {
        max_age_ms: 30 * DAY_MS,
        max_bytes: 1 << 30,
    }
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

#[tokio::test]
async fn a_running_turn_holds_the_stores_and_registers_its_trace() {
    let gate = Gate::default();
    let first = gate.enter(Some("trc-a")).await;
    let second = gate.enter(None).await;
    assert!(gate.try_exclusive().is_none(), "no sweep while a turn runs");
    assert_eq!(gate.running(), HashSet::from(["trc-a".to_string()]));
    drop(first);
    assert!(gate.running().is_empty());
    assert!(
        gate.try_exclusive().is_none(),
        "any holder keeps the sweep out"
    );
    drop(second);
    let exclusive = gate.try_exclusive();
    assert!(exclusive.is_some());
}

#[test]
fn the_files_of_a_running_turn_are_kept_however_old() {
    let home = tempfile::tempdir().unwrap();
    let traces = home.path().join("traces");
    let session = traces.join("ses-1");
    std::fs::create_dir_all(&session).unwrap();
    for name in [
        "000001-trc-run.json",
        "000001-trc-run.log",
        "000002-trc-old.json",
        "000002-trc-old.log",
    ] {
        plant(&session, name, 90);
    }
    let paths = crate::paths::Home::from_root(home.path());
    let (traces, checkpoints) = (paths.traces(), paths.checkpoints());
    let stores = Stores {
        traces: &traces,
        checkpoints: &checkpoints,
    };
    let running = HashSet::from(["trc-run".to_string()]);
    let result = sweep(stores, limits(), now_ms(), &running, None);
    assert_eq!((result.traces.files, result.turn_logs.files), (1, 1));
    assert!(result.checkpoints_deferred);
    let mut left: Vec<String> = std::fs::read_dir(&session)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["000001-trc-run.json", "000001-trc-run.log"]);
}

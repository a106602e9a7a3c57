//! The hostile race: a thread swaps a directory inside the workspace with a symlink to a
//! directory outside it (`renameat2(RENAME_EXCHANGE)`, atomically, in a tight loop) while the
//! main thread checks a path through the handle and then writes into that directory, at least
//! 10,000 times per resolver. Nothing may ever land outside; the counts say how often the
//! check or the kernel refused and how often the write landed inside.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{CWD, RenameFlags};

use super::{Resolver, Workspace};

const ATTEMPTS: usize = 10_000;

#[derive(Debug, Default)]
struct Counts {
    refused_at_check: usize,
    refused_at_write: usize,
    landed_inside: usize,
    /// After a refused check, the write is tried anyway: only the kernel stands in the way.
    unchecked_refused: usize,
    unchecked_landed_inside: usize,
    swaps: usize,
}

/// A scratch folder on tmpfs when there is one, so 10,000 synced writes take milliseconds.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

fn files_under(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| entries.filter_map(Result::ok).count())
}

fn race(resolver: Resolver) -> Counts {
    let tmp = scratch();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("x")).unwrap();
    let workspace = Workspace::open_with(&root, resolver).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let (d, x): (PathBuf, PathBuf) = (root.join("d"), root.join("x"));
    let swapper = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut swaps = 0;
            while !stop.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(CWD, &d, CWD, &x, RenameFlags::EXCHANGE).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut counts = Counts::default();
    for attempt in 0..ATTEMPTS {
        let raw = format!("d/f{attempt}.txt");
        let resolved = workspace.resolve(&raw);
        let Some(location) = resolved.location.filter(|_| !resolved.facts.escapes) else {
            counts.refused_at_check += 1;
            match workspace.write_atomic(&format!("d/u{attempt}.txt"), &raw, b"unchecked") {
                Ok(()) => counts.unchecked_landed_inside += 1,
                Err(_) => counts.unchecked_refused += 1,
            }
            continue;
        };
        match workspace.write_atomic(&location, &raw, b"written by the race test") {
            Ok(()) => counts.landed_inside += 1,
            Err(_) => counts.refused_at_write += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    counts.swaps = swapper.join().unwrap();

    assert_eq!(
        files_under(&outside),
        0,
        "{resolver:?}: a write landed outside"
    );
    let real = if root.join("d").is_symlink() {
        root.join("x")
    } else {
        root.join("d")
    };
    assert_eq!(
        files_under(&real),
        counts.landed_inside + counts.unchecked_landed_inside,
        "{resolver:?}"
    );
    counts
}

#[test]
fn swapping_a_directory_for_a_link_out_never_writes_outside() {
    for resolver in [Resolver::Openat2, Resolver::ComponentWalk] {
        let started = std::time::Instant::now();
        let counts = race(resolver);
        println!(
            "{resolver:?}: {ATTEMPTS} attempts in {:?}, {} swaps: {} refused at the check, {} refused by the kernel at the write, {} landed inside; writes tried after a refused check: {} refused by the kernel, {} landed inside; 0 outside",
            started.elapsed(),
            counts.swaps,
            counts.refused_at_check,
            counts.refused_at_write,
            counts.landed_inside,
            counts.unchecked_refused,
            counts.unchecked_landed_inside
        );
        assert_eq!(
            counts.refused_at_check + counts.refused_at_write + counts.landed_inside,
            ATTEMPTS
        );
        assert!(counts.swaps > 0, "{resolver:?}: the swapper never ran");
    }
}

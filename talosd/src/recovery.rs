//! What a start does about the last run's crash: it removes the daemon's own leftovers, and
//! nothing else. Only files of the daemon's temporary shapes, only as regular files (a link is
//! never followed, and a link of that name is left alone), only in the places the daemon
//! writes: the trace folders, the checkpoint stores, the profile pins, the persisted sessions,
//! and the workspace temporary files its pending-write entries name (`workspace::PendingLog`).
//!
//! The sweep runs under a lock on the home (`talosd.home.lock`), held for the daemon's life:
//! a second daemon on the same home (with another socket) skips the sweep rather than remove
//! a temporary file the first one is writing.
// std::fs here: the Talos home's own folders, never workspace files.
#![allow(clippy::disallowed_methods)]

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::paths::Home;
use crate::workspace::PendingLog;

/// Held for the daemon's life once the sweep ran.
#[derive(Debug)]
pub struct HomeLock {
    _file: File,
}

/// What the start-up sweep removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub workspace_files: usize,
    pub home_files: usize,
}

/// Takes the home lock and removes the last run's leftovers. `None` when another daemon holds
/// the home (the sweep is skipped) or the lock cannot be opened.
pub fn sweep_at_start(home: &Home) -> Option<(HomeLock, Swept)> {
    let path = home.state.join("talosd.home.lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&path);
    let file = match file {
        Ok(file) => file,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot open the home lock; leftovers are not swept");
            return None;
        }
    };
    if file.try_lock().is_err() {
        tracing::info!(home = %home.state.display(), "another talosd uses this home; leftovers are not swept");
        return None;
    }
    let swept = Swept {
        workspace_files: PendingLog::new(home.pending_writes()).sweep(),
        home_files: sweep_home(home),
    };
    if swept != Swept::default() {
        tracing::info!(
            workspace_files = swept.workspace_files,
            home_files = swept.home_files,
            "removed temporary files left by an earlier crash"
        );
    }
    Some((HomeLock { _file: file }, swept))
}

/// Removes leftover temporary files from the home's own folders.
fn sweep_home(home: &Home) -> usize {
    let mut folders = vec![
        home.state.join("trust").join("workspace-profiles"),
        home.traces(),
        home.sessions(),
    ];
    folders.extend(subfolders(&home.traces()));
    for store in subfolders(&home.checkpoints()) {
        folders.push(store.join("objects"));
        folders.push(store.join("manifests"));
    }
    folders.iter().map(|folder| sweep_folder(folder)).sum()
}

/// The real folders (not links) directly inside `dir`.
fn subfolders(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    listing
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .collect()
}

fn sweep_folder(dir: &Path) -> usize {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in listing.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if regular && is_leftover(&name) && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The daemon's temporary shape, and the shapes earlier versions used (`*.json.tmp` for traces
/// and pins, `*.tmp-<pid>` for checkpoint files).
fn is_leftover(name: &str) -> bool {
    if talos_core::pathname::is_temp_name(name) || name.ends_with(".json.tmp") {
        return true;
    }
    name.rsplit_once(".tmp-")
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_name_rows() {
        let rows: &[(&str, bool)] = &[
            (
                ".000001-trc-a.json.talos-tmp-0123456789abcdef0123456789abcdef",
                true,
            ),
            ("000001-trc-a.json.tmp", true),
            ("chk-a.tmp-4242", true),
            ("0f3a.tmp-", false),
            ("000001-trc-a.json", false),
            ("notes.tmp", false),
        ];
        for (name, expected) in rows {
            assert_eq!(is_leftover(name), *expected, "{name}");
        }
    }

    /// Proves the sweep removes only the daemon's own temporary files, as regular files, in its
    /// own folders: a link of that name, the records beside them and a lookalike stay.
    #[test]
    fn the_sweep_removes_only_the_daemons_own_leftovers() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::from_root(tmp.path());
        home.prepare().unwrap();
        let session = home.traces().join("ses-1");
        let objects = home.checkpoints().join("ws1").join("objects");
        std::fs::create_dir_all(&session).unwrap();
        std::fs::create_dir_all(&objects).unwrap();
        let hex = "0123456789abcdef0123456789abcdef";
        let leftover = session.join(talos_core::pathname::temp_name("000001-trc.json", hex));
        let legacy = objects.join("ab12.tmp-77");
        std::fs::create_dir_all(home.sessions()).unwrap();
        let session_leftover = home
            .sessions()
            .join(talos_core::pathname::temp_name("ses-1.json", hex));
        let session_file = home.sessions().join("ses-1.json");
        let kept = session.join("000001-trc.json");
        let outside = tmp.path().join("precious");
        let link = session.join(talos_core::pathname::temp_name("000002-trc.json", hex));
        for file in [
            &leftover,
            &legacy,
            &kept,
            &outside,
            &session_leftover,
            &session_file,
        ] {
            std::fs::write(file, b"x").unwrap();
        }
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let (_lock, swept) = sweep_at_start(&home).unwrap();
        assert_eq!(swept.home_files, 3);
        assert!(!leftover.exists() && !legacy.exists() && !session_leftover.exists());
        assert!(kept.exists() && outside.exists() && session_file.exists());
        assert!(
            std::fs::symlink_metadata(&link).is_ok(),
            "a link is left alone"
        );
        assert!(sweep_at_start(&home).is_none(), "the home is held");
    }
}

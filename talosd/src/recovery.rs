//! What a start does about the last run's crash: it removes the daemon's own leftovers, and
//! nothing else. Only files of the daemon's temporary shapes, only as regular files (a link is
//! never followed, and a link of that name is left alone), only in the places the daemon
//! writes: the trace folders, the checkpoint stores, the profile pins, the persisted sessions,
//! and the workspace temporary files its pending-write entries name (`workspace::PendingLog`).
//!
//! The sweep runs under a lock on the home (`talosd.home.lock`), held for the daemon's life:
//! a second daemon on the same home (with another socket) skips the sweep rather than remove
//! a temporary file the first one is writing.
use crate::home::Store;
use crate::paths::Home;
use crate::workspace::EntryKind;
use crate::workspace::PendingLog;

/// Held for the daemon's life once the sweep ran.
#[derive(Debug)]
pub struct HomeLock {
    _file: crate::home::LockFile,
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
    let path = home.state_store().shown("talosd.home.lock");
    let file = home.state_store().open_lock("talosd.home.lock");
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
    let mut folders = vec![home.pins(), home.traces(), home.sessions()];
    folders.extend(subfolders(&home.traces()));
    for store in subfolders(&home.checkpoints()) {
        folders.push(store.child("objects"));
        folders.push(store.child("manifests"));
    }
    folders.iter().map(sweep_folder).sum()
}

/// The real folders (not links) directly inside `dir`.
fn subfolders(dir: &Store) -> Vec<Store> {
    dir.names(".", EntryKind::Directory)
        .iter()
        .map(|name| dir.child(name))
        .collect()
}

fn sweep_folder(dir: &Store) -> usize {
    dir.names(".", EntryKind::File)
        .iter()
        .filter(|name| is_leftover(name) && dir.remove_file(name).is_ok())
        .count()
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
// std::fs in the tests: hostile homes are built by path.
#[allow(clippy::disallowed_methods)]
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
        let session = home.traces().path().join("ses-1");
        let objects = home.checkpoints().path().join("ws1").join("objects");
        std::fs::create_dir_all(&session).unwrap();
        std::fs::create_dir_all(&objects).unwrap();
        let hex = "0123456789abcdef0123456789abcdef";
        let leftover = session.join(talos_core::pathname::temp_name("000001-trc.json", hex));
        let legacy = objects.join("ab12.tmp-77");
        std::fs::create_dir_all(home.sessions().path()).unwrap();
        let session_leftover = home
            .sessions()
            .path()
            .join(talos_core::pathname::temp_name("ses-1.json", hex));
        let session_file = home.sessions().path().join("ses-1.json");
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

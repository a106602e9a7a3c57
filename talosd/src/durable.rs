//! Durable replacement of the daemon's own files under the Talos home (trace records,
//! checkpoint objects and manifests, profile pins): the bytes go to a fresh temporary file
//! beside the target (`.<name>.talos-tmp-<hex>`, mode 0600, never through a link), are synced,
//! renamed over the target, and then the directory is synced, so a rename the outcome already
//! reported survives a power loss. Leftover temporary files from a crash are removed at start
//! by `recovery`.
//!
//! A turn's own records are batched instead (issue 26, defect 10): files the turn creates
//! (the checkpoint's object and manifest, the after-state, the trace, the turn log) are
//! written and renamed unsynced ([`write_unsynced`]), a file that replaces one a reader relies
//! on (the session) has its data synced before the rename ([`replace_data_synced`]), and one
//! `syncfs` of the home's filesystem ([`sync_filesystem`]) then makes all of them, their
//! folders and any new folder durable at once: before the workspace is written (the
//! checkpoint) and before the outcome is reported (the rest). A power loss before that sync
//! can leave the unsynced new files empty or short; each reader treats such a file as absent
//! (an unreadable manifest or trace is skipped, an object is checked against its hash), and
//! nothing that was reported depended on it.
// std::fs here: files under the Talos home, never workspace files.
#![allow(clippy::disallowed_methods)]

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Whether the directory is synced after the rename. Always `Yes` in the daemon; `No` exists so
/// `talos-bench` can show what the directory sync costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncDir {
    Yes,
    No,
}

/// Replaces `path` with `bytes` durably (see the module docs).
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with(path, bytes, SyncDir::Yes)
}

/// [`replace`], with the directory sync chosen.
pub fn replace_with(path: &Path, bytes: &[u8], sync_dir: SyncDir) -> std::io::Result<()> {
    write_and_rename(path, bytes, FileSync::All)?;
    match (sync_dir, path.parent()) {
        (SyncDir::Yes, Some(dir)) => sync_directory(dir),
        _ => Ok(()),
    }
}

/// Writes `bytes` to a fresh temporary file beside `path` and renames it over `path`, with no
/// sync: for a new file a later [`sync_filesystem`] makes durable (see the module docs).
pub fn write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_and_rename(path, bytes, FileSync::None)
}

/// [`write_unsynced`], with the file's data synced before the rename, so the replaced file is
/// either the old bytes or the new ones after a power loss; its folder is left to a later
/// [`sync_filesystem`].
pub fn replace_data_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_and_rename(path, bytes, FileSync::Data)
}

/// How the temporary file is synced before its rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileSync {
    None,
    Data,
    All,
}

/// The one temporary-file-then-rename of this module: a fresh 0600 file beside `path`, never
/// through a link, synced as asked, renamed over `path`; removed again when anything fails.
fn write_and_rename(path: &Path, bytes: &[u8], sync: FileSync) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other(format!(
            "{} has no parent directory",
            path.display()
        )));
    };
    let id = crate::ids::new_id("x").map_err(|e| e.0)?;
    let temp = dir.join(talos_core::pathname::temp_name(
        &name.to_string_lossy(),
        id.trim_start_matches("x-"),
    ));
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&temp)?;
        file.write_all(bytes)?;
        match sync {
            FileSync::None => {}
            FileSync::Data => file.sync_data()?,
            FileSync::All => file.sync_all()?,
        }
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    Ok(())
}

/// One `syncfs` of the filesystem that holds `dir`: every write, rename and new folder on it
/// so far is durable when it returns.
pub fn sync_filesystem(dir: &Path) -> std::io::Result<()> {
    let handle = File::open(dir)?;
    rustix::fs::syncfs(&handle).map_err(std::io::Error::from)
}

/// `fsync` on a directory: makes the entries created, renamed or removed in it durable.
pub fn sync_directory(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_holds_the_new_bytes_and_no_temporary_file_is_left() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("trace.json");
        std::fs::write(&path, b"old").unwrap();
        replace(&path, b"new").unwrap();
        replace_with(&path, b"newer", SyncDir::No).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"newer");
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["trace.json"]);
    }

    #[test]
    fn a_missing_directory_fails_and_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("missing/trace.json");
        assert!(replace(&path, b"x").is_err());
        assert!(!tmp.path().join("missing").exists());
    }
}

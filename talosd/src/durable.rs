//! Durable replacement of the daemon's own files under the Talos home (trace records,
//! checkpoint objects and manifests, profile pins): the bytes go to a fresh temporary file
//! beside the target (`.<name>.talos-tmp-<hex>`, mode 0600, never through a link), are synced,
//! renamed over the target, and then the directory is synced, so a rename the outcome already
//! reported survives a power loss. Leftover temporary files from a crash are removed at start
//! by `recovery`.
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
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    match sync_dir {
        SyncDir::Yes => sync_directory(dir),
        SyncDir::No => Ok(()),
    }
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

//! Reading and placing the daemon's own files under the Talos home with the workspace's rules
//! (issue 26, defect 13): a file is read only when it is a regular file, opened without
//! following a final link and without blocking (a FIFO or device planted in a store is never
//! waited on or read), and no larger than its cap; a store folder is used only when every
//! folder from the home down to it is a real folder, never a link (so a planted link cannot
//! send checkpoint objects, traces or sessions out of the home). Missing folders are made,
//! private (0700).
// std::fs here: files under the Talos home, never workspace files.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path};

/// The names of the regular files in the folder `dir` (not following links), sorted; none
/// when it is not a real folder.
pub fn regular_names(dir: &Path) -> Vec<String> {
    let real = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    let entries = if real {
        std::fs::read_dir(dir).ok()
    } else {
        None
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// The bytes of the regular file at `path`, at most `max` of them; an error for anything
/// else (a link, a FIFO, a device, a folder, a larger file), without waiting on it.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "{} is larger than {max} bytes",
            path.display()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes sure `dir` (beneath `base`, a store of the home) is a real folder all the way down
/// from `base`, making the missing ones (0700); an error naming the first link or non-folder.
pub fn real_dir(base: &Path, dir: &Path) -> std::io::Result<()> {
    let relative = dir.strip_prefix(base).map_err(|_| {
        std::io::Error::other(format!(
            "{} is not beneath {}",
            dir.display(),
            base.display()
        ))
    })?;
    let mut at = base.to_path_buf();
    if std::fs::symlink_metadata(&at).is_err() {
        // `recursive` also succeeds when another writer made it meanwhile.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&at)?;
    }
    check_folder(&at)?;
    for part in relative.components() {
        let Component::Normal(name) = part else {
            return Err(std::io::Error::other(format!(
                "{} is not a plain path",
                dir.display()
            )));
        };
        at.push(name);
        match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::DirBuilder::new().mode(0o700).create(&at) {
                    Ok(()) => {}
                    // Made meanwhile by another session's write: checked like any other.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => check_folder(&at)?,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
            Ok(_) => check_folder(&at)?,
        }
    }
    Ok(())
}

fn check_folder(at: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(at)?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is {}; the Talos home's stores are real folders, never followed out of the home",
            at.display(),
            if meta.file_type().is_symlink() {
                "a symlink"
            } else {
                "not a folder"
            }
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read_regular(&file, 10).unwrap(), b"{}");
        assert!(read_regular(&file, 1).is_err(), "over the cap");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            0o600.into(),
            0,
        )
        .unwrap();
        assert!(
            read_regular(&fifo, 10).is_err(),
            "a FIFO is refused without blocking"
        );
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read_regular(&zero, 10).is_err(), "a link is not followed");
        assert!(
            read_regular(Path::new("/dev/zero"), 10).is_err(),
            "a device is refused"
        );
    }

    #[test]
    fn two_writers_making_one_folder_both_succeed() {
        for _ in 0..50 {
            let home = tempfile::tempdir().unwrap();
            let base = home.path().join("checkpoints");
            let dir = base.join("ws/objects");
            std::thread::scope(|s| {
                let a = s.spawn(|| real_dir(&base, &dir));
                let b = s.spawn(|| real_dir(&base, &dir));
                a.join().unwrap().unwrap();
                b.join().unwrap().unwrap();
            });
        }
    }

    #[test]
    fn store_folders_are_real_folders_down_from_the_home() {
        let home = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let base = home.path().join("checkpoints");
        std::fs::create_dir(&base).unwrap();
        real_dir(&base, &base.join("ws/objects")).unwrap();
        assert!(base.join("ws/objects").is_dir());
        std::os::unix::fs::symlink(outside.path(), base.join("evil")).unwrap();
        let error = real_dir(&base, &base.join("evil/objects"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("is a symlink"), "{error}");
        assert!(
            !outside.path().join("objects").exists(),
            "nothing made outside"
        );
    }
}

//! Reading and changing files beneath the root. Reads open the file beneath the root with
//! `O_NONBLOCK | O_NOFOLLOW` and check its type on the descriptor, so a FIFO or device never
//! blocks and is never read. Every change happens relative to a directory descriptor that was
//! itself opened beneath the root without passing a link: the temporary file is created there
//! with `O_CREAT | O_EXCL | O_NOFOLLOW` and renamed over the target with `renameat` in the
//! same directory; directories are made with `mkdirat`, removed with `unlinkat`, copied
//! without following links.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{
    EntryKind, Links, MAX_FILE_BYTES, Workspace, WorkspaceError, io_error, location_segments,
};
use crate::beneath::{entries, kind_at, make_dirs, open_child_dir, remove_entry, sync_folder};

/// Whether a read may read a regular file that has more than one link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sharing {
    Allowed,
    Refused,
}

impl Workspace {
    /// Reads a regular file, refusing a symlink in the final position, anything that is not a
    /// regular file, and files over [`MAX_FILE_BYTES`]. `Ok(None)` when it does not exist.
    pub fn read(&self, location: &str, shown: &str) -> Result<Option<Vec<u8>>, WorkspaceError> {
        self.read_limited(location, shown, MAX_FILE_BYTES)
    }

    /// [`Workspace::read`] for a reader that sends what it reads on without an approval (grep,
    /// pins): a regular file with more than one link is refused with
    /// [`WorkspaceError::HardLinked`], its link count checked on the opened descriptor, so
    /// bytes shared with a file outside the workspace are never read this way. (A
    /// `talos.read_file` of such a file asks first: the ladder's `HARD_LINK_ASK`.)
    pub fn read_unshared(
        &self,
        location: &str,
        shown: &str,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        self.read_checked(location, shown, MAX_FILE_BYTES, Sharing::Refused)
    }

    /// [`Workspace::read_unshared`] with another size cap (the index reads what it may show in
    /// search results without an approval, so it never reads a shared inode).
    pub fn read_unshared_limited(
        &self,
        location: &str,
        shown: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        self.read_checked(location, shown, limit, Sharing::Refused)
    }

    /// [`Workspace::read`] with another size cap (checkpoints copy larger files).
    pub fn read_limited(
        &self,
        location: &str,
        shown: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        self.read_checked(location, shown, limit, Sharing::Allowed)
    }

    fn read_checked(
        &self,
        location: &str,
        shown: &str,
        limit: u64,
        sharing: Sharing,
    ) -> Result<Option<Vec<u8>>, WorkspaceError> {
        let fd = match self.open_beneath(
            location,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW,
            Mode::empty(),
            Links::Beneath,
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(io_error("cannot open", shown, e)),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| io_error("cannot inspect", shown, e))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(WorkspaceError::IsDirectory(shown.into())),
            _ => {
                return Err(WorkspaceError::NotAllowed {
                    path: shown.into(),
                    problem: "not a regular file".into(),
                });
            }
        }
        let links = super::link_count(&stat);
        if sharing == Sharing::Refused && links > 1 {
            return Err(WorkspaceError::HardLinked {
                path: shown.into(),
                links,
            });
        }
        let len = u64::try_from(stat.st_size).unwrap_or(0);
        if len > limit {
            return Err(WorkspaceError::TooLarge { kb: len / 1024 });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        std::fs::File::from(fd)
            .read_to_end(&mut bytes)
            .map_err(|source| WorkspaceError::Io {
                context: "cannot read",
                path: shown.into(),
                source,
            })?;
        Ok(Some(bytes))
    }

    /// Replaces `location` with `bytes` atomically: missing parents are made beneath the root,
    /// a fresh file is created beside the target in the parent's descriptor (never following a
    /// link), synced, then renamed over the target in the same descriptor.
    pub fn write_atomic(
        &self,
        location: &str,
        shown: &str,
        bytes: &[u8],
    ) -> Result<(), WorkspaceError> {
        let not_allowed = |problem: &str| WorkspaceError::NotAllowed {
            path: shown.into(),
            problem: problem.into(),
        };
        let io = |context: &'static str| move |e: Errno| io_error(context, shown, e);
        let segments = location_segments(location)
            .map_err(|_| not_allowed("path is not a workspace location"))?;
        let Some((name, parents)) = segments.split_last() else {
            return Err(not_allowed("no parent directory"));
        };
        let parent = match self.make_dirs(parents) {
            Ok(fd) => fd,
            Err(Errno::LOOP | Errno::XDEV | Errno::NOTDIR) => {
                return Err(not_allowed(
                    "parent directory changed or leaves the workspace",
                ));
            }
            Err(e) => return Err(io("cannot create parent of")(e)),
        };
        let mode = match rustix::fs::statat(&parent, *name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => return Err(not_allowed("target is a symlink")),
                FileType::Directory => return Err(WorkspaceError::IsDirectory(shown.into())),
                _ => stat.st_mode & 0o7777,
            },
            Err(_) => 0o644,
        };
        let id = crate::ids::new_id("tmp").map_err(|e| WorkspaceError::Io {
            context: "cannot name a temporary file for",
            path: shown.into(),
            source: e.0,
        })?;
        let key = id.trim_start_matches("tmp-");
        let temp = talos_core::pathname::temp_name(name, key);
        let mut temp_location = parents.to_vec();
        temp_location.push(temp.as_str());
        let pending = self.pending.as_ref().and_then(|log| {
            log.begin(
                &self.root,
                &talos_core::pathname::joined(&temp_location),
                key,
            )
        });
        let result = (|| {
            let fd = rustix::fs::openat(
                &parent,
                temp.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(mode),
            )
            .map_err(io("cannot create temporary file for"))?;
            let mut file = std::fs::File::from(fd);
            file.write_all(bytes).map_err(|source| WorkspaceError::Io {
                context: "cannot write",
                path: shown.into(),
                source,
            })?;
            file.sync_all().map_err(|source| WorkspaceError::Io {
                context: "cannot sync",
                path: shown.into(),
                source,
            })?;
            rustix::fs::renameat(&parent, temp.as_str(), &parent, *name)
                .map_err(io("cannot replace"))?;
            // The rename is what the outcome reports: make it survive a power loss. It has
            // happened either way, so a failed folder sync is logged, not reported as a failed
            // write.
            if let Err(e) = sync_folder(&parent) {
                tracing::warn!(path = shown, error = %e, "cannot sync the folder after a write");
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&parent, temp.as_str(), AtFlags::empty());
        }
        super::PendingLog::end(pending);
        result
    }

    /// `mkdir -p` of `location` beneath the root.
    pub fn create_dir_all(&self, location: &str) -> std::io::Result<()> {
        let segments = location_segments(location)?;
        self.make_dirs(&segments)?;
        Ok(())
    }

    /// Makes each missing directory of `segments` with `mkdirat` in its parent's descriptor
    /// and returns a descriptor of the last one; a link at any position is refused.
    fn make_dirs(&self, segments: &[&str]) -> Result<OwnedFd, Errno> {
        make_dirs(
            self.root_fd(),
            self.resolver,
            segments,
            Mode::from_raw_mode(0o777),
        )
    }

    /// Removes the file, link or directory tree at `location` (links are removed, never
    /// followed).
    pub fn remove(&self, location: &str) -> std::io::Result<()> {
        let (parent, name) = self.parent_and_name(location)?.ok_or_else(root_refused)?;
        remove_entry(&parent, name)
    }

    /// Renames `from` to `to` (both beneath the root, parents opened link-free).
    pub fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (from_parent, from_name) = self.parent_and_name(from)?.ok_or_else(root_refused)?;
        let (to_parent, to_name) = self.parent_and_name(to)?.ok_or_else(root_refused)?;
        rustix::fs::renameat(&from_parent, from_name, &to_parent, to_name)?;
        // Made durable (both folders); the rename happened either way, so a failed sync is
        // logged rather than reported as a failed move.
        for folder in [&to_parent, &from_parent] {
            if let Err(e) = sync_folder(folder) {
                tracing::warn!(from, to, error = %e, "cannot sync a folder after a move");
            }
        }
        Ok(())
    }

    /// Copies a file, or a directory tree, from `from` to `to` without following links (links
    /// are not copied).
    pub fn copy_tree(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (from_parent, from_name) = self.parent_and_name(from)?.ok_or_else(root_refused)?;
        let (to_parent, to_name) = self.parent_and_name(to)?.ok_or_else(root_refused)?;
        copy_entry(&from_parent, from_name, &to_parent, to_name)
    }
}

fn root_refused() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        "the workspace root itself",
    )
}

fn copy_entry(
    from_parent: &OwnedFd,
    from_name: &str,
    to_parent: &OwnedFd,
    to_name: &str,
) -> std::io::Result<()> {
    match kind_at(from_parent, from_name)? {
        EntryKind::Symlink => Ok(()),
        EntryKind::File => {
            let source = rustix::fs::openat(
                from_parent,
                from_name,
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let stat = rustix::fs::fstat(&source)?;
            if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
                return Err(not_regular());
            }
            let target = rustix::fs::openat(
                to_parent,
                to_name,
                OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::TRUNC
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC,
                Mode::from_raw_mode(stat.st_mode & 0o7777),
            )?;
            rustix::fs::fchmod(&target, Mode::from_raw_mode(stat.st_mode & 0o7777))?;
            let mut reader = std::fs::File::from(source);
            let mut writer = std::fs::File::from(target);
            std::io::copy(&mut reader, &mut writer)?;
            Ok(())
        }
        EntryKind::Directory => {
            match rustix::fs::mkdirat(to_parent, to_name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            let source = open_child_dir(from_parent, from_name)?;
            let target = open_child_dir(to_parent, to_name)?;
            let listing = rustix::fs::openat(
                &source,
                ".",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            let listed = entries(listing)?;
            for entry in listed
                .iter()
                .filter(|e| !talos_core::pathname::is_temp_name(&e.name))
            {
                copy_entry(&source, &entry.name, &target, &entry.name)?;
            }
            Ok(())
        }
        EntryKind::Other => Err(not_regular()),
    }
}

fn not_regular() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "the source is neither a regular file nor a directory",
    )
}

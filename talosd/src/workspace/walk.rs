//! Listing beneath the root: one directory's entries, the bounded name walk `list_dir` shows,
//! and the file walk `grep`, the static web verifier and checkpoints use. Every directory is
//! opened beneath the root in the kernel; links are listed, never descended into.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Workspace;
use crate::beneath::{DirEntry, EntryKind, Links, entries};

/// A regular file's size and modification time, as a stat without following links saw them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    pub mtime_ns: i128,
}

/// `location` joined with a child's name.
pub fn child(location: &str, name: &str) -> String {
    if location == "." {
        name.to_string()
    } else {
        format!("{location}/{name}")
    }
}

impl Workspace {
    /// What is at `location` (the last component not followed); `None` when nothing is.
    pub fn kind(&self, location: &str) -> std::io::Result<Option<EntryKind>> {
        let Some((parent, name)) = (match self.parent_and_name(location) {
            Ok(found) => found,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        }) else {
            return Ok(Some(EntryKind::Directory));
        };
        match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(EntryKind::of(FileType::from_raw_mode(stat.st_mode)))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether anything (a link included) is at `location`.
    pub fn exists(&self, location: &str) -> bool {
        matches!(self.kind(location), Ok(Some(_)))
    }

    /// The entries of the directory `location`, sorted by name.
    pub fn read_dir(&self, location: &str) -> std::io::Result<Vec<DirEntry>> {
        let fd = self.open_beneath(
            location,
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
            Links::Beneath,
        )?;
        // The daemon's own temporary files (a write in flight, or a crash's leftover until the
        // next start removes it) are never shown: not to listings, search or checkpoints.
        let mut listed = entries(fd)?;
        listed.retain(|e| !talos_core::pathname::is_temp_name(&e.name));
        Ok(listed)
    }

    /// [`Workspace::read_dir`] with the stamp of each regular file, statted in the opened
    /// directory without following a link (`None` for anything else, or a file that went).
    pub fn read_dir_stamped(
        &self,
        location: &str,
    ) -> std::io::Result<Vec<(DirEntry, Option<FileStamp>)>> {
        let fd = self.open_beneath(
            location,
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
            Links::Beneath,
        )?;
        let dir = fd.try_clone()?;
        let mut listed = entries(fd)?;
        listed.retain(|e| !talos_core::pathname::is_temp_name(&e.name));
        Ok(listed
            .into_iter()
            .map(|entry| {
                let stamp = (entry.kind == EntryKind::File)
                    .then(|| {
                        rustix::fs::statat(&dir, entry.name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                    })
                    .and_then(Result::ok)
                    .filter(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile)
                    .map(|stat| FileStamp {
                        size: u64::try_from(stat.st_size).unwrap_or(0),
                        mtime_ns: i128::from(stat.st_mtime) * 1_000_000_000
                            + i128::from(stat.st_mtime_nsec),
                    });
                (entry, stamp)
            })
            .collect())
    }

    /// Names under `location` down to `depth` levels, directories with a trailing `/`, in
    /// name order, at most `cap`, relative to `location`.
    pub fn list_names(&self, location: &str, depth: usize, cap: usize) -> Vec<String> {
        let mut out = Vec::new();
        self.walk_names(location, "", depth, &mut out, cap);
        out
    }

    fn walk_names(
        &self,
        location: &str,
        shown: &str,
        depth: usize,
        out: &mut Vec<String>,
        cap: usize,
    ) {
        let Ok(children) = self.read_dir(location) else {
            return;
        };
        for entry in children {
            if out.len() >= cap {
                return;
            }
            let rel = if shown.is_empty() {
                entry.name.clone()
            } else {
                format!("{shown}/{}", entry.name)
            };
            if entry.kind == EntryKind::Directory {
                out.push(format!("{rel}/"));
                if depth > 1 {
                    self.walk_names(&child(location, &entry.name), &rel, depth - 1, out, cap);
                }
            } else {
                out.push(rel);
            }
        }
    }

    /// Regular files under `location` (workspace-relative locations), never through a link,
    /// skipping directories named in `skip`, until `keep` has accepted `limit` of them.
    pub fn files(
        &self,
        location: &str,
        skip: &[&str],
        limit: usize,
        keep: &mut dyn FnMut(&str) -> bool,
    ) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![location.to_string()];
        while let Some(dir) = stack.pop() {
            let Ok(children) = self.read_dir(&dir) else {
                continue;
            };
            let mut subdirs = Vec::new();
            for entry in children {
                let path = child(&dir, &entry.name);
                match entry.kind {
                    EntryKind::Directory if !skip.contains(&entry.name.as_str()) => {
                        subdirs.push(path);
                    }
                    EntryKind::File if keep(&path) => {
                        out.push(path);
                        if out.len() >= limit {
                            return out;
                        }
                    }
                    EntryKind::Directory
                    | EntryKind::File
                    | EntryKind::Symlink
                    | EntryKind::Other => {}
                }
            }
            stack.extend(subdirs.into_iter().rev());
        }
        out
    }
}

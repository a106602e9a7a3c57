//! A store of the home: a location beneath one of the home's roots, every operation relative to
//! the root's descriptor and never through a link (see `home.rs`). Locations are plain
//! `/`-separated names (no `.`, `..` or empty segment; `.` alone is the store itself); a store
//! never builds a path for its own IO.

use std::io::{Read, Write};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Root;
use crate::beneath::{DirEntry, EntryKind, Links};

/// A folder of the home, reached only through its root's descriptor.
#[derive(Debug, Clone)]
pub struct Store {
    root: Arc<Root>,
    /// Beneath the root; `.` for the root itself.
    location: String,
}

/// An open lock file of the home (held for as long as the value lives).
pub type LockFile = std::fs::File;

/// How a written file is synced before its rename (see `home.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// No sync: a new file of a turn, made durable by the turn's `syncfs`.
    None,
    /// The data synced before the rename (a file that replaces one a reader relies on); the
    /// folder is left to a later `syncfs`.
    Data,
    /// File and folder synced: durable when the call returns.
    Full,
    /// The file synced, the folder not (only `talos-bench`, to show what the folder sync costs).
    FileOnly,
}

/// What a stat without following a link saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub kind: EntryKind,
    pub size: u64,
    /// Milliseconds since the epoch of the last modification.
    pub modified_ms: u64,
    pub uid: u32,
    pub mode: u32,
}

impl Store {
    /// The store at `location` beneath `root` (`.` for the root itself).
    pub fn new(root: Arc<Root>, location: &str) -> Store {
        Store {
            root,
            location: location.to_string(),
        }
    }

    /// The store `name` inside this one (`name` may hold several segments).
    pub fn child(&self, name: &str) -> Store {
        Store {
            root: Arc::clone(&self.root),
            location: self.at(name),
        }
    }

    /// The store's path, for display, records and programs that need a path (tantivy,
    /// llama-server's log); the store's own IO never uses it.
    pub fn path(&self) -> PathBuf {
        self.shown(".")
    }

    /// The path of `name` in this store, for messages and records.
    pub fn shown(&self, name: &str) -> PathBuf {
        let at = self.at(name);
        if at == "." {
            self.root.path().to_path_buf()
        } else {
            self.root.path().join(at)
        }
    }

    /// The bytes of the regular file `name`, at most `max` of them; an error for anything else
    /// (a link at any position, a FIFO, a device, a folder, a larger file), without waiting.
    pub fn read(&self, name: &str, max: u64) -> std::io::Result<Vec<u8>> {
        let (file, stamp) = self.open_regular(name)?;
        if stamp.size > max {
            return Err(std::io::Error::other(format!(
                "{} is larger than {max} bytes",
                self.shown(name).display()
            )));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(stamp.size).unwrap_or(0));
        file.take(max).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The regular file `name` opened for reading (never through a link, never blocking on a
    /// FIFO) and its stamp from the opened descriptor.
    pub fn open_regular(&self, name: &str) -> std::io::Result<(std::fs::File, Stamp)> {
        let fd = self.open(
            name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        let stat = rustix::fs::fstat(&fd)?;
        let stamp = stamp_of(&stat);
        if stamp.kind != EntryKind::File {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", self.shown(name).display()),
            ));
        }
        Ok((std::fs::File::from(fd), stamp))
    }

    /// Replaces `name` with `bytes`: missing folders are made (0700, link-free), a fresh 0600
    /// file is created beside the target in its folder's descriptor, synced as `sync` asks,
    /// and renamed over the target in that descriptor; removed again when anything fails.
    pub fn write(&self, name: &str, bytes: &[u8], sync: Durability) -> std::io::Result<()> {
        let (folder, file_name) = self.split(name)?;
        let parent = self.make_folder(&folder)?;
        let id = crate::ids::new_id("x").map_err(|e| e.0)?;
        let temp = talos_core::pathname::temp_name(file_name, id.trim_start_matches("x-"));
        let written = (|| -> std::io::Result<()> {
            let fd = rustix::fs::openat(
                &parent,
                temp.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )?;
            let mut file = std::fs::File::from(fd);
            file.write_all(bytes)?;
            match sync {
                Durability::None => {}
                Durability::Data => file.sync_data()?,
                Durability::Full | Durability::FileOnly => file.sync_all()?,
            }
            rustix::fs::renameat(&parent, temp.as_str(), &parent, file_name)?;
            Ok(())
        })();
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&parent, temp.as_str(), AtFlags::empty());
            return Err(self.explain(name, e));
        }
        if sync == Durability::Full {
            crate::beneath::sync_folder(&parent)?;
        }
        Ok(())
    }

    /// Makes the folder `name` (and the store, and every folder between) when missing, 0700,
    /// never through a link.
    pub fn make_dirs(&self, name: &str) -> std::io::Result<()> {
        self.make_folder(&self.at(name)).map(drop)
    }

    /// [`Store::make_dirs`], and the folder `name` made private (0700) when others may use it:
    /// traces and checkpoints hold paths and file contents.
    pub fn make_private(&self, name: &str) -> std::io::Result<()> {
        self.make_dirs(name)?;
        let fd = self.open(
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        let stat = rustix::fs::fstat(&fd)?;
        if stat.st_mode & 0o077 != 0 {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o700))?;
        }
        Ok(())
    }

    /// The entries of the folder `name`, sorted by name (links listed, never followed); an
    /// error when it is missing, a link or not a folder.
    pub fn entries(&self, name: &str) -> std::io::Result<Vec<DirEntry>> {
        let fd = self.open(name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
        crate::beneath::entries(fd)
    }

    /// The names of the entries of kind `kind` in the folder `name`, sorted; none when it is not
    /// a real folder.
    pub fn names(&self, name: &str, kind: EntryKind) -> Vec<String> {
        self.entries(name)
            .unwrap_or_default()
            .into_iter()
            .filter(|entry| entry.kind == kind)
            .map(|entry| entry.name)
            .collect()
    }

    /// What is at `name`, the last component not followed; `None` when nothing is (or a
    /// folder on the way is a link).
    pub fn stamp(&self, name: &str) -> Option<Stamp> {
        let (folder, file_name) = self.split(name).ok()?;
        let parent = self.folder_fd(&folder).ok()?;
        let stat = rustix::fs::statat(&parent, file_name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(stamp_of(&stat))
    }

    /// Removes the file or link `name` (never following it).
    pub fn remove_file(&self, name: &str) -> std::io::Result<()> {
        let (parent, file_name) = self.parent_of(name)?;
        rustix::fs::unlinkat(&parent, file_name, AtFlags::empty())
            .map_err(|e| self.explain(name, e))
    }

    /// Removes the empty folder `name`.
    pub fn remove_dir(&self, name: &str) -> std::io::Result<()> {
        let (parent, file_name) = self.parent_of(name)?;
        rustix::fs::unlinkat(&parent, file_name, AtFlags::REMOVEDIR)
            .map_err(|e| self.explain(name, e))
    }

    /// Removes `name`: a file or link itself, a folder with everything in it (links inside
    /// removed, never followed).
    pub fn remove_tree(&self, name: &str) -> std::io::Result<()> {
        let (parent, file_name) = self.parent_of(name)?;
        crate::beneath::remove_entry(&parent, file_name)
    }

    /// Renames `from` to `to`, both in this store (folders opened link-free).
    pub fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (from_parent, from_name) = self.parent_of(from)?;
        let (to_parent, to_name) = self.parent_of(to)?;
        rustix::fs::renameat(&from_parent, from_name, &to_parent, to_name)
            .map_err(|e| self.explain(to, e))
    }

    /// `fsync` of the folder `name`: the entries made, renamed or removed in it are durable.
    pub fn sync_dir(&self, name: &str) -> std::io::Result<()> {
        let fd = self.folder_fd(&self.at(name))?;
        crate::beneath::sync_folder(&fd).map_err(std::io::Error::from)
    }

    /// One `syncfs` of the filesystem that holds the store: every write, rename and new folder
    /// on it so far is durable when it returns.
    pub fn sync_filesystem(&self) -> std::io::Result<()> {
        let (root, _) = self.root.dir()?;
        let readable = rustix::fs::openat(
            root,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        rustix::fs::syncfs(&readable).map_err(std::io::Error::from)
    }

    /// The file `name` opened for appending (made 0600 when missing, folders made), never
    /// through a link: a log.
    pub fn open_append(&self, name: &str) -> std::io::Result<std::fs::File> {
        self.open_created(name, OFlags::WRONLY | OFlags::APPEND)
    }

    /// The file `name` opened for reading and writing (made 0600 when missing, never
    /// truncated), never through a link: a lock file.
    pub fn open_lock(&self, name: &str) -> std::io::Result<LockFile> {
        self.open_created(name, OFlags::RDWR)
    }

    fn open_created(&self, name: &str, flags: OFlags) -> std::io::Result<std::fs::File> {
        let (folder, file_name) = self.split(name)?;
        let parent = self.make_folder(&folder)?;
        let fd = rustix::fs::openat(
            &parent,
            file_name,
            flags | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| self.explain(name, e))?;
        Ok(std::fs::File::from(fd))
    }

    /// `name` beneath the root.
    fn at(&self, name: &str) -> String {
        match (self.location.as_str(), name) {
            (location, ".") => location.to_string(),
            (".", name) => name.to_string(),
            (location, name) => format!("{location}/{name}"),
        }
    }

    /// `name`'s folder (beneath the root) and its last segment.
    fn split<'a>(&self, name: &'a str) -> std::io::Result<(String, &'a str)> {
        let (folder, file_name) = match name.rsplit_once('/') {
            Some((folder, file_name)) => (self.at(folder), file_name),
            None => (self.location.clone(), name),
        };
        if file_name.is_empty() || file_name == "." || file_name == ".." {
            return Err(self.explain(name, Errno::INVAL));
        }
        Ok((folder, file_name))
    }

    /// The folder of `name` (opened link-free) and its last segment.
    fn parent_of<'a>(&self, name: &'a str) -> std::io::Result<(OwnedFd, &'a str)> {
        let (folder, file_name) = self.split(name)?;
        Ok((self.folder_fd(&folder)?, file_name))
    }

    /// Opens `name` in this store with `flags`, no link at any position.
    fn open(&self, name: &str, flags: OFlags, mode: Mode) -> std::io::Result<OwnedFd> {
        let (root, resolver) = self.root.dir()?;
        crate::beneath::open_beneath(root, resolver, &self.at(name), flags, mode, Links::Never)
            .map_err(|e| self.explain(name, e))
    }

    /// An `O_PATH` descriptor of the folder `location` (beneath the root), link-free.
    fn folder_fd(&self, location: &str) -> std::io::Result<OwnedFd> {
        let (root, resolver) = self.root.dir()?;
        crate::beneath::open_beneath(
            root,
            resolver,
            location,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            Mode::empty(),
            Links::Never,
        )
        .map_err(|e| self.refusal(location, e))
    }

    /// Makes the folder `location` (beneath the root) and the ones above it, 0700, link-free.
    fn make_folder(&self, location: &str) -> std::io::Result<OwnedFd> {
        let (root, resolver) = self.root.dir()?;
        let segments: Vec<&str> = if location == "." {
            Vec::new()
        } else {
            location.split('/').collect()
        };
        crate::beneath::make_dirs(root, resolver, &segments, Mode::from_raw_mode(0o700))
            .map_err(|e| self.refusal(location, e))
    }

    /// An error for `name` in this store.
    fn explain(&self, name: &str, errno: impl Into<std::io::Error>) -> std::io::Error {
        let error: std::io::Error = errno.into();
        match error.raw_os_error().map(Errno::from_raw_os_error) {
            Some(errno) => self.refusal(&self.at(name), errno),
            None => error,
        }
    }

    /// The error users see for `errno` on `location` (beneath the root): a link or non-folder
    /// on the way is named, with why it was refused.
    fn refusal(&self, location: &str, errno: Errno) -> std::io::Error {
        let shown = |at: &str| self.root.path().join(at).display().to_string();
        if !matches!(errno, Errno::LOOP | Errno::NOTDIR | Errno::XDEV) {
            return std::io::Error::new(
                std::io::Error::from(errno).kind(),
                format!("{}: {}", shown(location), std::io::Error::from(errno)),
            );
        }
        let culprit = self
            .root
            .dir()
            .ok()
            .and_then(|(root, _)| first_link(root, location));
        let (at, what) =
            culprit.unwrap_or_else(|| (location.to_string(), "a symlink or not a folder"));
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is {what}; the Talos home's stores are real folders and files, never followed out of the home",
                shown(&at)
            ),
        )
    }
}

/// The first segment of `location` (beneath `root`) that is a link, or a non-folder with more
/// after it, and what it is.
fn first_link(root: BorrowedFd<'_>, location: &str) -> Option<(String, &'static str)> {
    let segments: Vec<&str> = location.split('/').collect();
    let mut at: Option<OwnedFd> = None;
    for (index, part) in segments.iter().enumerate() {
        let dir = at.as_ref().map_or(root, |fd| std::os::fd::AsFd::as_fd(fd));
        let stat = rustix::fs::statat(dir, *part, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        let shown = segments[..=index].join("/");
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => return Some((shown, "a symlink")),
            FileType::Directory => {
                at = Some(
                    rustix::fs::openat(
                        dir,
                        *part,
                        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .ok()?,
                );
            }
            _ if index + 1 < segments.len() => return Some((shown, "not a folder")),
            _ => return None,
        }
    }
    None
}

fn stamp_of(stat: &rustix::fs::Stat) -> Stamp {
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Directory,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    };
    let modified_ms = i128::from(stat.st_mtime) * 1000 + i128::from(stat.st_mtime_nsec) / 1_000_000;
    Stamp {
        kind,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        modified_ms: u64::try_from(modified_ms).unwrap_or(0),
        uid: stat.st_uid,
        mode: stat.st_mode,
    }
}

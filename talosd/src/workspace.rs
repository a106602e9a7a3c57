//! The workspace as a capability: one `Workspace` handle, opened on the canonical root, is the
//! only code that touches workspace files. It holds an `O_PATH` descriptor of the root and opens
//! everything beneath it in the kernel, with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//! (and `RESOLVE_NO_SYMLINKS` for anything that changes the disk), or, on a kernel without
//! `openat2`, with a walk of `openat(O_NOFOLLOW)` per component from the root descriptor. A
//! path that leaves the root, through `..`, an absolute link or a directory swapped for a link
//! after it was checked, is refused by the kernel at the moment of IO, not by a string compare
//! before it. See docs/decisions/0014-workspace-capability.md and docs/policy.md.
//!
//! `resolve` gives the ladder its facts (the path's text checked by `talos_core::pathname`,
//! symlinks inside the root followed with `readlinkat` to say where the path really lands);
//! `files` reads and writes; `walk` lists; `ops` holds the typed workspace operations.
// The one module that may use std::fs on workspace files (the root's canonical path).
#![allow(clippy::disallowed_methods)]

mod files;
mod guarded;
#[cfg(test)]
mod hard_link_tests;
pub mod ops;
mod pending;
#[cfg(test)]
mod race;
mod resolve;
#[cfg(test)]
mod tests;
mod walk;

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use talos_core::ladder::PathFacts;

pub use crate::beneath::{DirEntry, EntryKind, Links, Resolver};
use crate::beneath::{location_of, location_segments, open_beneath, probed_resolver};
pub use pending::PendingLog;
pub use walk::{FileStamp, child};

/// Largest file Talos reads or replaces.
pub const MAX_FILE_BYTES: u64 = 2 << 20;

/// A path resolved for the ladder: its facts and, when it stays inside, where it lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub facts: PathFacts,
    /// Workspace-relative location, symlinks inside the root followed (`.` for the root);
    /// `None` when the path is refused. Every IO method takes a location.
    pub location: Option<String>,
    /// The last component is itself a symlink (inside the workspace); writes refuse it.
    pub final_is_symlink: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("Path not allowed: {path} ({problem})")]
    NotAllowed { path: String, problem: String },
    #[error("File not found: {0}")]
    NotFound(String),
    #[error("Path is a directory, not a file: {0}")]
    IsDirectory(String),
    /// A regular file with more than one link, refused by [`Workspace::read_unshared`].
    #[error(
        "Path not allowed: {path} (it is a hard link: {links} names share its bytes, which may belong to a file outside the workspace)"
    )]
    HardLinked { path: String, links: u64 },
    #[error("File too large ({kb} KB). Max: 2048 KB")]
    TooLarge { kb: u64 },
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: String,
        source: std::io::Error,
    },
}

/// The capability on one workspace root.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: OwnedFd,
    resolver: Resolver,
    /// Where writes in flight are recorded, so a crash's temporary files can be removed.
    pending: Option<PendingLog>,
}

/// Symlink hops `resolve` follows before it gives up, as the kernel's own limit.
const MAX_HOPS: usize = 40;

/// The canonical form of a directory a person names as a workspace root (before a handle
/// exists: `session/new` and the profile methods check it first).
pub fn canonical_root(raw: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(raw)
}

/// Whether `path` is a directory (following links), for the root checks above.
pub fn is_directory(path: &Path) -> bool {
    path.is_dir()
}

impl Workspace {
    /// Opens the root (canonicalised) with the resolver the kernel supports (probed once per
    /// process: whether `openat2` works is a property of the kernel and its seccomp filter).
    pub fn open(root: &Path) -> Result<Workspace, WorkspaceError> {
        let workspace = Workspace::open_with(root, Resolver::Openat2)?;
        let resolver =
            probed_resolver(&workspace.dir).map_err(|e| root_error(&workspace.root, e.into()))?;
        Ok(Workspace {
            resolver,
            ..workspace
        })
    }

    /// Opens the root with a chosen resolver (tests run every row through both).
    pub fn open_with(root: &Path, resolver: Resolver) -> Result<Workspace, WorkspaceError> {
        let canonical = canonical_root(root).map_err(|e| root_error(root, e))?;
        let dir = rustix::fs::open(
            &canonical,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| root_error(&canonical, e.into()))?;
        Ok(Workspace {
            root: canonical,
            dir,
            resolver,
            pending: None,
        })
    }

    /// The root's device and inode, to tell the same folder from one put in its place.
    pub fn identity(&self) -> Option<(u64, u64)> {
        rustix::fs::fstat(&self.dir)
            .ok()
            .map(|st| (st.st_dev, st.st_ino))
    }

    /// A new handle on the same root (a session that released its handle while idle,
    /// issue 26): refused when the folder at the root is no longer the one this handle holds.
    pub fn reopened(
        root: &Path,
        identity: Option<(u64, u64)>,
        pending: Option<PendingLog>,
    ) -> Result<Workspace, WorkspaceError> {
        let mut again = Workspace::open(root)?;
        if again.root != root || again.identity() != identity {
            return Err(root_error(
                root,
                std::io::Error::other("the folder was replaced since the session opened it"),
            ));
        }
        again.pending = pending;
        Ok(again)
    }

    /// The log of writes in flight this handle records to, if any.
    pub fn pending(&self) -> Option<PendingLog> {
        self.pending.clone()
    }

    /// Records writes in flight in `log` from now on.
    pub fn with_pending(self, log: PendingLog) -> Workspace {
        Workspace {
            pending: Some(log),
            ..self
        }
    }

    /// The canonical root, for display, hashing and records.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn resolver(&self) -> Resolver {
        self.resolver
    }

    /// An absolute path for `location`, for handing to another program (a command's cwd or
    /// executable). Talos's own IO never uses it.
    pub fn absolute(&self, location: &str) -> PathBuf {
        if location == "." {
            self.root.clone()
        } else {
            self.root.join(location)
        }
    }

    /// Resolves `raw` again at the moment of IO and checks it still lands at `expected`.
    pub fn recheck(&self, raw: &str, expected: &str) -> Result<Resolved, WorkspaceError> {
        let now = self.resolve(raw);
        match &now.location {
            Some(location) if location == expected && !now.facts.escapes => Ok(now),
            _ => Err(WorkspaceError::NotAllowed {
                path: raw.into(),
                problem: now
                    .facts
                    .problem
                    .clone()
                    .unwrap_or_else(|| "path changed after it was checked".into()),
            }),
        }
    }

    /// Opens `location` beneath the root with `flags`, in the kernel.
    fn open_beneath(
        &self,
        location: &str,
        flags: OFlags,
        mode: Mode,
        links: Links,
    ) -> Result<OwnedFd, Errno> {
        open_beneath(
            self.dir.as_fd(),
            self.resolver,
            location,
            flags,
            mode,
            links,
        )
    }

    /// An `O_PATH` descriptor of the directory `location`, never through a link.
    fn dir_fd(&self, location: &str) -> Result<OwnedFd, Errno> {
        self.open_beneath(
            location,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            Mode::empty(),
            Links::Never,
        )
    }

    /// The parent directory of `location` (opened link-free beneath the root) and the final
    /// name; `None` for the root itself.
    fn parent_and_name<'a>(&self, location: &'a str) -> Result<Option<(OwnedFd, &'a str)>, Errno> {
        let segments = location_segments(location)?;
        let Some((name, parents)) = segments.split_last() else {
            return Ok(None);
        };
        let parent = self.dir_fd(&location_of(parents))?;
        Ok(Some((parent, name)))
    }

    fn root_fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

fn root_error(root: &Path, source: std::io::Error) -> WorkspaceError {
    WorkspaceError::Io {
        context: "cannot open workspace",
        path: root.display().to_string(),
        source,
    }
}

/// A stat's link count (`nlink_t` is `u64` on x86-64 and `u32` on other Linux targets, so the
/// conversion is not useless everywhere).
#[allow(clippy::useless_conversion)]
pub(crate) fn link_count(stat: &rustix::fs::Stat) -> u64 {
    u64::from(stat.st_nlink)
}

/// The problem users see for a kernel refusal of a path.
fn refusal(errno: Errno) -> Option<&'static str> {
    match errno {
        Errno::XDEV => Some("path leaves the workspace"),
        Errno::LOOP => Some("path passes through a symlink"),
        Errno::INVAL => Some("path is not a workspace location"),
        _ => None,
    }
}

/// Maps an errno from IO on `shown` to the error users see.
fn io_error(context: &'static str, shown: &str, errno: Errno) -> WorkspaceError {
    match refusal(errno) {
        Some(problem) if errno != Errno::LOOP => WorkspaceError::NotAllowed {
            path: shown.into(),
            problem: problem.into(),
        },
        _ => WorkspaceError::Io {
            context,
            path: shown.into(),
            source: errno.into(),
        },
    }
}

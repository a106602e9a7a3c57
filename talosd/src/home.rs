//! The Talos home as a capability, like the workspace (docs/decisions/0061-home-handle.md): each
//! root of the home (the state folder, and the XDG logs and cache folders when they live
//! elsewhere) is opened once, as an `O_PATH` descriptor, and every store under it (traces,
//! checkpoints, sessions, profile pins, the index, the logs) is a [`Store`]: a location beneath
//! a root that is reached only through that descriptor, with the workspace handle's own
//! primitives (`crate::workspace::open_beneath` with no symlink at any position, `mkdirat`,
//! `renameat`, `unlinkat`). A store folder, or a file in one, replaced by a link is refused by
//! the kernel at the moment of IO; nothing is followed out of the home.
//!
//! Writes keep the durability rules that `durable` had: the bytes go to a fresh 0600 temporary
//! file beside the target (`.<name>.talos-tmp-<hex>`, created with `O_EXCL | O_NOFOLLOW` in the
//! parent's descriptor), are synced as [`Durability`] asks, are renamed over the target in that
//! descriptor, and (for [`Durability::Full`]) the folder is synced. A turn's own records are written
//! unsynced and made durable by one `syncfs` ([`Store::sync_filesystem`]) before the outcome is
//! reported; a power loss before it can leave such a file empty or short, and each reader
//! treats that as absent. Leftover temporary files are removed at start by `recovery`.
//!
//! The roots themselves are the user's: their path is followed (a home folder that is itself a
//! link is the user's choice) and made (0700) when missing. That is this module's only
//! path-based filesystem call.
// std::fs here: makes a root of the home by its path, once, before its descriptor is opened.
#![allow(clippy::disallowed_methods)]

mod store;
#[cfg(test)]
mod tests;

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustix::fs::{Mode, OFlags};

pub use store::{Durability, LockFile, Stamp, Store};

use crate::beneath::Resolver;

/// One root of the home: a folder opened once and held as a descriptor.
#[derive(Debug)]
pub struct Root {
    path: PathBuf,
    /// Whether a missing root is made (the home's own folders) or is an error (the user's
    /// config folder, read only).
    made: bool,
    opened: OnceLock<(OwnedFd, Resolver)>,
}

impl Root {
    /// A root of the home at `path`, made (0700) if missing and opened on first use.
    pub fn new(path: PathBuf) -> Arc<Root> {
        Arc::new(Root {
            path,
            made: true,
            opened: OnceLock::new(),
        })
    }

    /// A folder of the user's at `path` (the config folder), read through a handle like the
    /// home's but never made: a missing one reads as not found.
    pub fn existing(path: PathBuf) -> Arc<Root> {
        Arc::new(Root {
            path,
            made: false,
            opened: OnceLock::new(),
        })
    }

    /// The root's path, for display and for the few programs that need a path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The root's descriptor (made 0700 and opened the first time) and the resolver the kernel
    /// supports.
    fn dir(&self) -> std::io::Result<(BorrowedFd<'_>, Resolver)> {
        if let Some((fd, resolver)) = self.opened.get() {
            return Ok((fd.as_fd(), *resolver));
        }
        if self.made && std::fs::symlink_metadata(&self.path).is_err() {
            use std::os::unix::fs::DirBuilderExt;
            // `recursive` also succeeds when another writer made it meanwhile.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.path)
                .map_err(|e| named(&self.path, e))?;
        }
        let fd = rustix::fs::open(
            &self.path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| named(&self.path, e.into()))?;
        let resolver =
            crate::beneath::probed_resolver(&fd).map_err(|e| named(&self.path, e.into()))?;
        // Two first uses at once: one descriptor is kept, the other closed.
        let (fd, resolver) = self.opened.get_or_init(|| (fd, resolver));
        Ok((fd.as_fd(), *resolver))
    }
}

/// An IO error that names the path it concerns.
fn named(path: &Path, source: std::io::Error) -> std::io::Error {
    std::io::Error::new(source.kind(), format!("{}: {source}", path.display()))
}

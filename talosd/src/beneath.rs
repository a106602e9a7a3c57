//! Opening beneath a directory descriptor, in the kernel: the primitives the workspace handle
//! (`crate::workspace`) and the home's handle (`crate::home`) share, so both hold one
//! discipline. A location is a plain `/`-separated list of names; it is opened from the
//! directory's descriptor with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (and
//! `RESOLVE_NO_SYMLINKS` when no link may be passed) or, on a kernel without `openat2`, one
//! `openat(O_NOFOLLOW)` per component. Folders are made with `mkdirat`, removed with `unlinkat`,
//! listed from an opened descriptor; nothing here builds a path.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// How paths beneath the root are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`: the kernel refuses any
    /// resolution that leaves the root.
    Openat2,
    /// One `openat(O_NOFOLLOW)` per component from the root descriptor, for kernels without
    /// `openat2` (or where seccomp refuses it). No symlink is followed at any position.
    ComponentWalk,
}

/// Which symlinks an open may pass through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Symlinks that stay beneath the root (reads and listings; `Openat2` only).
    Beneath,
    /// None at all (anything that changes the disk, whose location was resolved link-free).
    Never,
}

/// What an entry is, never following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// A FIFO, socket or device: never read.
    Other,
}

impl EntryKind {
    pub fn of(file_type: FileType) -> EntryKind {
        match file_type {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Directory,
            FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Other,
        }
    }
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub kind: EntryKind,
}

/// Which resolver the kernel supports, probed once per process on `dir` (whether `openat2`
/// works is a property of the kernel and its seccomp filter). The home's handle uses it too.
pub fn probed_resolver(dir: &OwnedFd) -> Result<Resolver, Errno> {
    static PROBED: OnceLock<Resolver> = OnceLock::new();
    if let Some(resolver) = PROBED.get() {
        return Ok(*resolver);
    }
    match openat2_retrying(
        dir,
        ".",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(_) => Ok(*PROBED.get_or_init(|| Resolver::Openat2)),
        Err(Errno::NOSYS | Errno::PERM | Errno::ACCESS | Errno::INVAL) => {
            tracing::warn!(
                "openat2 is not available; workspace paths are opened one component at a time"
            );
            Ok(*PROBED.get_or_init(|| Resolver::ComponentWalk))
        }
        Err(e) => Err(e),
    }
}

/// Opens `location` (segments as [`location_segments`] accepts them) beneath the directory
/// `dir` with `flags`, in the kernel: the one primitive the workspace and home handles share.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    resolver: Resolver,
    location: &str,
    flags: OFlags,
    mode: Mode,
    links: Links,
) -> Result<OwnedFd, Errno> {
    let segments = location_segments(location)?;
    match resolver {
        Resolver::Openat2 => {
            let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            if links == Links::Never {
                resolve |= ResolveFlags::NO_SYMLINKS;
            }
            openat2_with_mode(
                dir,
                &location_of(&segments),
                flags | OFlags::CLOEXEC,
                mode,
                resolve,
            )
        }
        Resolver::ComponentWalk => {
            let Some((last, parents)) = segments.split_last() else {
                return rustix::fs::openat(dir, ".", flags | OFlags::CLOEXEC, mode);
            };
            let mut current: Option<OwnedFd> = None;
            for part in parents {
                let at = current.as_ref().map_or(dir, AsFd::as_fd);
                current = Some(rustix::fs::openat(
                    at,
                    *part,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?);
            }
            let at = current.as_ref().map_or(dir, AsFd::as_fd);
            rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, mode)
        }
    }
}

/// The segments of a location `resolve` produced; anything else (`..`, `.` inside, absolute)
/// is refused before the kernel sees it.
pub fn location_segments(location: &str) -> Result<Vec<&str>, Errno> {
    if location == "." {
        return Ok(Vec::new());
    }
    let segments: Vec<&str> = location.split('/').collect();
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == ".." || s.contains('\0'))
    {
        return Err(Errno::INVAL);
    }
    Ok(segments)
}

/// Segments back into a location (`.` for none).
pub fn location_of(segments: &[&str]) -> String {
    talos_core::pathname::joined(segments)
}

pub fn openat2_retrying(
    dir: &OwnedFd,
    path: &str,
    flags: OFlags,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    openat2_with_mode(dir.as_fd(), path, flags, Mode::empty(), resolve)
}

/// `openat2`, retried a few times on `EAGAIN` (the kernel's answer when a concurrent rename
/// raced a `..` check under `RESOLVE_BENEATH`).
pub fn openat2_with_mode(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> Result<OwnedFd, Errno> {
    let mut attempts = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags, mode, resolve) {
            Err(Errno::AGAIN) if attempts < 8 => attempts += 1,
            other => return other,
        }
    }
}

/// Makes each missing directory of `segments` beneath `root` with `mkdirat` (`mode`) in its
/// parent's descriptor, each new one synced into its parent, and returns an `O_PATH`
/// descriptor of the last one; a link at any position is refused (the home's handle uses it
/// with 0700).
pub fn make_dirs(
    root: BorrowedFd<'_>,
    resolver: Resolver,
    segments: &[&str],
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let dir_fd = |location: &str| {
        open_beneath(
            root,
            resolver,
            location,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW,
            Mode::empty(),
            Links::Never,
        )
    };
    match dir_fd(&location_of(segments)) {
        Err(Errno::NOENT) => {}
        found => return found,
    }
    let mut current = dir_fd(".")?;
    for part in segments {
        match rustix::fs::mkdirat(&current, *part, mode) {
            // A new folder's entry is made durable in its parent once, when it is made
            // (issue 26, defect 10); the write's own folder sync covers the file.
            Ok(()) => {
                if let Err(e) = sync_folder(&current) {
                    tracing::warn!(folder = part, error = %e, "cannot sync a new folder into its parent");
                }
            }
            Err(Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
        current = rustix::fs::openat(
            &current,
            *part,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
    }
    Ok(current)
}

/// `fsync` on a folder held as an `O_PATH` descriptor (which cannot be synced itself): the
/// folder is opened for reading through it, never following a link, and that is synced.
pub fn sync_folder(folder: &OwnedFd) -> Result<(), Errno> {
    let readable = rustix::fs::openat(
        folder,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::fsync(&readable)
}

pub fn kind_at(parent: &OwnedFd, name: &str) -> Result<EntryKind, Errno> {
    let stat = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Directory,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Other,
    })
}

pub fn open_child_dir(parent: &OwnedFd, name: &str) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Removes `name` in `parent`: a file or link unlinked, a folder emptied first (links inside
/// removed, never followed).
pub fn remove_entry(parent: &OwnedFd, name: &str) -> std::io::Result<()> {
    if kind_at(parent, name)? != EntryKind::Directory {
        rustix::fs::unlinkat(parent, name, AtFlags::empty())?;
        return Ok(());
    }
    let dir = open_child_dir(parent, name)?;
    let listing = rustix::fs::openat(
        &dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for entry in entries(listing)? {
        remove_entry(&dir, &entry.name)?;
    }
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?;
    Ok(())
}

/// The entries of an open directory, sorted by name, `.` and `..` left out.
pub fn entries(fd: std::os::fd::OwnedFd) -> std::io::Result<Vec<DirEntry>> {
    let mut dir = Dir::new(fd)?;
    let mut out = Vec::new();
    let mut pending_stat = Vec::new();
    for entry in dir.by_ref() {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." {
            continue;
        }
        match entry.file_type() {
            FileType::Unknown => pending_stat.push(name),
            known => out.push(DirEntry {
                name,
                kind: EntryKind::of(known),
            }),
        }
    }
    for name in pending_stat {
        let stat = rustix::fs::statat(dir.fd()?, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)?;
        out.push(DirEntry {
            name,
            kind: EntryKind::of(FileType::from_raw_mode(stat.st_mode)),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

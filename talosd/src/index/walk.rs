//! The file walk: candidate files as ripgrep would list them (`.ignore`, `.gitignore`,
//! `.git/info/exclude`, hidden files skipped, no global excludes, nothing above the root),
//! through the `Workspace` handle only (issue 26): every folder is opened beneath the root in
//! the kernel, links are never descended into or listed, and each ignore file is read as any
//! workspace file is (`rules`). Nothing here opens a file that is not regular, so a FIFO or a
//! device never blocks the walk. `stop` is asked before each entry: a cancelled turn or a
//! stopping daemon ends the walk at once.

use std::rc::Rc;

use talos_core::retrieval::UnreadIgnoreFile;

use super::rules::{Chain, Verdict};
use crate::workspace::{EntryKind, Workspace, child};
use talos_core::retrieval::SKIP_DIRS;

/// A listed regular file: workspace-relative path, size and mtime (not following links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i128,
}

/// What a walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Regular files the ignore rules keep, sorted by path.
    pub files: Vec<Listed>,
    /// Ignore files that were not read (their patterns did not apply), in walk order.
    pub unread: Vec<UnreadIgnoreFile>,
    /// `stop` said to stop before the walk was done: `files` is partial.
    pub stopped: bool,
}

/// Regular files beneath the root that ignore rules keep, until `stop` says to stop.
pub fn files(workspace: &Workspace, stop: &dyn Fn() -> bool) -> Listing {
    let mut listing = Listing::default();
    let mut pending: Vec<(String, Option<Rc<Chain>>)> = vec![(".".to_string(), None)];
    while let Some((dir, above)) = pending.pop() {
        if stop() {
            listing.stopped = true;
            break;
        }
        let Ok(entries) = workspace.read_dir_stamped(&dir) else {
            continue;
        };
        let (entries, stamps): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        let chain = Chain::below(above, workspace, &dir, &entries, &mut listing.unread);
        let mut folders = Vec::new();
        for (entry, stamp) in entries.into_iter().zip(stamps) {
            if stop() {
                listing.stopped = true;
                break;
            }
            let path = child(&dir, &entry.name);
            let is_dir = match entry.kind {
                EntryKind::Directory if !SKIP_DIRS.contains(&entry.name.as_str()) => true,
                EntryKind::File if entry.name != ".git" => false,
                EntryKind::Directory | EntryKind::File | EntryKind::Symlink | EntryKind::Other => {
                    continue;
                }
            };
            let absolute = workspace.absolute(&path);
            if Chain::verdict(chain.as_deref(), &absolute, &entry.name, is_dir) == Verdict::Ignored
            {
                continue;
            }
            if is_dir {
                folders.push((path, chain.clone()));
            } else if let Some(stamp) = stamp {
                listing.files.push(Listed {
                    path,
                    size: stamp.size,
                    mtime_ns: stamp.mtime_ns,
                });
            }
        }
        pending.extend(folders.into_iter().rev());
    }
    listing.files.sort_by(|a, b| a.path.cmp(&b.path));
    listing
}

//! The file walk: the `ignore` crate lists candidate files as ripgrep would (`.gitignore`,
//! `.ignore`, `.git/info/exclude`, hidden files skipped), never following a link. It only
//! lists names and sizes: every byte indexed is read through `Workspace`, beneath the root,
//! with the same checks as `talos.read_file`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Folders never indexed even when no ignore file names them (as `talos.grep`).
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".svn",
    ".hg",
    "node_modules",
    "__pycache__",
    ".gradle",
    "build",
    "target",
    ".idea",
    ".talos",
];

/// A listed regular file: workspace-relative path, size and mtime (not following links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: String,
    pub size: u64,
    pub mtime_ns: i128,
}

/// Regular files beneath `root` that ignore rules keep, sorted by path.
pub fn files(root: &Path) -> Vec<Listed> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .follow_links(false)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(false)
        .require_git(false)
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIP_DIRS.contains(&n)))
        })
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            continue;
        };
        if relative
            .split('/')
            .any(|s| s == ".git" || talos_core::pathname::is_temp_name(s))
        {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        out.push(Listed {
            path: relative.to_string(),
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

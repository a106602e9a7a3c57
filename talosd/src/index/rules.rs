//! The ignore rules of the walk (issue 26): each folder's `.ignore`, `.gitignore` and, beside a
//! `.git` folder, `.git/info/exclude`, read as any workspace file is, through the `Workspace`
//! handle: the path resolved beneath the root (a link that stays inside is followed, one that
//! leaves is refused), opened without blocking, regular files only, at most
//! `retrieval::MAX_IGNORE_FILE_BYTES`. A file that cannot be read so is left out whole and
//! reported (`UnreadIgnoreFile`). Only its text reaches the `ignore` crate's matcher
//! (`GitignoreBuilder::add_line`): the crate never opens a file here.
//!
//! Precedence is ripgrep's (without `require_git`): `.ignore` over `.gitignore` over
//! `.git/info/exclude`; within each kind the deepest folder's match decides; a hidden name is
//! left out unless a rule whitelists it.

use std::path::Path;
use std::rc::Rc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use talos_core::retrieval::{self, UnreadIgnoreFile};

use crate::workspace::{DirEntry, EntryKind, Workspace, WorkspaceError, child};

/// The ignore files of one folder, in precedence order.
const KINDS: usize = 3;

/// The rules of one folder and of the folders above it.
#[derive(Debug)]
pub struct Chain {
    /// `.ignore`, `.gitignore`, `.git/info/exclude`; `None` where there is none (or it was
    /// not read).
    rules: [Option<Gitignore>; KINDS],
    parent: Option<Rc<Chain>>,
}

/// What the rules say of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Listed,
    Ignored,
}

impl Chain {
    /// The chain for the folder `dir` (its `entries` already listed) below `parent`: the
    /// folder's own ignore files read, those that could not be read added to `unread`.
    pub fn below(
        parent: Option<Rc<Chain>>,
        workspace: &Workspace,
        dir: &str,
        entries: &[DirEntry],
        unread: &mut Vec<UnreadIgnoreFile>,
    ) -> Option<Rc<Chain>> {
        let present =
            |name: &str, kind: EntryKind| entries.iter().any(|e| e.name == name && e.kind == kind);
        let named = |name: &str| entries.iter().any(|e| e.name == name);
        let root = workspace.absolute(dir);
        let mut rules: [Option<Gitignore>; KINDS] = Default::default();
        let files = [".ignore", ".gitignore", ".git/info/exclude"];
        for (slot, name) in rules.iter_mut().zip(files) {
            let there = match name {
                // Only beside a real `.git` folder: a `.git` file (a worktree or submodule)
                // points outside, and a `.git` link is never followed.
                ".git/info/exclude" => present(".git", EntryKind::Directory),
                other => named(other),
            };
            if there {
                *slot = read(workspace, &root, &child(dir, name), unread);
            }
        }
        if rules.iter().all(Option::is_none) {
            return parent;
        }
        Some(Rc::new(Chain { rules, parent }))
    }

    /// Whether the entry at `absolute` (its `name`, a folder or not) is listed.
    pub fn verdict(chain: Option<&Chain>, absolute: &Path, name: &str, is_dir: bool) -> Verdict {
        for kind in 0..KINDS {
            let mut level = chain;
            while let Some(rules) = level {
                if let Some(matcher) = &rules.rules[kind] {
                    match matcher.matched(absolute, is_dir) {
                        Match::Ignore(_) => return Verdict::Ignored,
                        Match::Whitelist(_) => return Verdict::Listed,
                        Match::None => {}
                    }
                }
                level = rules.parent.as_deref();
            }
        }
        if name.starts_with('.') {
            Verdict::Ignored
        } else {
            Verdict::Listed
        }
    }
}

/// The matcher of the ignore file at `location` (rules relative to the folder `root`), or
/// `None` with the reason added to `unread`.
fn read(
    workspace: &Workspace,
    root: &Path,
    location: &str,
    unread: &mut Vec<UnreadIgnoreFile>,
) -> Option<Gitignore> {
    let mut refuse = |reason: String| {
        tracing::warn!(path = location, reason, "ignore file not read");
        unread.push(UnreadIgnoreFile {
            path: location.to_string(),
            reason,
        });
        None
    };
    let resolved = workspace.resolve(location);
    let Some(target) = resolved.location else {
        let problem = resolved.facts.problem.unwrap_or_default();
        return refuse(format!("refused: {problem}"));
    };
    let bytes = match workspace.read_limited(&target, location, retrieval::MAX_IGNORE_FILE_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return None,
        Err(WorkspaceError::TooLarge { kb }) => return refuse(retrieval::too_large(kb)),
        Err(WorkspaceError::NotAllowed { problem, .. }) => {
            return refuse(format!("refused: {problem}"));
        }
        Err(WorkspaceError::IsDirectory(_)) => return refuse("it is a directory".into()),
        Err(e) => return refuse(format!("it cannot be read: {e}")),
    };
    match parse(root, &bytes) {
        Ok(matcher) => Some(matcher),
        Err(e) => refuse(format!("its patterns do not compile: {e}")),
    }
}

/// The matcher of an ignore file's text, line by line as the `ignore` crate reads one (a line
/// that is not UTF-8 or not a pattern is skipped; a byte order mark at the start is dropped).
fn parse(root: &Path, bytes: &[u8]) -> Result<Gitignore, ignore::Error> {
    let mut builder = GitignoreBuilder::new(root);
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = if n == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let _ = builder.add_line(None, line);
    }
    builder.build()
}

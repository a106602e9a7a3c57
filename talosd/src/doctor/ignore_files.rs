//! The `ignore files` check (issue 26): the index walk run over the folder `talos doctor` was
//! started in (the workspace `talos` would use there), for at most [`WALK_TIME`], naming each
//! ignore file it did not read (a link that leaves the workspace, a FIFO or device, over
//! `retrieval::MAX_IGNORE_FILE_BYTES`, patterns that do not compile): its patterns do not
//! apply, so the files it names are indexed and found by search. The facts come from
//! [`found`]; [`verdict`] is the pure rule.

use std::path::Path;
use std::time::{Duration, Instant};

use talos_core::retrieval::{MAX_IGNORE_FILE_BYTES, UnreadIgnoreFile};

use super::Check;
use super::judge::Status;
use crate::workspace::Workspace;

/// How long the walk may take (a doctor started in a large folder, a home, checks a part).
pub const WALK_TIME: Duration = Duration::from_secs(3);

/// What the walk of the current folder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The folder could not be opened as a workspace (why).
    NotChecked(String),
    Walked {
        root: String,
        unread: Vec<UnreadIgnoreFile>,
        /// The walk ran out of time before it was done.
        partial: bool,
    },
}

/// Walks `dir` as the index would, for at most `budget`.
pub fn found(dir: &Path, budget: Duration) -> Found {
    let workspace = match Workspace::open(dir) {
        Ok(workspace) => workspace,
        Err(e) => return Found::NotChecked(e.to_string()),
    };
    let deadline = Instant::now() + budget;
    let listing = crate::index::list(&workspace, &|| Instant::now() >= deadline);
    Found::Walked {
        root: workspace.root().display().to_string(),
        unread: listing.unread,
        partial: listing.stopped,
    }
}

/// The check for what the walk found.
pub fn verdict(found: &Found) -> Check {
    const NAME: &str = "ignore files";
    let (root, unread, partial) = match found {
        Found::NotChecked(why) => {
            return Check::new(NAME, Status::Ok, format!("not checked: {why}"), "");
        }
        Found::Walked {
            root,
            unread,
            partial,
        } => (root, unread, *partial),
    };
    let scope = if partial {
        format!(" (the first {} s of the walk)", WALK_TIME.as_secs())
    } else {
        String::new()
    };
    if unread.is_empty() {
        return Check::new(
            NAME,
            Status::Ok,
            format!("every ignore file under {root} is read{scope}"),
            "",
        );
    }
    let listed: Vec<String> = unread.iter().map(UnreadIgnoreFile::message).collect();
    Check::new(
        NAME,
        Status::Warn,
        format!(
            "under {root}{scope}: {}; the files they name are indexed and found by search",
            listed.join("; ")
        ),
        &format!(
            "make each a regular file inside the workspace of at most {} KiB, or remove it",
            MAX_IGNORE_FILE_BYTES / 1024
        ),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    // test code: a failed fixture should panic
    // std::fs here: the test folders are built by path.
    #![allow(clippy::disallowed_methods)]

    use super::*;

    /// Proves the check warns naming each unread ignore file and why, says when the walk was
    /// cut short, and is fine when every ignore file was read or the folder is not a workspace.
    #[test]
    fn verdict_rows() {
        let unread = |path: &str| UnreadIgnoreFile {
            path: path.into(),
            reason: "refused: not a regular file".into(),
        };
        let walked = |unread, partial| Found::Walked {
            root: "/w".into(),
            unread,
            partial,
        };
        let rows = [
            (
                walked(vec![], false),
                Status::Ok,
                "every ignore file under /w is read",
            ),
            (
                walked(vec![], true),
                Status::Ok,
                "(the first 3 s of the walk)",
            ),
            (
                walked(vec![unread(".gitignore"), unread("a/.ignore")], false),
                Status::Warn,
                "under /w: ignore file .gitignore was not read (refused: not a regular file); its patterns do not apply; ignore file a/.ignore was not read",
            ),
            (
                Found::NotChecked("gone".into()),
                Status::Ok,
                "not checked: gone",
            ),
        ];
        for (found, status, said) in rows {
            let check = verdict(&found);
            assert_eq!(check.status, status, "{check:?}");
            assert!(check.detail.contains(said), "{check:?}");
        }
    }

    /// Proves the facts are the index walk's: a FIFO `.gitignore` and one linked out of the
    /// folder are named, without blocking, and a clean folder names none.
    #[test]
    fn found_names_what_the_walk_did_not_read() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("patterns"), "*.rs\n").unwrap();
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join("sub")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            work.path().join(".gitignore"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("patterns"),
            work.path().join("sub/.ignore"),
        )
        .unwrap();
        let Found::Walked {
            unread, partial, ..
        } = found(work.path(), WALK_TIME)
        else {
            panic!("walked");
        };
        let paths: Vec<&str> = unread.iter().map(|u| u.path.as_str()).collect();
        assert_eq!((paths, partial), (vec![".gitignore", "sub/.ignore"], false));
        let clean = tempfile::tempdir().unwrap();
        std::fs::write(clean.path().join(".gitignore"), "*.log\n").unwrap();
        let Found::Walked { unread, .. } = found(clean.path(), WALK_TIME) else {
            panic!("walked");
        };
        assert!(unread.is_empty(), "{unread:?}");
    }
}

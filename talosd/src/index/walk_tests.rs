//! Rows for the walk's ignore rules (ripgrep's precedence, read through the workspace handle)
//! and its hostile ignore files (issue 26): links out, devices, FIFOs, oversized files, and a
//! stop asked for mid-walk. Each walk runs on a thread the test waits for with a time limit,
//! so a walk that blocks fails the row instead of hanging the suite.

// std::fs here: the test workspaces are built by path.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::walk::{self, Listing};
use crate::workspace::Workspace;

fn put(root: &Path, path: &str, bytes: &[u8]) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, bytes).unwrap();
}

fn fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// A workspace of `files` in a fresh temporary folder (canonical root).
fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (path, text) in files {
        put(&root, path, text.as_bytes());
    }
    (dir, root)
}

/// The walk of `root`, on a thread: `None` when it did not end within five seconds.
fn listing(root: &Path) -> Option<Listing> {
    let root = root.to_path_buf();
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let workspace = Workspace::open(&root).unwrap();
        let _ = sent.send(walk::files(&workspace, &|| false));
    });
    received.recv_timeout(Duration::from_secs(5)).ok()
}

fn paths(listing: &Listing) -> Vec<&str> {
    listing.files.iter().map(|f| f.path.as_str()).collect()
}

fn unread(listing: &Listing) -> Vec<(&str, &str)> {
    listing
        .unread
        .iter()
        .map(|u| (u.path.as_str(), u.reason.as_str()))
        .collect()
}

/// Proves the rules are ripgrep's: `.ignore` over `.gitignore` over `.git/info/exclude`, the
/// deepest folder's match first within a kind, a whitelisted hidden file listed, an ignored
/// folder not entered, and `.git/info/exclude` read only beside a real `.git` folder.
#[test]
fn ignore_rules_follow_ripgrep_precedence() {
    let (_dir, root) = workspace(&[
        (".gitignore", "*.log\nbuild-out/\n!keep.md\n"),
        (".ignore", "!wanted.log\n!.shown\n"),
        (".git/info/exclude", "excluded.txt\n"),
        (".hidden", "h"),
        (".shown", "s"),
        (".gitignore.local", "x"),
        ("a.log", "a"),
        ("wanted.log", "w"),
        ("excluded.txt", "e"),
        ("build-out/x.txt", "x"),
        ("src/main.rs", "m"),
        ("src/.gitignore", "*.rs\n!.shown-too\n"),
        ("src/.shown-too", "s"),
        ("src/lib.txt", "l"),
        ("sub/.git", "gitdir: /elsewhere\n"),
        ("sub/.gitignore", "!a.log\n"),
        ("sub/a.log", "a"),
        ("sub/info.txt", "i"),
    ]);
    let found = listing(&root).expect("the walk ends");
    assert_eq!(
        paths(&found),
        [
            ".shown",
            "src/.shown-too",
            "src/lib.txt",
            "sub/a.log",
            "sub/info.txt",
            "wanted.log"
        ]
    );
    assert_eq!(unread(&found), []);
}

/// Proves an ignore file linked out of the workspace (to a device that reads forever, or to a
/// file of patterns) is never read and its patterns do not apply, a FIFO never blocks the
/// walk, an oversized one is left out, and a link that stays inside is followed.
#[test]
fn hostile_ignore_files_are_not_read_and_never_block() {
    let outside = tempfile::tempdir().unwrap();
    put(outside.path(), "patterns", b"*.md\n");
    let (_dir, root) = workspace(&[
        ("notes.md", "n"),
        ("zero/a.txt", "a"),
        ("random/b.txt", "b"),
        ("pipe/c.txt", "c"),
        ("big/d.txt", "d"),
        ("inner/e.txt", "e"),
        ("inner/e.tmpl", "t"),
        ("shared/patterns", "*.tmpl\n"),
    ]);
    std::os::unix::fs::symlink(outside.path().join("patterns"), root.join(".gitignore")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("zero/.gitignore")).unwrap();
    std::os::unix::fs::symlink("/dev/urandom", root.join("random/.ignore")).unwrap();
    fifo(&root.join("pipe/.gitignore"));
    let big = format!("d.txt{}\n", " ".repeat(256 << 10));
    put(&root, "big/.gitignore", big.as_bytes());
    std::os::unix::fs::symlink("../shared/patterns", root.join("inner/.gitignore")).unwrap();
    let found = listing(&root).expect("the walk ends: nothing blocked it");
    assert_eq!(
        paths(&found),
        [
            "big/d.txt",
            "inner/e.txt",
            "notes.md",
            "pipe/c.txt",
            "random/b.txt",
            "shared/patterns",
            "zero/a.txt"
        ]
    );
    assert_eq!(
        unread(&found),
        [
            (".gitignore", "refused: symlink leaves the workspace"),
            (
                "big/.gitignore",
                "it is over the 256 KiB cap for ignore files"
            ),
            ("pipe/.gitignore", "refused: not a regular file"),
            ("random/.ignore", "refused: symlink leaves the workspace"),
            ("zero/.gitignore", "refused: symlink leaves the workspace"),
        ]
    );
}

/// Proves a stop asked for mid-walk ends the walk at once, its listing marked partial.
#[test]
fn a_stop_ends_the_walk_between_entries() {
    let files: Vec<(String, &str)> = (0..50).map(|n| (format!("d{n}/f.txt"), "x")).collect();
    let rows: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let (_dir, root) = workspace(&rows);
    let workspace = Workspace::open(&root).unwrap();
    let asked = AtomicUsize::new(0);
    let stop = || asked.fetch_add(1, Ordering::Relaxed) >= 10;
    let found = walk::files(&workspace, &stop);
    assert!(found.stopped);
    assert!(found.files.len() < 10, "{:?}", paths(&found));
    assert!(
        asked.load(Ordering::Relaxed) <= 12,
        "it stopped at the first ask after"
    );
    let whole = walk::files(&workspace, &|| false);
    assert_eq!((whole.files.len(), whole.stopped), (50, false));
}

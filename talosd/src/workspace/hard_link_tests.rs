//! Rows for hard-linked files (a regular file whose bytes are shared with another name,
//! perhaps outside the workspace), each run through both resolvers: `resolve` reports the link
//! count the ladder's `HARD_LINK_ASK` rung reads, `read_unshared` refuses such a file on its
//! descriptor, and `write_atomic` replaces the workspace's entry, leaving the other name's
//! bytes as they were.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::*;

const RESOLVERS: [Resolver; 2] = [Resolver::Openat2, Resolver::ComponentWalk];

/// A workspace holding `notes.txt`, hard-linked to `secret.txt` outside it, `alone.txt` with
/// one name, a symlink `via` to `notes.txt`, and a folder `sub`.
fn linked(resolver: Resolver) -> (tempfile::TempDir, PathBuf, PathBuf, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir(&root).unwrap();
    let secret = base.join("secret.txt");
    std::fs::write(&secret, "API_KEY=outside-the-workspace\n").unwrap();
    std::fs::hard_link(&secret, root.join("notes.txt")).unwrap();
    std::fs::write(root.join("alone.txt"), "alone\n").unwrap();
    std::os::unix::fs::symlink("notes.txt", root.join("via")).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let ws = Workspace::open_with(&root, resolver).unwrap();
    (tmp, root, secret, ws)
}

/// Proves `resolve` reports the link count of the regular file a path lands on (through an
/// inner symlink too) and 0 for a folder or a missing file.
#[test]
fn resolve_reports_the_link_count() {
    for resolver in RESOLVERS {
        let (_tmp, _root, _secret, ws) = linked(resolver);
        let rows = [
            ("notes.txt", 2),
            ("via", 2),
            ("alone.txt", 1),
            ("sub", 0),
            ("missing.txt", 0),
        ];
        for (raw, links) in rows {
            let resolved = ws.resolve(raw);
            assert_eq!(resolved.facts.hard_links, links, "{resolver:?} {raw}");
            assert_eq!(
                resolved.facts.shares_bytes(),
                links > 1,
                "{resolver:?} {raw}"
            );
        }
    }
}

/// Proves `read_unshared` refuses a hard-linked file (naming the link count) and reads a file
/// with one name, while the plain read (an approved read) reads both.
#[test]
fn read_unshared_refuses_shared_bytes() {
    for resolver in RESOLVERS {
        let (_tmp, _root, _secret, ws) = linked(resolver);
        match ws.read_unshared("notes.txt", "notes.txt") {
            Err(WorkspaceError::HardLinked { path, links }) => {
                assert_eq!((path.as_str(), links), ("notes.txt", 2), "{resolver:?}");
            }
            other => panic!("{resolver:?}: expected a refusal, got {other:?}"),
        }
        assert_eq!(
            ws.read_unshared("alone.txt", "alone.txt").unwrap(),
            Some(b"alone\n".to_vec())
        );
        assert_eq!(
            ws.read_unshared("missing.txt", "missing.txt").unwrap(),
            None
        );
        assert_eq!(
            ws.read("notes.txt", "notes.txt").unwrap(),
            Some(b"API_KEY=outside-the-workspace\n".to_vec())
        );
    }
}

/// Proves a write to a hard-linked file replaces the workspace's entry (a new inode with one
/// name) and the other name, outside the workspace, keeps its bytes.
#[test]
fn a_write_replaces_the_entry_and_leaves_the_other_link_unchanged() {
    for resolver in RESOLVERS {
        let (_tmp, root, secret, ws) = linked(resolver);
        let before = std::fs::metadata(&secret).unwrap();
        ws.write_atomic("notes.txt", "notes.txt", b"my own notes\n")
            .unwrap();
        assert_eq!(
            std::fs::read(root.join("notes.txt")).unwrap(),
            b"my own notes\n",
            "{resolver:?}"
        );
        assert_eq!(
            std::fs::read(&secret).unwrap(),
            b"API_KEY=outside-the-workspace\n",
            "{resolver:?}: the other link's bytes changed"
        );
        let after = std::fs::metadata(root.join("notes.txt")).unwrap();
        assert_ne!(after.ino(), before.ino(), "{resolver:?}: written in place");
        assert_eq!(after.nlink(), 1, "{resolver:?}");
        assert_eq!(std::fs::metadata(&secret).unwrap().nlink(), 1);
        assert_eq!(ws.resolve("notes.txt").facts.hard_links, 1);
    }
}

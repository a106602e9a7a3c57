//! Rows for the workspace handle, each run through both resolvers (`openat2` and the
//! component walk), so the fallback is held to the same answers.

use std::path::PathBuf;

use super::*;

const RESOLVERS: [Resolver; 2] = [Resolver::Openat2, Resolver::ComponentWalk];

fn workspace(resolver: Resolver) -> (tempfile::TempDir, PathBuf, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap().join("ws");
    std::fs::create_dir(&root).unwrap();
    let ws = Workspace::open_with(&root, resolver).unwrap();
    (tmp, root, ws)
}

/// A workspace with a sibling outside it, links out and a link inside.
fn hostile(resolver: Resolver) -> (tempfile::TempDir, PathBuf, Workspace) {
    let (tmp, root, ws) = workspace(resolver);
    let sibling = root.with_file_name("ws-other");
    std::fs::create_dir(&sibling).unwrap();
    std::fs::write(sibling.join("x.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&sibling, root.join("link")).unwrap();
    std::os::unix::fs::symlink("../ws-other", root.join("rel-link")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("passwd")).unwrap();
    std::os::unix::fs::symlink("missing", root.join("dangling")).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/a.txt"), "a").unwrap();
    std::os::unix::fs::symlink(root.join("sub"), root.join("inner")).unwrap();
    std::os::unix::fs::symlink("sub/a.txt", root.join("a-link")).unwrap();
    std::fs::create_dir(root.join(".talos")).unwrap();
    std::fs::write(root.join(".talos/profiles.yaml"), "profiles: []").unwrap();
    std::os::unix::fs::symlink(".talos/profiles.yaml", root.join("decl")).unwrap();
    (tmp, root, ws)
}

#[test]
fn hostile_paths_fail_closed_and_inner_links_land_inside() {
    let long = "a".repeat(300);
    // (raw, escapes, relative when inside)
    let rows: &[(&str, bool, Option<&str>)] = &[
        ("../outside.txt", true, None),
        ("sub/../../outside.txt", true, None),
        ("/etc/passwd", true, None),
        ("~/.bashrc", true, None),
        ("link/x.txt", true, None),
        ("rel-link/x.txt", true, None),
        ("passwd", true, None),
        ("dangling", true, None),
        ("../ws-other/x.txt", true, None),
        ("a\0b", true, None),
        ("a\nb", true, None),
        ("..\\outside.txt", true, None),
        (&long, true, None),
        ("sub/a.txt/x", true, None),
        ("sub/../ok.txt", false, Some("ok.txt")),
        ("inner/new.txt", false, Some("sub/new.txt")),
        ("inner", false, Some("sub")),
        ("a-link", false, Some("sub/a.txt")),
        ("./settings.py", false, Some("settings.py")),
        ("new/deep/file.txt", false, Some("new/deep/file.txt")),
        (".", false, Some(".")),
    ];
    for resolver in RESOLVERS {
        let (_tmp, _root, ws) = hostile(resolver);
        for (raw, escapes, relative) in rows {
            let r = ws.resolve(raw);
            assert_eq!(
                r.facts.escapes, *escapes,
                "{resolver:?} {raw:?} -> {:?}",
                r.facts.problem
            );
            if let Some(relative) = relative {
                assert_eq!(
                    r.facts.relative.as_deref(),
                    Some(*relative),
                    "{resolver:?} {raw:?}"
                );
                assert_eq!(
                    r.location.as_deref(),
                    Some(*relative),
                    "{resolver:?} {raw:?}"
                );
            } else {
                assert_eq!(r.location, None, "{resolver:?} {raw:?}");
            }
        }
        assert!(ws.resolve("a-link").final_is_symlink);
        assert!(!ws.resolve("inner/new.txt").final_is_symlink);
        assert!(ws.resolve("decl").facts.protected.is_some(), "{resolver:?}");
    }
}

#[test]
fn writes_replace_atomically_and_refuse_symlinked_targets() {
    for resolver in RESOLVERS {
        let (_tmp, root, ws) = hostile(resolver);
        ws.write_atomic("a.txt", "a.txt", b"one").unwrap();
        ws.write_atomic("a.txt", "a.txt", b"two").unwrap();
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"two");
        ws.write_atomic("new/deep/b.txt", "new/deep/b.txt", b"b")
            .unwrap();
        assert_eq!(std::fs::read(root.join("new/deep/b.txt")).unwrap(), b"b");
        std::os::unix::fs::symlink(root.join("a.txt"), root.join("l.txt")).unwrap();
        // (location, what the refusal says)
        let refused: &[(&str, &str)] = &[
            ("l.txt", "target is a symlink"),
            (
                "link/x.txt",
                "parent directory changed or leaves the workspace",
            ),
            (
                "inner/x.txt",
                "parent directory changed or leaves the workspace",
            ),
            ("sub", "is a directory"),
            (".", "no parent directory"),
            ("../x.txt", "not a workspace location"),
        ];
        for (location, expected) in refused {
            let err = ws.write_atomic(location, location, b"x").unwrap_err();
            assert!(
                err.to_string().contains(expected),
                "{resolver:?} {location}: {err}"
            );
        }
        assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"two");
        assert_eq!(
            std::fs::read(root.with_file_name("ws-other").join("x.txt")).unwrap(),
            b"x"
        );
        let leftovers = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains("talos-tmp"))
            .count();
        assert_eq!(leftovers, 0);
    }
}

#[test]
fn reads_refuse_links_out_fifos_and_large_files_without_blocking() {
    for resolver in RESOLVERS {
        let (_tmp, root, ws) = hostile(resolver);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo"),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        std::fs::write(root.join("big"), vec![b'x'; (MAX_FILE_BYTES + 1) as usize]).unwrap();
        // (location, Ok(bytes) or the error's words)
        let rows: &[(&str, Result<Option<&[u8]>, &str>)] = &[
            ("sub/a.txt", Ok(Some(b"a"))),
            ("missing.txt", Ok(None)),
            ("fifo", Err("not a regular file")),
            ("sub", Err("is a directory")),
            ("big", Err("File too large")),
            ("link/x.txt", Err("")),
            ("a-link", Err("cannot open")),
        ];
        for (location, expected) in rows {
            let got = ws.read(location, location);
            match (got, expected) {
                (Ok(bytes), Ok(want)) => {
                    assert_eq!(bytes.as_deref(), *want, "{resolver:?} {location}")
                }
                (Err(e), Err(words)) => assert!(
                    e.to_string().contains(words),
                    "{resolver:?} {location}: {e}"
                ),
                (got, want) => panic!("{resolver:?} {location}: {got:?} vs {want:?}"),
            }
        }
    }
}

#[test]
fn listing_and_typed_operations_stay_beneath_the_root() {
    for resolver in RESOLVERS {
        let (_tmp, root, ws) = hostile(resolver);
        assert_eq!(
            ws.list_names(".", 2, 100),
            [
                ".talos/",
                ".talos/profiles.yaml",
                "a-link",
                "dangling",
                "decl",
                "inner",
                "link",
                "passwd",
                "rel-link",
                "sub/",
                "sub/a.txt"
            ],
            "{resolver:?}"
        );
        assert_eq!(
            ws.files(".", &[], usize::MAX, &mut |_| true),
            [".talos/profiles.yaml", "sub/a.txt"]
        );
        assert_eq!(
            ws.files(".", &[".talos"], usize::MAX, &mut |_| true),
            ["sub/a.txt"]
        );
        let op = |op: WorkspaceOp| {
            let planned = ws.plan(&op)?;
            ws.apply(&planned)?;
            ws.verify(&planned)
        };
        use talos_core::ops::WorkspaceOp;
        assert!(op(WorkspaceOp::Mkdir { path: "d/e".into() }).is_ok());
        assert!(
            op(WorkspaceOp::Copy {
                from: "sub".into(),
                to: "d/e/copy".into(),
                recursive: true,
                overwrite: false
            })
            .is_ok()
        );
        assert_eq!(std::fs::read(root.join("d/e/copy/a.txt")).unwrap(), b"a");
        assert!(
            op(WorkspaceOp::Move {
                from: "d/e/copy".into(),
                to: "moved".into(),
                overwrite: false
            })
            .is_ok()
        );
        assert!(
            op(WorkspaceOp::Rename {
                path: "moved".into(),
                new_name: "renamed".into(),
                overwrite: false
            })
            .is_ok()
        );
        assert!(root.join("renamed/a.txt").is_file());
        assert!(
            op(WorkspaceOp::Move {
                from: "renamed".into(),
                to: "link/escaped".into(),
                overwrite: false
            })
            .is_err()
        );
        assert!(
            op(WorkspaceOp::Move {
                from: "sub".into(),
                to: "sub/inside".into(),
                overwrite: false
            })
            .is_err()
        );
        assert!(
            op(WorkspaceOp::Delete {
                path: ".".into(),
                recursive: true
            })
            .is_err()
        );
        assert!(
            op(WorkspaceOp::Delete {
                path: "renamed".into(),
                recursive: false
            })
            .is_err()
        );
        assert!(
            op(WorkspaceOp::Delete {
                path: "renamed".into(),
                recursive: true
            })
            .is_ok()
        );
        assert!(
            op(WorkspaceOp::Delete {
                path: "d".into(),
                recursive: true
            })
            .is_ok()
        );
        assert!(!root.join("d").exists() && !root.join("renamed").exists());
        assert_eq!(
            std::fs::read(root.with_file_name("ws-other").join("x.txt")).unwrap(),
            b"x"
        );
    }
}

#[test]
fn the_probe_picks_openat2_on_this_kernel_or_says_why_not() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    let supported = rustix::fs::openat2(
        rustix::fs::CWD,
        ".",
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
        rustix::fs::ResolveFlags::BENEATH,
    )
    .is_ok();
    let expected = if supported {
        Resolver::Openat2
    } else {
        Resolver::ComponentWalk
    };
    assert_eq!(ws.resolver(), expected);
}

/// Proves the folders a write or a move renames in can be synced through the handle's
/// `O_PATH` descriptors (a direct `fsync` on one fails with EBADF), the pending-write entry of
/// a write is gone once it is done, the daemon's temporary files are hidden from listings, and
/// `remove_leftover` removes only that shape, as a regular file, never a link.
#[test]
fn folders_sync_and_temporary_files_are_hidden_and_removed_only_in_their_shape() {
    for resolver in RESOLVERS {
        let (tmp, root, ws) = hostile(resolver);
        for location in [".", "sub"] {
            crate::beneath::sync_folder(&ws.dir_fd(location).unwrap())
                .unwrap_or_else(|e| panic!("{resolver:?} {location}: {e}"));
        }
        let log_dir = tmp.path().join("pending");
        let ws = ws.with_pending(PendingLog::new(crate::home::Store::new(
            crate::home::Root::new(log_dir.clone()),
            ".",
        )));
        ws.write_atomic("sub/b.txt", "sub/b.txt", b"b").unwrap();
        let entries = std::fs::read_dir(&log_dir).map_or(0, |d| d.count());
        assert_eq!(
            entries, 0,
            "{resolver:?}: the entry goes once the write is done"
        );
        let hex = "0123456789abcdef0123456789abcdef";
        let temp = talos_core::pathname::temp_name("a.txt", hex);
        std::fs::write(root.join("sub").join(&temp), b"half").unwrap();
        let link = talos_core::pathname::temp_name("l.txt", hex);
        std::os::unix::fs::symlink(root.join("sub/a.txt"), root.join("sub").join(&link)).unwrap();
        let names: Vec<String> = ws
            .read_dir("sub")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["a.txt", "b.txt"], "{resolver:?}");
        let rows: &[(String, bool)] = &[
            (format!("sub/{temp}"), true),
            (format!("sub/{temp}"), false),
            (format!("sub/{link}"), false),
            ("sub/a.txt".into(), false),
        ];
        for (location, removed) in rows {
            assert_eq!(
                ws.remove_leftover(location).unwrap(),
                *removed,
                "{resolver:?} {location}"
            );
        }
        assert!(root.join("sub/a.txt").is_file());
        assert!(std::fs::symlink_metadata(root.join("sub").join(&link)).is_ok());
    }
}

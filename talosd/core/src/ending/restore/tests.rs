//! Table tests of the restore decisions: one row per situation a path can be in.

use super::*;

fn file(sha: &str) -> Captured {
    Captured::File {
        sha256: sha.into(),
        size: 3,
    }
}

fn now_file(sha: &str) -> Current {
    Current::File { sha256: sha.into() }
}

fn row(path: &str, before: Captured, after: Option<Captured>) -> Row {
    Row {
        path: path.into(),
        before,
        after,
    }
}

/// One row: a path's checkpoint, its state now, whether conflicts are overwritten, and the
/// step expected.
fn check(row: Row, now: Current, overwrite: bool, action: Action, conflict: bool) {
    let steps = plan(
        std::slice::from_ref(&row),
        std::slice::from_ref(&now),
        overwrite,
    );
    assert_eq!(
        steps,
        vec![Step {
            path: row.path.clone(),
            action,
            conflict
        }],
        "row {row:?} now {now:?} overwrite {overwrite}"
    );
}

#[test]
fn each_path_gets_the_step_its_states_call_for() {
    let restore_a = Action::Restore {
        sha256: "a".into(),
        size: 3,
    };
    // Restored: the file still holds what the change wrote.
    check(
        row("f", file("a"), Some(file("b"))),
        now_file("b"),
        false,
        restore_a.clone(),
        false,
    );
    // Deleted: created by the change, untouched since.
    check(
        row("n", Captured::Absent, Some(file("b"))),
        now_file("b"),
        false,
        Action::Delete,
        false,
    );
    // A directory removed by the change is made again.
    check(
        row("d", Captured::Directory, Some(Captured::Absent)),
        Current::Absent,
        false,
        Action::Directory,
        false,
    );
    // A file the change deleted comes back.
    check(
        row("f", file("a"), Some(Captured::Absent)),
        Current::Absent,
        false,
        restore_a.clone(),
        false,
    );
    // Already as captured: nothing to do, and no conflict even without an after record.
    check(
        row("f", file("a"), None),
        now_file("a"),
        false,
        Action::Unchanged,
        false,
    );
    check(
        row("n", Captured::Absent, Some(file("b"))),
        Current::Absent,
        false,
        Action::Unchanged,
        false,
    );
    // Changed by someone else since: skipped, shown as a conflict.
    check(
        row("f", file("a"), Some(file("b"))),
        now_file("c"),
        false,
        Action::SkipConflict,
        true,
    );
    check(
        row("n", Captured::Absent, Some(file("b"))),
        now_file("c"),
        false,
        Action::SkipConflict,
        true,
    );
    // A directory the change made goes with what is in it now (the line says so).
    check(
        row("d", Captured::Absent, Some(Captured::Directory)),
        Current::Directory,
        false,
        Action::DeleteTree,
        false,
    );
    check(
        row("n", Captured::Absent, Some(file("b"))),
        Current::Directory,
        false,
        Action::SkipConflict,
        true,
    );
    // No after record and a difference: a conflict (nobody can tell who changed it).
    check(
        row("f", file("a"), None),
        now_file("c"),
        false,
        Action::SkipConflict,
        true,
    );
    // Asked to overwrite: the conflict is restored, and still marked.
    check(
        row("f", file("a"), Some(file("b"))),
        now_file("c"),
        true,
        restore_a,
        true,
    );
    check(
        row("n", Captured::Absent, Some(file("b"))),
        now_file("c"),
        true,
        Action::Delete,
        true,
    );
    // A symlink or an unreachable path is refused, whatever was asked.
    let link =
        Action::Refuse("a symlink is there now; a restore never follows or replaces one".into());
    check(
        row("f", file("a"), Some(file("b"))),
        Current::Symlink,
        true,
        link,
        false,
    );
    check(
        row("../x", file("a"), Some(file("b"))),
        Current::Refused("path leaves the workspace".into()),
        true,
        Action::Refuse("path leaves the workspace".into()),
        false,
    );
}

#[test]
fn steps_run_deletions_deepest_first_then_directories_then_files() {
    let rows = vec![
        row("src/a.txt", file("a"), Some(Captured::Absent)),
        row("dst", Captured::Absent, Some(Captured::Directory)),
        row("dst/a.txt", Captured::Absent, Some(file("a"))),
        row("src", Captured::Directory, Some(Captured::Absent)),
        row("same", file("s"), Some(file("s2"))),
    ];
    let now = vec![
        Current::Absent,
        Current::Directory,
        now_file("a"),
        Current::Absent,
        now_file("s"),
    ];
    let order: Vec<String> = plan(&rows, &now, false)
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(order, ["dst/a.txt", "dst", "src", "src/a.txt", "same"]);
}

#[test]
fn a_merged_unit_keeps_the_first_before_and_the_last_recorded_after() {
    let first = vec![row("f", file("v0"), Some(file("v1")))];
    let second = vec![
        row("f", file("v1"), Some(file("v2"))),
        row("g", Captured::Absent, None),
    ];
    let third = vec![row("f", file("v2"), None)];
    assert_eq!(
        merge(&[first, second, third]),
        vec![
            row("f", file("v0"), Some(file("v2"))),
            row("g", Captured::Absent, None),
        ]
    );
}

fn summary(id: &str, session: &str, turn: &str, at: u64) -> Summary {
    Summary {
        checkpoint_id: id.into(),
        session_id: Some(session.into()),
        turn_id: turn.into(),
        created_at_ms: at,
        by_restore: false,
        undoes: None,
        changed: true,
    }
}

#[test]
fn undo_takes_the_last_changing_turn_of_the_session_not_yet_undone() {
    let mut rows = vec![
        summary("c1", "s", "t1", 1),
        summary("c2", "s", "t2", 3),
        summary("c3", "s", "t2", 2),
        summary("c4", "other", "t9", 9),
        Summary {
            changed: false,
            ..summary("c5", "s", "t3", 5)
        },
    ];
    // The whole last changing turn, oldest first; other sessions and unchanged turns ignored.
    assert_eq!(undo_unit(&rows, "s"), ["c3", "c2"]);
    // Once undone (a safety checkpoint says so), the next undo goes one turn further back,
    // and the safety checkpoint itself is never chosen.
    rows.push(Summary {
        by_restore: true,
        undoes: Some("t2".into()),
        ..summary("c6", "s", "rst", 10)
    });
    assert_eq!(undo_unit(&rows, "s"), ["c1"]);
    rows.push(Summary {
        by_restore: true,
        undoes: Some("t1".into()),
        ..summary("c7", "s", "rst2", 11)
    });
    assert!(undo_unit(&rows, "s").is_empty());
}

#[test]
fn the_approval_says_what_happens_to_each_path() {
    let steps = vec![
        Step {
            path: "a".into(),
            action: Action::Restore {
                sha256: "x".into(),
                size: 12,
            },
            conflict: false,
        },
        Step {
            path: "n".into(),
            action: Action::Delete,
            conflict: false,
        },
        Step {
            path: "t".into(),
            action: Action::DeleteTree,
            conflict: false,
        },
        Step {
            path: "d".into(),
            action: Action::Directory,
            conflict: false,
        },
        Step {
            path: "c".into(),
            action: Action::SkipConflict,
            conflict: true,
        },
        Step {
            path: "o".into(),
            action: Action::Restore {
                sha256: "y".into(),
                size: 1,
            },
            conflict: true,
        },
    ];
    assert_eq!(
        lines(&steps),
        vec![
            "restored: a (the captured 12 bytes)".to_string(),
            "deleted: n (it did not exist before)".into(),
            "deleted: t/ and everything in it now (it did not exist before; what it holds is kept in the safety checkpoint)".into(),
            "directory: d (made again)".into(),
            "CONFLICT, skipped: c was changed by someone else since the checkpoint and is kept as it is (restore with overwriteConflicts to replace it)".into(),
            "CONFLICT, changed by someone else since the checkpoint; your version will be overwritten: restored: o (the captured 1 bytes)".into(),
        ]
    );
    assert_eq!(
        description("turn t", &steps),
        "restore turn t: 5 paths to change, 2 conflicts (changed by someone else since)"
    );
    assert!(changes(&steps));
    assert!(!changes(&steps[4..5]));
}

#[test]
fn the_approval_diff_shows_each_changed_file_under_its_name() {
    let sides = |path: &str, now: Option<&str>, restored: Option<&str>| Sides {
        path: path.into(),
        now: now.map(str::to_string),
        restored: restored.map(str::to_string),
    };
    let p = preview(&[
        sides("a.txt", Some("ALPHA\n"), Some("alpha\n")),
        sides("c.txt", Some("new\n"), None),
    ])
    .unwrap();
    assert_eq!(
        p.text,
        "=== a.txt (restored)\n@@ -1 +1 @@\n-ALPHA\n+alpha\n=== c.txt (deleted)\n@@ -1 +0,0 @@\n-new\n"
    );
    assert_eq!((p.added, p.removed, p.truncated), (1, 2, false));
    assert!(preview(&[]).is_none());
    // Many files are capped as one approval diff.
    let long: Vec<Sides> = (0..40)
        .map(|i| sides(&format!("f{i}"), Some("x\n"), Some("y\n")))
        .collect();
    let p = preview(&long).unwrap();
    assert!(
        p.truncated && p.text.ends_with("more diff lines)\n"),
        "{}",
        p.text
    );
    assert!(p.text.lines().count() <= crate::text::diff::MAX_DIFF_LINES + 1);
}

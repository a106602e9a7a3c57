//! The home's handle against a hostile home: a store folder or a file in one replaced by a
//! symlink to a folder outside is refused with an error naming it, and nothing is written,
//! read or removed outside the home (with the resolver the kernel supports: the two
//! resolvers themselves are proved against the same attacks in `workspace/tests.rs`).

// std::fs here: the hostile homes are built by path.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use crate::paths::Home;
use crate::session_store::SessionStore;
use crate::workspace::EntryKind;

/// A home with a folder outside it to point links at.
fn hostile() -> (tempfile::TempDir, tempfile::TempDir, Home) {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let paths = Home::from_root(home.path());
    paths.prepare().unwrap();
    (home, outside, paths)
}

fn nothing_in(outside: &Path) {
    let names: Vec<_> = std::fs::read_dir(outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(names.is_empty(), "written outside the home: {names:?}");
}

/// Proves a trace folder replaced by a symlink to a folder outside is refused with an error
/// naming the link, and the trace is not written there.
#[test]
fn traces_replaced_by_a_link_out_are_refused_and_nothing_is_written_outside() {
    let (home, outside, paths) = hostile();
    std::fs::remove_dir(home.path().join("traces")).unwrap();
    std::os::unix::fs::symlink(outside.path(), home.path().join("traces")).unwrap();
    let error = paths
        .traces()
        .child("ses-1")
        .write("000001-trc-a.json", b"{}", super::Durability::None)
        .unwrap_err()
        .to_string();
    assert!(error.contains("traces is a symlink"), "{error}");
    assert!(error.contains("never followed out of the home"), "{error}");
    nothing_in(outside.path());
    assert!(paths.traces().names(".", EntryKind::Directory).is_empty());
}

/// Proves a session folder (one level down) replaced by a link is refused too, for every
/// operation: write, read, list, remove.
#[test]
fn a_link_deeper_in_a_store_is_refused_for_every_operation() {
    let (home, outside, paths) = hostile();
    std::fs::write(outside.path().join("000001-trc-a.json"), b"outside").unwrap();
    std::os::unix::fs::symlink(outside.path(), home.path().join("traces/ses-1")).unwrap();
    let session = paths.traces().child("ses-1");
    let write = session
        .write("000002-trc-b.json", b"{}", super::Durability::Full)
        .unwrap_err();
    assert!(write.to_string().contains("ses-1 is a symlink"), "{write}");
    assert!(session.read("000001-trc-a.json", 1024).is_err());
    assert!(session.entries(".").is_err());
    assert!(session.remove_file("000001-trc-a.json").is_err());
    assert_eq!(
        std::fs::read(outside.path().join("000001-trc-a.json")).unwrap(),
        b"outside",
        "the file outside is neither read nor removed"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        1,
        "nothing new outside"
    );
}

/// Proves a session file replaced by a link to a file outside is neither read (it is skipped
/// with its reason) nor written through (a save replaces the link itself, inside the home).
#[test]
fn a_session_file_replaced_by_a_link_is_skipped_and_never_written_through() {
    let (home, outside, paths) = hostile();
    let store = SessionStore::new(paths.sessions());
    let id = crate::ids::SessionId::new().unwrap();
    let target = outside.path().join("victim.json");
    std::fs::write(&target, b"theirs").unwrap();
    std::fs::create_dir_all(home.path().join("sessions")).unwrap();
    std::os::unix::fs::symlink(&target, store.path(id.as_str())).unwrap();
    let (loaded, skipped) = store.load_all();
    assert!(loaded.is_empty());
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].reason.contains("is a symlink"), "{skipped:?}");
    assert!(
        store.remove(id.as_str()).unwrap(),
        "the link itself is removed"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
    assert!(target.exists(), "the file outside stays");
}

/// Proves the checkpoint store refuses a workspace folder that is a link out: the capture
/// fails (so the write it guards is blocked) and no object lands outside.
#[test]
fn a_checkpoint_folder_replaced_by_a_link_blocks_the_capture() {
    let (home, outside, paths) = hostile();
    let store = crate::checkpoint::CheckpointStore::new(paths.checkpoints());
    let workspace = Path::new("/srv/project");
    let folder = crate::checkpoint::CheckpointStore::workspace_folder(workspace);
    std::os::unix::fs::symlink(outside.path(), home.path().join("checkpoints").join(folder))
        .unwrap();
    let ctx = crate::checkpoint::CaptureContext {
        session_id: Some("s"),
        undoes: None,
        trace_id: "t",
        turn_id: "u",
        call_id: "c",
        tool: "talos.edit_file",
        created_at_ms: 1,
    };
    let error = store
        .capture(workspace, "a.py", Some(b"x = 1\n"), &ctx)
        .unwrap_err()
        .to_string();
    assert!(error.contains("is a symlink"), "{error}");
    nothing_in(outside.path());
}

/// Proves the logs folder replaced by a link is refused when the daemon's log is opened.
#[test]
fn a_logs_folder_replaced_by_a_link_is_refused() {
    let (home, outside, paths) = hostile();
    std::fs::remove_dir(home.path().join("logs")).unwrap();
    std::os::unix::fs::symlink(outside.path(), home.path().join("logs")).unwrap();
    let error = paths
        .logs()
        .open_append("talosd.log")
        .unwrap_err()
        .to_string();
    assert!(error.contains("logs is a symlink"), "{error}");
    nothing_in(outside.path());
}

/// Proves writes keep their shape: a 0600 file replaced atomically, no temporary file left,
/// new folders 0700, and a FIFO planted in a store is refused without blocking.
#[test]
fn writes_are_atomic_and_private_and_a_fifo_is_never_read() {
    use std::os::unix::fs::PermissionsExt;
    let (home, _outside, paths) = hostile();
    let pins = paths.pins();
    pins.write("a.json", b"old", super::Durability::Full)
        .unwrap();
    pins.write("a.json", b"new", super::Durability::Data)
        .unwrap();
    assert_eq!(pins.read("a.json", 16).unwrap(), b"new");
    assert_eq!(pins.names(".", EntryKind::File), ["a.json"]);
    let file = home.path().join("trust/workspace-profiles/a.json");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&home.path().join("trust")), 0o700);
    assert!(pins.read("a.json", 1).is_err(), "over the cap");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        home.path().join("trust/workspace-profiles/fifo"),
        rustix::fs::FileType::Fifo,
        0o600.into(),
        0,
    )
    .unwrap();
    assert!(
        pins.read("fifo", 16).is_err(),
        "a FIFO is refused without blocking"
    );
}

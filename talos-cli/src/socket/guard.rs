//! The CLI's trust in the socket, checked before it sends a byte (issue 11, defect 4): the
//! socket's directory and the socket file must be the user's own and replaceable by nobody else,
//! and the process that accepted the connection must run as the user (`SO_PEERCRED`). The rules
//! are `talos_protocol::socket::trust`, the same the daemon applies to its directory; this module
//! reads the facts (`lstat`, never following a symlink), makes the directory before the CLI
//! starts a daemon, and makes the refusal (worded in `failure.rs`, with the other ways a command
//! stops).

use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::Path;

use talos_protocol::socket::trust::{
    Distrust, EntryFacts, EntryKind, judge_peer, judge_socket_dir, judge_socket_file,
};

use crate::failure::{Failure, Refusal, Subject};

/// Judges the socket's directory and the socket file before a connect. The outer error is a
/// refusal; the inner one says why there is nothing to connect to (`NotFound` when the
/// directory or the socket is missing, or the error `lstat` gave).
pub fn check_path(socket: &Path, me: u32) -> Result<io::Result<()>, Failure> {
    let dir = directory_of(socket);
    let dir_facts = match lstat(dir) {
        Ok(facts) => facts,
        Err(error) => return Ok(Err(error)),
    };
    judge_socket_dir(dir_facts, me)
        .map_err(|why| refuse(socket, Subject::Directory(dir.into()), why, me))?;
    let socket_facts = match lstat(socket) {
        Ok(facts) => facts,
        Err(error) => return Ok(Err(error)),
    };
    judge_socket_file(socket_facts, me).map_err(|why| refuse(socket, Subject::Socket, why, me))?;
    Ok(Ok(()))
}

/// Judges the process behind a fresh connection, before anything is written to it. `me` is
/// injected so the comparison is testable without a second uid.
pub fn check_peer(stream: &UnixStream, socket: &Path, me: u32) -> Result<(), Failure> {
    let credentials = rustix::net::sockopt::socket_peercred(stream).map_err(|error| {
        Failure::Connection(format!(
            "cannot read the credentials of the process behind {}: {error}",
            socket.display()
        ))
    })?;
    judge_peer(credentials.uid.as_raw(), me).map_err(|why| refuse(socket, Subject::Peer, why, me))
}

/// Before the CLI starts a daemon: makes the socket's directory with mode 0700 when it is
/// missing and its parent exists (`mkdir`, never recursive, never a chmod of something already
/// there), then judges whatever is there, so a directory another user planted first is refused.
pub fn prepare_dir(socket: &Path, me: u32) -> Result<(), Failure> {
    let dir = directory_of(socket);
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        // Already there: judged below. No parent: the daemon creates the whole path.
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::AlreadyExists | io::ErrorKind::NotFound
            ) => {}
        Err(error) => {
            return Err(Failure::Connection(format!(
                "cannot create {}: {error}",
                dir.display()
            )));
        }
    }
    match lstat(dir) {
        Ok(facts) => judge_socket_dir(facts, me)
            .map_err(|why| refuse(socket, Subject::Directory(dir.into()), why, me)),
        Err(_) => Ok(()),
    }
}

/// The directory that holds `socket` (`.` for a bare name, which `--socket` never gives).
fn directory_of(socket: &Path) -> &Path {
    socket
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn refuse(socket: &Path, subject: Subject, why: Distrust, me: u32) -> Failure {
    Failure::Untrusted(Refusal {
        socket: socket.to_path_buf(),
        subject,
        why,
        me,
    })
}

/// What `lstat` says about `path`, never following a symlink.
fn lstat(path: &Path) -> io::Result<EntryFacts> {
    let meta = std::fs::symlink_metadata(path)?;
    let file_type = meta.file_type();
    let kind = if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Directory
    } else if file_type.is_socket() {
        EntryKind::Socket
    } else {
        EntryKind::Other
    };
    Ok(EntryFacts {
        kind,
        owner: meta.uid(),
        mode: meta.mode() & 0o7777,
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixListener;

    use super::*;
    use crate::socket::effective_uid;
    use std::path::PathBuf;

    /// A fresh private directory under the temp dir, removed when dropped (the CLI has no
    /// `tempfile`, and this is all it needs).
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let path = std::env::temp_dir().join(format!(
                "talos-cli-{name}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&path)
                .unwrap();
            Scratch(path)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// What a row puts at `DIR/talosd.sock` before the checks run.
    #[derive(Debug, Clone, Copy)]
    enum Layout {
        NoDirectory,
        EmptyDir(u32),
        SymlinkedDir,
        FileAsDir,
        Listening(u32),
        FileAsSocket,
        SymlinkAsSocket,
    }

    /// What a row expects: connectable, nothing there, or a refusal whose line holds this text.
    #[derive(Debug, Clone)]
    enum Expect {
        Connectable,
        Absent,
        Refused(String),
    }

    /// Lays `layout` out in a temp dir, runs `check_path` (and `check_peer` on a real
    /// connection when it passes, as uid `peer_me`) and compares with `expected`.
    fn check(layout: Layout, peer_me: Option<u32>, expected: Expect) {
        let tmp = Scratch::new("guard");
        let dir = tmp.path().join("run");
        let socket = dir.join("talosd.sock");
        let make_dir = |mode: u32| {
            std::fs::create_dir(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let mut _listener = None;
        match layout {
            Layout::NoDirectory => {}
            Layout::EmptyDir(mode) => make_dir(mode),
            Layout::SymlinkedDir => {
                std::fs::create_dir(tmp.path().join("real")).unwrap();
                std::os::unix::fs::symlink(tmp.path().join("real"), &dir).unwrap();
            }
            Layout::FileAsDir => std::fs::write(&dir, b"").unwrap(),
            Layout::Listening(mode) => {
                make_dir(mode);
                _listener = Some(UnixListener::bind(&socket).unwrap());
            }
            Layout::FileAsSocket => {
                make_dir(0o700);
                std::fs::write(&socket, b"").unwrap();
            }
            Layout::SymlinkAsSocket => {
                make_dir(0o700);
                std::os::unix::fs::symlink("/nonexistent", &socket).unwrap();
            }
        }
        let me = effective_uid();
        let outcome = match check_path(&socket, me) {
            Err(failure) => Err(failure),
            Ok(Err(_)) => Ok(false),
            Ok(Ok(())) => {
                let stream = UnixStream::connect(&socket).unwrap();
                check_peer(&stream, &socket, peer_me.unwrap_or(me)).map(|()| true)
            }
        };
        let row = format!("{layout:?} as {peer_me:?}");
        match (outcome, expected) {
            (Ok(true), Expect::Connectable) | (Ok(false), Expect::Absent) => {}
            (Err(Failure::Untrusted(refusal)), Expect::Refused(text)) => {
                let line = refusal.to_string();
                assert!(line.contains(&text), "{row}: {line}");
                assert!(
                    line.starts_with(&format!("refusing to talk to {}: ", socket.display())),
                    "{row}: {line}"
                );
            }
            (outcome, expected) => panic!("{row}: {outcome:?}, expected {expected:?}"),
        }
    }

    /// Proves the CLI connects only through a directory of its own that nobody else may write
    /// to, to a socket file of its own, behind which runs its own uid (a foreign peer is
    /// simulated by judging the real connection as another uid), and reports a missing
    /// directory or socket as nobody listening.
    #[test]
    fn the_way_to_the_daemon_is_judged_before_anything_is_sent() {
        let me = effective_uid();
        let other = if me == 65534 { 65533 } else { 65534 };
        let refused = |text: &str| Expect::Refused(text.to_string());
        let foreign_peer =
            format!("the process listening on it runs as uid {me}, not as you (uid {other})");
        let rows: Vec<(Layout, Option<u32>, Expect)> = vec![
            (Layout::NoDirectory, None, Expect::Absent),
            (Layout::EmptyDir(0o700), None, Expect::Absent),
            (Layout::Listening(0o700), None, Expect::Connectable),
            (Layout::Listening(0o755), None, Expect::Connectable),
            (
                Layout::EmptyDir(0o777),
                None,
                refused("run is writable by group or others (mode 0777)"),
            ),
            (
                Layout::Listening(0o1777),
                None,
                refused("run is writable by group or others (mode 1777)"),
            ),
            (Layout::SymlinkedDir, None, refused("run is a symlink")),
            (Layout::FileAsDir, None, refused("run is not a directory")),
            (Layout::FileAsSocket, None, refused("it is not a socket")),
            (Layout::SymlinkAsSocket, None, refused("it is a symlink")),
            (
                Layout::Listening(0o700),
                Some(other),
                Expect::Refused(foreign_peer),
            ),
        ];
        for (layout, peer_me, expected) in rows {
            check(layout, peer_me, expected);
        }
    }

    /// Proves the CLI makes a missing socket directory 0700 before starting a daemon, leaves an
    /// existing private one as it is and refuses a shared one without changing it.
    #[test]
    fn prepare_dir_creates_private_and_never_chmods() {
        let me = effective_uid();
        let tmp = Scratch::new("prepare");
        let fresh = tmp.path().join("fresh/talosd.sock");
        prepare_dir(&fresh, me).unwrap();
        let mode = |path: &Path| std::fs::symlink_metadata(path).unwrap().mode() & 0o7777;
        assert_eq!(mode(&tmp.path().join("fresh")), 0o700);
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(matches!(
            prepare_dir(&shared.join("talosd.sock"), me),
            Err(Failure::Untrusted(_))
        ));
        assert_eq!(mode(&shared), 0o1777);
        let orphan = tmp.path().join("no/parent/talosd.sock");
        prepare_dir(&orphan, me).unwrap();
        assert!(
            !tmp.path().join("no").exists(),
            "the daemon makes deeper paths"
        );
    }
}

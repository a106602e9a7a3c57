//! Socket security, in order: a runtime directory that only this uid can write to (created
//! 0700 when missing; an existing one is never chmodded, and a symlink, a foreign owner or
//! group/other write bits are refused), a lock so only one daemon runs, stale-socket removal
//! only under that lock and only when a connect is refused, a 0600 socket, and the peer's uid
//! checked on every connection. Never the abstract namespace: it has no permissions.
// std::fs here: the socket directory, lock file and socket, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::fs::{DirBuilder, File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use talos_protocol::socket::trust::{
    Distrust, EntryFacts, EntryKind, judge_peer, judge_socket_dir, judge_socket_file,
};
use tokio::net::{UnixListener, UnixStream};

/// Linux's `sun_path` holds 108 bytes including the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error(
        "socket path {0} is longer than {MAX_SOCKET_PATH} bytes; choose a shorter --socket or TALOS_HOME"
    )]
    PathTooLong(String),
    #[error("socket path {0} has no parent directory")]
    NoParent(String),
    #[error("runtime directory {0} is a symlink; refusing to use it")]
    DirIsSymlink(String),
    #[error(
        "runtime directory {path} is owned by uid {owner}, not by uid {me}; refusing to use it"
    )]
    ForeignOwner { path: String, owner: u32, me: u32 },
    #[error("runtime directory {0} is not a directory")]
    NotADirectory(String),
    #[error(
        "runtime directory {path} is writable by group or others (mode {mode:04o}); talosd changes only directories it creates: choose a --socket inside a private directory (yours, writable only by you), or a path whose directory does not exist yet"
    )]
    NotPrivate { path: String, mode: u32 },
    #[error("another talosd holds {path} (pid {pid})")]
    AlreadyRunning { path: String, pid: String },
    #[error("{0} exists and is not a socket; refusing to remove it")]
    NotASocket(String),
    #[error("socket activation: {0}")]
    Activation(String),
    #[error("a live server already answers on {0}")]
    LiveSocket(String),
    #[error("{context} {path}")]
    Io {
        context: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(context: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SocketError {
    let path = path.display().to_string();
    move |source| SocketError::Io {
        context,
        path,
        source,
    }
}

/// The effective uid of this process.
pub fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Creates (or checks) the directory that holds the socket and the lock.
///
/// The rule: talosd sets the mode only of a directory it creates itself, 0700, and so is every
/// missing parent it creates on the way. An existing directory is never chmodded; it must pass
/// [`judge_socket_dir`]: a real directory (a symlink is refused, never followed) owned by this
/// uid that neither group nor others may write to. So `--socket /tmp/x.sock` is refused (1777),
/// and so is a 0775 directory; an existing 0755 directory of the user's own is accepted, because
/// only its owner can create, rename or remove the socket there, the socket is 0600 and every
/// peer's uid is checked.
pub fn secure_runtime_dir(dir: &Path) -> Result<(), SocketError> {
    let created = create_private_dir(dir)?;
    let meta = std::fs::symlink_metadata(dir).map_err(io("cannot inspect", dir))?;
    let facts = entry_facts(&meta);
    judge_socket_dir(facts, my_uid()).map_err(|why| refusal(dir, why))?;
    if created && facts.mode != 0o700 {
        // Ours, just made: a umask may have taken owner bits away.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("cannot chmod", dir))?;
    }
    Ok(())
}

/// The `lstat` facts the trust rules judge.
pub fn entry_facts(meta: &Metadata) -> EntryFacts {
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
    EntryFacts {
        kind,
        owner: meta.uid(),
        mode: meta.mode() & 0o7777,
    }
}

/// Makes `dir` with mode 0700 (its missing parents too); whether this call created it.
fn create_private_dir(dir: &Path) -> Result<bool, SocketError> {
    let make = |path: &Path| match DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    };
    match make(dir) {
        Ok(created) => Ok(created),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .map_err(io("cannot create", parent))?;
            }
            make(dir).map_err(io("cannot create", dir))
        }
        Err(e) => Err(io("cannot create", dir)(e)),
    }
}

/// The error for a runtime directory the trust rule refuses.
fn refusal(dir: &Path, why: Distrust) -> SocketError {
    let path = dir.display().to_string();
    match why {
        Distrust::Symlink => SocketError::DirIsSymlink(path),
        Distrust::NotADirectory | Distrust::NotASocket => SocketError::NotADirectory(path),
        Distrust::WritableByOthers { mode } => SocketError::NotPrivate { path, mode },
        // The directory rule never names a peer; a foreign uid is a foreign uid.
        Distrust::ForeignOwner { owner } | Distrust::ForeignPeer { peer: owner } => {
            SocketError::ForeignOwner {
                path,
                owner,
                me: my_uid(),
            }
        }
    }
}

/// Held for the daemon's life; the kernel releases it if the process dies.
#[derive(Debug)]
pub struct DaemonLock {
    _file: File,
    path: PathBuf,
}

impl DaemonLock {
    pub fn acquire(dir: &Path) -> Result<DaemonLock, SocketError> {
        let path = dir.join("talosd.lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(io("cannot open lock", &path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = std::fs::read_to_string(&path)
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                return Err(SocketError::AlreadyRunning {
                    path: path.display().to_string(),
                    pid,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io("cannot lock", &path)(e)),
        }
        file.set_len(0).map_err(io("cannot write lock", &path))?;
        writeln!(file, "{}", std::process::id()).map_err(io("cannot write lock", &path))?;
        Ok(DaemonLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// With the lock held: removes a leftover socket nobody answers on.
pub fn clear_stale_socket(socket: &Path, _lock: &DaemonLock) -> Result<(), SocketError> {
    let meta = match std::fs::symlink_metadata(socket) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("cannot inspect", socket)(e)),
    };
    if !meta.file_type().is_socket() {
        return Err(SocketError::NotASocket(socket.display().to_string()));
    }
    match std::os::unix::net::UnixStream::connect(socket) {
        Ok(_) => Err(SocketError::LiveSocket(socket.display().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            tracing::info!(socket = %socket.display(), "removing stale socket");
            std::fs::remove_file(socket).map_err(io("cannot remove stale socket", socket))
        }
        Err(e) => Err(io("cannot probe", socket)(e)),
    }
}

/// Everything the daemon needs to serve: the bound listener and the lock that guards it.
#[derive(Debug)]
pub struct BoundSocket {
    pub listener: UnixListener,
    pub lock: DaemonLock,
    pub path: PathBuf,
}

/// Runs the whole sequence and binds the socket with mode 0600. Must run inside a tokio runtime.
pub fn bind(socket: &Path) -> Result<BoundSocket, SocketError> {
    if socket.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(SocketError::PathTooLong(socket.display().to_string()));
    }
    let dir = socket
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| SocketError::NoParent(socket.display().to_string()))?;
    secure_runtime_dir(dir)?;
    let lock = DaemonLock::acquire(dir)?;
    clear_stale_socket(socket, &lock)?;
    let listener = UnixListener::bind(socket).map_err(io("cannot bind", socket))?;
    // The directory is 0700, so the moment between bind and chmod exposes nothing.
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(io("cannot chmod", socket))?;
    Ok(BoundSocket {
        listener,
        lock,
        path: socket.to_path_buf(),
    })
}

/// Takes over a listening socket the service manager bound (systemd socket activation) and
/// applies the checks [`bind`] applies to its own: the socket is bound to `expected` (the path
/// `talos` computes), its directory passes the directory rule (never created or chmodded here),
/// the path is a socket owned by this uid (not a symlink), and the daemon lock is taken. The
/// socket's mode is the unit's `SocketMode=0600`; the directory rule is what keeps others out.
pub fn adopt(
    listener: std::os::unix::net::UnixListener,
    expected: &Path,
) -> Result<BoundSocket, SocketError> {
    let shown = expected.display().to_string();
    let bound = listener.local_addr().map_err(io(
        "cannot read the address of the passed socket for",
        expected,
    ))?;
    let Some(path) = bound.as_pathname() else {
        return Err(SocketError::Activation(format!(
            "the passed socket has no path (abstract or unnamed); talos connects to {shown}"
        )));
    };
    if path != expected {
        return Err(SocketError::Activation(format!(
            "the passed socket listens on {}, but talos connects to {shown}; make ListenStream= \
             and the socket talosd computes (--socket, TALOS_HOME, XDG_RUNTIME_DIR) agree",
            path.display()
        )));
    }
    if !rustix::net::sockopt::socket_acceptconn(&listener).unwrap_or(false) {
        return Err(SocketError::Activation(format!(
            "the socket passed for {shown} is not listening"
        )));
    }
    let dir = expected
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| SocketError::NoParent(shown.clone()))?;
    let meta = std::fs::symlink_metadata(dir).map_err(io("cannot inspect", dir))?;
    judge_socket_dir(entry_facts(&meta), my_uid()).map_err(|why| refusal(dir, why))?;
    let meta = std::fs::symlink_metadata(expected).map_err(io("cannot inspect", expected))?;
    judge_socket_file(entry_facts(&meta), my_uid()).map_err(|why| match why {
        Distrust::ForeignOwner { owner } => SocketError::Activation(format!(
            "{shown} is owned by uid {owner}, not by uid {}",
            my_uid()
        )),
        _ => SocketError::NotASocket(shown.clone()),
    })?;
    let lock = DaemonLock::acquire(dir)?;
    listener
        .set_nonblocking(true)
        .map_err(io("cannot configure", expected))?;
    let listener = UnixListener::from_std(listener).map_err(io("cannot adopt", expected))?;
    Ok(BoundSocket {
        listener,
        lock,
        path: expected.to_path_buf(),
    })
}

/// Whether the peer of `stream` runs as this daemon's uid (the rule the CLI applies too).
pub fn peer_allowed(stream: &UnixStream) -> Result<bool, std::io::Error> {
    Ok(judge_peer(stream.peer_cred()?.uid(), my_uid()).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a runtime-directory row starts from.
    #[derive(Debug, Clone, Copy)]
    enum Existing {
        Nothing,
        Dir(u32),
        ForeignDir,
        Symlink,
        File,
    }

    /// Runs `secure_runtime_dir` on `a/b/run` as `existing` left it: a part of the refusal and
    /// the mode afterwards (`None` when nothing is there).
    fn check(existing: Existing, expected: Result<(), &str>, mode_after: Option<u32>) {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("a/b");
        let dir = parent.join("run");
        if !matches!(existing, Existing::Nothing) {
            std::fs::create_dir_all(&parent).unwrap();
        }
        match existing {
            Existing::Nothing => {}
            Existing::Dir(mode) => {
                std::fs::create_dir(&dir).unwrap();
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            Existing::ForeignDir => {
                std::fs::create_dir(&dir).unwrap();
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
                std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
            }
            Existing::Symlink => {
                std::fs::create_dir(tmp.path().join("real")).unwrap();
                std::os::unix::fs::symlink(tmp.path().join("real"), &dir).unwrap();
            }
            Existing::File => {
                std::fs::write(&dir, b"").unwrap();
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
        }
        let verdict = secure_runtime_dir(&dir).map_err(|e| e.to_string());
        match (&verdict, expected) {
            (Ok(()), Ok(())) => {}
            (Err(message), Err(part)) => assert!(message.contains(part), "{message}"),
            _ => panic!("{existing:?}: {verdict:?}, expected {expected:?}"),
        }
        let after = std::fs::symlink_metadata(&dir)
            .ok()
            .map(|m| m.mode() & 0o7777);
        assert_eq!(after, mode_after, "{existing:?}");
        if matches!(existing, Existing::Nothing) {
            for created in [tmp.path().join("a"), parent] {
                let mode = std::fs::metadata(&created).unwrap().mode() & 0o7777;
                assert_eq!(mode, 0o700, "{}", created.display());
            }
        }
    }

    /// Proves talosd creates missing directories 0700 (parents too), accepts an existing one of
    /// its own that only it can write to without changing it, and refuses a shared (group/other
    /// writable, like /tmp), foreign-owned, symlinked or non-directory one without touching it.
    #[test]
    fn runtime_dir_is_created_private_and_an_existing_one_is_judged_never_chmodded() {
        let symlink_mode = Some(0o777);
        let rows: Vec<(Existing, Result<(), &str>, Option<u32>)> = vec![
            (Existing::Nothing, Ok(()), Some(0o700)),
            (Existing::Dir(0o700), Ok(()), Some(0o700)),
            (Existing::Dir(0o755), Ok(()), Some(0o755)),
            (Existing::Dir(0o750), Ok(()), Some(0o750)),
            (
                Existing::Dir(0o775),
                Err("run is writable by group or others (mode 0775)"),
                Some(0o775),
            ),
            (
                Existing::Dir(0o1777),
                Err("run is writable by group or others (mode 1777)"),
                Some(0o1777),
            ),
            (Existing::Symlink, Err("run is a symlink"), symlink_mode),
            (Existing::File, Err("run is not a directory"), Some(0o600)),
        ];
        for (existing, expected, mode_after) in rows {
            check(existing, expected, mode_after);
        }
        if my_uid() == 0 {
            check(
                Existing::ForeignDir,
                Err("run is owned by uid 65534, not by uid 0"),
                Some(0o700),
            );
        } else {
            eprintln!("not covered (needs root to chown): a runtime directory of another uid");
        }
    }

    #[test]
    fn a_second_lock_is_refused_and_a_file_in_the_socket_place_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let lock = DaemonLock::acquire(tmp.path()).unwrap();
        let second = DaemonLock::acquire(tmp.path()).unwrap_err().to_string();
        assert!(second.starts_with("another talosd holds"), "{second}");
        let not_socket = tmp.path().join("talosd.sock");
        std::fs::write(&not_socket, b"keep me").unwrap();
        assert!(matches!(
            clear_stale_socket(&not_socket, &lock),
            Err(SocketError::NotASocket(_))
        ));
        assert_eq!(std::fs::read(&not_socket).unwrap(), b"keep me");
    }

    #[test]
    fn a_stale_socket_is_removed_and_a_live_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let lock = DaemonLock::acquire(tmp.path()).unwrap();
        let path = tmp.path().join("s.sock");
        let live = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(matches!(
            clear_stale_socket(&path, &lock),
            Err(SocketError::LiveSocket(_))
        ));
        drop(live);
        clear_stale_socket(&path, &lock).unwrap();
        assert!(!path.exists());
    }
}

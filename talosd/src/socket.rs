//! Socket security, in order: a private 0700 runtime directory (refusing a symlink or a
//! foreign owner), a lock so only one daemon runs, stale-socket removal only under that lock
//! and only when a connect is refused, a 0600 socket, and the peer's uid checked on every
//! connection. Never the abstract namespace: it has no permissions.
// std::fs here: the socket directory, lock file and socket, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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
    #[error("another talosd holds {path} (pid {pid})")]
    AlreadyRunning { path: String, pid: String },
    #[error("{0} exists and is not a socket; refusing to remove it")]
    NotASocket(String),
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

/// Creates (or checks) the private directory that holds the socket and the lock.
pub fn secure_runtime_dir(dir: &Path) -> Result<(), SocketError> {
    match DirBuilder::new().recursive(false).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent).map_err(io("cannot create", parent))?;
            }
            match DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io("cannot create", dir)(e)),
            }
        }
        Err(e) => return Err(io("cannot create", dir)(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io("cannot inspect", dir))?;
    if meta.file_type().is_symlink() {
        return Err(SocketError::DirIsSymlink(dir.display().to_string()));
    }
    if !meta.is_dir() {
        return Err(SocketError::NotADirectory(dir.display().to_string()));
    }
    let me = my_uid();
    if meta.uid() != me {
        return Err(SocketError::ForeignOwner {
            path: dir.display().to_string(),
            owner: meta.uid(),
            me,
        });
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io("cannot chmod", dir))?;
    }
    Ok(())
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
    use std::os::unix::fs::FileTypeExt;
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

/// Whether the peer of `stream` runs as this daemon's uid.
pub fn peer_allowed(stream: &UnixStream) -> Result<bool, std::io::Error> {
    Ok(stream.peer_cred()?.uid() == my_uid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_dir_refuses_a_symlink_and_tightens_modes() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(
            secure_runtime_dir(&link),
            Err(SocketError::DirIsSymlink(_))
        ));
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        secure_runtime_dir(&real).unwrap();
        assert_eq!(std::fs::metadata(&real).unwrap().mode() & 0o777, 0o700);
        let fresh = tmp.path().join("a/b/run");
        secure_runtime_dir(&fresh).unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().mode() & 0o777, 0o700);
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

//! When the way to the daemon can be trusted: the socket's directory, the socket file and the
//! process listening on it must all be the user's own. Pure rules over facts the caller reads
//! (`lstat` never following a symlink, `SO_PEERCRED`); `talosd` applies the directory rule
//! before it binds, and the `talos` CLI applies all three before it sends a byte.

/// What `lstat` (never following a symlink) says about one entry on the way to the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryFacts {
    /// The file type, of the entry itself (a symlink is a symlink).
    pub kind: EntryKind,
    /// The owner's uid.
    pub owner: u32,
    /// The permission bits, with set-id and sticky bits (`st_mode & 0o7777`).
    pub mode: u32,
}

/// The file type of an entry, as `lstat` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory.
    Directory,
    /// A Unix domain socket.
    Socket,
    /// A symbolic link, whatever it points to.
    Symlink,
    /// Anything else: a regular file, a FIFO, a device.
    Other,
}

/// Why an entry on the way to the daemon (or the process behind the socket) is not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distrust {
    /// The entry is a symlink: whoever controls its target controls the socket.
    Symlink,
    /// The socket's directory is not a directory.
    NotADirectory,
    /// The socket path names something other than a socket.
    NotASocket,
    /// The entry belongs to another uid.
    ForeignOwner {
        /// The uid that owns it.
        owner: u32,
    },
    /// Group or others may create, rename or remove entries in the directory.
    WritableByOthers {
        /// Its permission bits, with set-id and sticky bits.
        mode: u32,
    },
    /// The process listening on the socket runs as another uid (`SO_PEERCRED`).
    ForeignPeer {
        /// The peer's uid.
        peer: u32,
    },
}

/// Group and other write bits: whoever has one may replace the socket in the directory.
const WRITE_BY_OTHERS: u32 = 0o022;

/// The rule for the socket's directory: a real directory (a symlink is never followed), owned by
/// `me`, that neither group nor others may write to. Read and search bits for others (an
/// existing 0755 directory of the user's own) are accepted: only its owner can create, rename
/// or remove the socket inside it, and the socket itself is 0600. A sticky world-writable
/// directory (`/tmp`, mode 1777) is refused, whoever owns it: anyone may create a name in it.
pub fn judge_socket_dir(dir: EntryFacts, me: u32) -> Result<(), Distrust> {
    match dir.kind {
        EntryKind::Symlink => return Err(Distrust::Symlink),
        EntryKind::Directory => {}
        EntryKind::Socket | EntryKind::Other => return Err(Distrust::NotADirectory),
    }
    if dir.owner != me {
        return Err(Distrust::ForeignOwner { owner: dir.owner });
    }
    if dir.mode & WRITE_BY_OTHERS != 0 {
        return Err(Distrust::WritableByOthers { mode: dir.mode });
    }
    Ok(())
}

/// The rule for the socket file itself: a socket (not a symlink to one) owned by `me`. Its mode
/// is not judged: the directory rule already keeps everyone else from replacing it.
pub fn judge_socket_file(socket: EntryFacts, me: u32) -> Result<(), Distrust> {
    match socket.kind {
        EntryKind::Socket => {}
        EntryKind::Symlink => return Err(Distrust::Symlink),
        EntryKind::Directory | EntryKind::Other => return Err(Distrust::NotASocket),
    }
    if socket.owner != me {
        return Err(Distrust::ForeignOwner {
            owner: socket.owner,
        });
    }
    Ok(())
}

/// The rule for the process behind a connected socket: its uid (`SO_PEERCRED`) is `me`; root
/// is not `me` either, unless `me` is root.
pub fn judge_peer(peer: u32, me: u32) -> Result<(), Distrust> {
    if peer == me {
        Ok(())
    } else {
        Err(Distrust::ForeignPeer { peer })
    }
}

#[cfg(test)]
mod tests {
    use super::EntryKind::{Directory, Other, Socket, Symlink};
    use super::*;

    /// Which rule a row asks.
    #[derive(Debug)]
    enum Ask {
        Dir(EntryKind, u32, u32),
        File(EntryKind, u32, u32),
        Peer(u32),
    }

    const ME: u32 = 1000;

    fn check(ask: Ask, me: u32, expected: Result<(), Distrust>) {
        let facts = |kind, owner, mode| EntryFacts { kind, owner, mode };
        let verdict = match ask {
            Ask::Dir(kind, owner, mode) => judge_socket_dir(facts(kind, owner, mode), me),
            Ask::File(kind, owner, mode) => judge_socket_file(facts(kind, owner, mode), me),
            Ask::Peer(peer) => judge_peer(peer, me),
        };
        assert_eq!(verdict, expected, "{ask:?}, me {me}");
    }

    /// Proves a socket directory is trusted only when it is a real directory of mine that
    /// nobody else may write to (0700, 0750 and 0755 pass; 0775, 0702, 1777 and another owner
    /// fail), a socket file only when it is a socket of mine, a peer only when it runs as me.
    #[test]
    fn trust_rows() {
        let rows = [
            (Ask::Dir(Directory, ME, 0o700), ME, Ok(())),
            (Ask::Dir(Directory, ME, 0o755), ME, Ok(())),
            (Ask::Dir(Directory, ME, 0o750), ME, Ok(())),
            (Ask::Dir(Directory, ME, 0o1755), ME, Ok(())),
            (
                Ask::Dir(Directory, ME, 0o775),
                ME,
                Err(Distrust::WritableByOthers { mode: 0o775 }),
            ),
            (
                Ask::Dir(Directory, ME, 0o702),
                ME,
                Err(Distrust::WritableByOthers { mode: 0o702 }),
            ),
            (
                Ask::Dir(Directory, ME, 0o1777),
                ME,
                Err(Distrust::WritableByOthers { mode: 0o1777 }),
            ),
            (
                Ask::Dir(Directory, 0, 0o1777),
                ME,
                Err(Distrust::ForeignOwner { owner: 0 }),
            ),
            (
                Ask::Dir(Directory, 65534, 0o700),
                ME,
                Err(Distrust::ForeignOwner { owner: 65534 }),
            ),
            (
                Ask::Dir(Directory, 0, 0o1777),
                0,
                Err(Distrust::WritableByOthers { mode: 0o1777 }),
            ),
            (Ask::Dir(Symlink, ME, 0o777), ME, Err(Distrust::Symlink)),
            (Ask::Dir(Other, ME, 0o700), ME, Err(Distrust::NotADirectory)),
            (
                Ask::Dir(Socket, ME, 0o700),
                ME,
                Err(Distrust::NotADirectory),
            ),
            (Ask::File(Socket, ME, 0o600), ME, Ok(())),
            (Ask::File(Socket, ME, 0o777), ME, Ok(())),
            (
                Ask::File(Socket, 65534, 0o600),
                ME,
                Err(Distrust::ForeignOwner { owner: 65534 }),
            ),
            (Ask::File(Symlink, ME, 0o777), ME, Err(Distrust::Symlink)),
            (Ask::File(Other, ME, 0o600), ME, Err(Distrust::NotASocket)),
            (
                Ask::File(Directory, ME, 0o700),
                ME,
                Err(Distrust::NotASocket),
            ),
            (Ask::Peer(ME), ME, Ok(())),
            (Ask::Peer(0), 0, Ok(())),
            (
                Ask::Peer(65534),
                ME,
                Err(Distrust::ForeignPeer { peer: 65534 }),
            ),
            (Ask::Peer(0), ME, Err(Distrust::ForeignPeer { peer: 0 })),
            (Ask::Peer(ME), 0, Err(Distrust::ForeignPeer { peer: ME })),
        ];
        for (ask, me, expected) in rows {
            check(ask, me, expected);
        }
    }
}

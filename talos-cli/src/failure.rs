//! What can stop the `talos` command early, the message each prints and the exit code each
//! maps to: 2 for usage, connection and protocol errors, 3 for a socket that is not the user's
//! own (refused before anything is sent), 0 for a closed stdout (a broken pipe is how
//! `talos ... | head` ends, not an error).

use std::fmt;
use std::io;
use std::path::PathBuf;

use talos_protocol::RpcError;
use talos_protocol::socket::trust::Distrust;

/// Exit code for usage, connection and protocol errors.
pub const EXIT_USAGE_OR_CONNECTION: u8 = 2;
/// Exit code for a socket, its directory or its listener that is not the user's own.
pub const EXIT_UNTRUSTED_SOCKET: u8 = 3;

/// Why a command stopped before it could report a result.
#[derive(Debug)]
pub enum Failure {
    /// The arguments were understood but cannot be acted on (a missing workspace, ...).
    Usage(String),
    /// No daemon answers on the socket and this command does not start one.
    NotRunning(PathBuf),
    /// The socket could not be reached or the connection broke.
    Connection(String),
    /// The socket, its directory or the process behind it is not the user's own: nothing was
    /// sent to it.
    Untrusted(Refusal),
    /// The daemon answered a call with a JSON-RPC error.
    Rpc(RpcError),
    /// Writing our own output failed for a reason other than a closed reader.
    Output(io::Error),
    /// Stdout was closed by its reader: stop quietly.
    BrokenPipe,
}

impl Failure {
    /// The exit code this failure ends the process with.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::BrokenPipe => 0,
            Failure::Untrusted(_) => EXIT_UNTRUSTED_SOCKET,
            Failure::Usage(_)
            | Failure::NotRunning(_)
            | Failure::Connection(_)
            | Failure::Rpc(_)
            | Failure::Output(_) => EXIT_USAGE_OR_CONNECTION,
        }
    }

    /// Maps an error from writing to stdout: a broken pipe is a quiet stop.
    pub fn from_output(error: io::Error) -> Failure {
        if error.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Output(error)
        }
    }
}

impl fmt::Display for Failure {
    /// The line printed to stderr; empty for a broken pipe.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) | Failure::Connection(message) => {
                write!(f, "talos: {message}")
            }
            Failure::NotRunning(socket) => {
                write!(f, "talosd is not running (socket: {})", socket.display())
            }
            Failure::Untrusted(refusal) => write!(f, "talos: {refusal}"),
            Failure::Rpc(error) => write!(f, "talos: {}", error.message),
            Failure::Output(error) => write!(f, "talos: cannot write output: {error}"),
            Failure::BrokenPipe => Ok(()),
        }
    }
}

/// Which entry on the way to the daemon a refusal is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The socket's directory, at this path.
    Directory(PathBuf),
    /// The socket file.
    Socket,
    /// The process that accepted the connection.
    Peer,
}

/// Why the CLI will not talk to a socket. Nothing has been sent when it is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub socket: PathBuf,
    pub subject: Subject,
    pub why: Distrust,
    /// The effective uid of this process.
    pub me: u32,
}

impl fmt::Display for Refusal {
    /// "refusing to talk to PATH: WHO WHAT; nothing was sent ...".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refusing to talk to {}: ", self.socket.display())?;
        match &self.subject {
            Subject::Directory(dir) => write!(f, "its directory {}", dir.display())?,
            Subject::Socket => write!(f, "it")?,
            Subject::Peer => write!(f, "the process listening on it")?,
        }
        let me = self.me;
        match self.why {
            Distrust::Symlink => write!(f, " is a symlink")?,
            Distrust::NotADirectory => write!(f, " is not a directory")?,
            Distrust::NotASocket => write!(f, " is not a socket")?,
            Distrust::ForeignOwner { owner } => {
                write!(f, " is owned by uid {owner}, not by you (uid {me})")?
            }
            Distrust::WritableByOthers { mode } => {
                write!(f, " is writable by group or others (mode {mode:04o})")?
            }
            Distrust::ForeignPeer { peer } => {
                write!(f, " runs as uid {peer}, not as you (uid {me})")?
            }
        }
        write!(
            f,
            "; nothing was sent. If you did not make it, another user may have: remove it, or \
             use --socket (or $XDG_RUNTIME_DIR) in a directory only you can write to"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use talos_protocol::ErrorCode;
    use talos_protocol::socket::trust::Distrust;

    const NOTHING_SENT: &str = "; nothing was sent. If you did not make it, another user may \
                                have: remove it, or use --socket (or $XDG_RUNTIME_DIR) in a \
                                directory only you can write to";

    fn refusal(subject: Subject, why: Distrust) -> Failure {
        Failure::Untrusted(Refusal {
            socket: PathBuf::from("/tmp/talos-1000/talosd.sock"),
            subject,
            why,
            me: 1000,
        })
    }

    fn check(failure: Failure, expected_code: u8, expected_text: &str) {
        assert_eq!(failure.exit_code(), expected_code, "{failure:?}");
        assert_eq!(failure.to_string(), expected_text, "{failure:?}");
    }

    #[test]
    fn each_failure_has_its_exit_code_and_line() {
        check(Failure::Usage("bad".into()), 2, "talos: bad");
        check(
            Failure::NotRunning(PathBuf::from("/r/talosd.sock")),
            2,
            "talosd is not running (socket: /r/talosd.sock)",
        );
        check(
            Failure::Rpc(RpcError::new(ErrorCode::SessionBusy, "session busy")),
            2,
            "talos: session busy",
        );
        check(
            Failure::from_output(io::Error::from(io::ErrorKind::BrokenPipe)),
            0,
            "",
        );
        check(
            Failure::from_output(io::Error::other("disk full")),
            2,
            "talos: cannot write output: disk full",
        );
        let dir = || Subject::Directory(PathBuf::from("/tmp/talos-1000"));
        let refusals = [
            (
                refusal(dir(), Distrust::ForeignOwner { owner: 65534 }),
                "its directory /tmp/talos-1000 is owned by uid 65534, not by you (uid 1000)",
            ),
            (
                refusal(dir(), Distrust::WritableByOthers { mode: 0o1777 }),
                "its directory /tmp/talos-1000 is writable by group or others (mode 1777)",
            ),
            (
                refusal(dir(), Distrust::Symlink),
                "its directory /tmp/talos-1000 is a symlink",
            ),
            (
                refusal(dir(), Distrust::NotADirectory),
                "its directory /tmp/talos-1000 is not a directory",
            ),
            (
                refusal(Subject::Socket, Distrust::ForeignOwner { owner: 65534 }),
                "it is owned by uid 65534, not by you (uid 1000)",
            ),
            (
                refusal(Subject::Socket, Distrust::NotASocket),
                "it is not a socket",
            ),
            (
                refusal(Subject::Peer, Distrust::ForeignPeer { peer: 65534 }),
                "the process listening on it runs as uid 65534, not as you (uid 1000)",
            ),
        ];
        for (failure, what) in refusals {
            let line = format!(
                "talos: refusing to talk to /tmp/talos-1000/talosd.sock: {what}{NOTHING_SENT}"
            );
            check(failure, 3, &line);
        }
    }
}

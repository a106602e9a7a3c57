//! What can stop the `talos` command early, the message each prints and the exit code each
//! maps to: 2 for usage, connection and protocol errors, 0 for a closed stdout (a broken pipe
//! is how `talos ... | head` ends, not an error).

use std::fmt;
use std::io;
use std::path::PathBuf;

use talos_protocol::RpcError;

/// Exit code for usage, connection and protocol errors.
pub const EXIT_USAGE_OR_CONNECTION: u8 = 2;

/// Why a command stopped before it could report a result.
#[derive(Debug)]
pub enum Failure {
    /// The arguments were understood but cannot be acted on (a missing workspace, ...).
    Usage(String),
    /// No daemon answers on the socket and this command does not start one.
    NotRunning(PathBuf),
    /// The socket could not be reached or the connection broke.
    Connection(String),
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
            Failure::Rpc(error) => write!(f, "talos: {}", error.message),
            Failure::Output(error) => write!(f, "talos: cannot write output: {error}"),
            Failure::BrokenPipe => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use talos_protocol::ErrorCode;

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
    }
}

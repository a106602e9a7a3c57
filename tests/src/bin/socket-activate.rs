//! Starts a program the way systemd's socket activation does, for `tests/daemon/activation.rs`:
//! binds a Unix stream socket at a path (its directory created with the given mode), leaves it
//! at descriptor 3 without close-on-exec, sets `LISTEN_FDS=1` and `LISTEN_PID` to its own pid,
//! and execs the program in its place (so the pid it named is the program's).
//!
//! Usage: `socket-activate [--dir-mode OCTAL] [--listen-pid PID] SOCKET -- PROGRAM [ARGS...]`.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!(
            "usage: socket-activate [--dir-mode OCTAL] [--listen-pid PID] SOCKET -- PROGRAM [ARGS...]"
        );
        return ExitCode::from(2);
    };
    let (ours, program) = (&args[..split], &args[split + 1..]);
    let mut dir_mode = 0o700;
    let mut listen_pid = std::process::id().to_string();
    let mut socket = None;
    let mut it = ours.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--dir-mode" => {
                dir_mode = it
                    .next()
                    .and_then(|m| u32::from_str_radix(m, 8).ok())
                    .unwrap_or(0o700);
            }
            "--listen-pid" => listen_pid = it.next().cloned().unwrap_or_default(),
            path => socket = Some(PathBuf::from(path)),
        }
    }
    let (Some(socket), Some((exe, rest))) = (socket, program.split_first()) else {
        eprintln!("socket-activate: a SOCKET and a PROGRAM are required");
        return ExitCode::from(2);
    };
    match activate(&socket, dir_mode, &listen_pid, exe, rest) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("socket-activate: {e}");
            ExitCode::FAILURE
        }
    }
}

fn activate(
    socket: &std::path::Path,
    dir_mode: u32,
    listen_pid: &str,
    exe: &str,
    args: &[String],
) -> std::io::Result<std::convert::Infallible> {
    if let Some(dir) = socket.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(dir_mode))?;
    }
    let listener = std::os::unix::net::UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    if listener.as_raw_fd() != 3 {
        return Err(std::io::Error::other(format!(
            "the socket is descriptor {}, not 3",
            listener.as_raw_fd()
        )));
    }
    // Inherited across exec, as systemd passes it.
    rustix::io::fcntl_setfd(&listener, rustix::io::FdFlags::empty())?;
    let error = Command::new(exe)
        .args(args)
        .env("LISTEN_FDS", "1")
        .env("LISTEN_PID", listen_pid)
        .exec();
    drop(listener);
    Err(error)
}

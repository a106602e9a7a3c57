//! Where the daemon's socket is and how to reach it: the `--socket` flag or the default path
//! (computed by `talos_protocol::socket`, the rule `talosd` uses too, from this process's
//! environment), connecting only through a socket that is the user's own ([`guard`], checked
//! before a byte is sent), and starting the daemon when `talos run` finds none answering.

pub mod guard;

use std::ffi::OsString;
use std::io;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use talos_protocol::socket::{SocketEnv, default_socket_path};

use crate::failure::Failure;

/// How long `talos run` waits for a daemon it started to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(10);
const FIRST_BACKOFF: Duration = Duration::from_millis(20);
const MAX_BACKOFF: Duration = Duration::from_millis(400);

/// The socket this invocation talks to, and whether it was named with `--socket`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketTarget {
    pub path: PathBuf,
    pub explicit: bool,
}

/// Whether a command may start the daemon when none answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoStart {
    /// Start `talosd` and wait for it (only `talos run`).
    Start,
    /// Report that the daemon is not running.
    Never,
}

/// Reads the facts the default socket path depends on from this process's environment.
pub fn socket_env_from_process() -> SocketEnv {
    SocketEnv {
        talos_home: std::env::var("TALOS_HOME").ok(),
        xdg_runtime_dir: std::env::var("XDG_RUNTIME_DIR").ok(),
        temp_dir: std::env::temp_dir(),
        uid: effective_uid(),
    }
}

impl SocketTarget {
    /// Resolves the socket from `--socket` (made absolute against the current directory, so a
    /// daemon started from here finds the same file) or the environment.
    pub fn resolve(explicit: Option<&Path>, env: &SocketEnv) -> SocketTarget {
        match explicit {
            Some(path) => {
                let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
                SocketTarget {
                    path,
                    explicit: true,
                }
            }
            None => SocketTarget {
                path: default_socket_path(env),
                explicit: false,
            },
        }
    }
}

/// The effective uid of this process.
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Which program to run as the daemon: `$TALOS_DAEMON`, else `talosd` next to this
/// executable, else `talosd` looked up on `PATH`.
pub fn daemon_program(override_program: Option<OsString>, current_exe: Option<&Path>) -> PathBuf {
    if let Some(program) = override_program.filter(|p| !p.is_empty()) {
        return PathBuf::from(program);
    }
    if let Some(sibling) = current_exe
        .and_then(Path::parent)
        .map(|dir| dir.join("talosd"))
        && sibling.is_file()
    {
        return sibling;
    }
    PathBuf::from("talosd")
}

/// Connects to the daemon, starting it first when allowed and none answers. Every connection
/// passes [`guard`] first: the socket's directory and the socket are the user's own, and so is
/// the process that accepts; otherwise the command stops with [`Failure::Untrusted`] and
/// nothing has been sent.
pub fn connect(target: &SocketTarget, auto_start: AutoStart) -> Result<UnixStream, Failure> {
    let me = effective_uid();
    match attempt(&target.path, me)? {
        Ok(stream) => Ok(stream),
        Err(error) if is_absent(&error) => match auto_start {
            AutoStart::Never => Err(Failure::NotRunning(target.path.clone())),
            AutoStart::Start => start_and_connect(target, me),
        },
        Err(error) => Err(connect_failure(target, &error)),
    }
}

/// One guarded connect: the outer error is a refusal, the inner one why nothing answered.
fn attempt(socket: &Path, me: u32) -> Result<io::Result<UnixStream>, Failure> {
    if let Err(error) = guard::check_path(socket, me)? {
        return Ok(Err(error));
    }
    match UnixStream::connect(socket) {
        Ok(stream) => {
            guard::check_peer(&stream, socket, me)?;
            Ok(Ok(stream))
        }
        Err(error) => Ok(Err(error)),
    }
}

/// Whether a connect error means nobody is listening (as opposed to, say, no permission).
fn is_absent(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
    )
}

fn connect_failure(target: &SocketTarget, error: &io::Error) -> Failure {
    Failure::Connection(format!(
        "cannot connect to talosd at {}: {error}",
        target.path.display()
    ))
}

/// Makes the socket's directory private (or refuses one planted by someone else), spawns
/// `talosd` (it detaches and exits once its socket accepts connections), then retries the
/// guarded connect with backoff until [`START_TIMEOUT`] has passed since the spawn.
fn start_and_connect(target: &SocketTarget, me: u32) -> Result<UnixStream, Failure> {
    guard::prepare_dir(&target.path, me)?;
    let current_exe = std::env::current_exe().ok();
    let program = daemon_program(std::env::var_os("TALOS_DAEMON"), current_exe.as_deref());
    let mut command = Command::new(&program);
    if target.explicit {
        command.arg("--socket").arg(&target.path);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let deadline = Instant::now() + START_TIMEOUT;
    let mut child = command.spawn().map_err(|error| {
        Failure::Connection(format!(
            "cannot start talosd ({}): {error}; no daemon answers at {}",
            program.display(),
            target.path.display()
        ))
    })?;
    let mut exit: Option<ExitStatus> = None;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(status)) => {
                exit = Some(status);
                break;
            }
            Ok(None) => thread::sleep(Duration::from_millis(10)),
            Err(_) => break,
        }
    }
    let mut backoff = FIRST_BACKOFF;
    let last_error = loop {
        match attempt(&target.path, me)? {
            Ok(stream) => return Ok(stream),
            Err(error) => {
                let now = Instant::now();
                if now >= deadline {
                    break error;
                }
                thread::sleep(backoff.min(deadline - now));
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    };
    let daemon_state = match exit {
        Some(status) if status.success() => "talosd reported ready".to_string(),
        Some(status) => format!("talosd exited with {status}"),
        None => "talosd did not finish starting".to_string(),
    };
    Err(Failure::Connection(format!(
        "started {} but cannot connect to {} ({daemon_state}): {last_error}",
        program.display(),
        target.path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(talos_home: Option<&str>, xdg_runtime_dir: Option<&str>) -> SocketEnv {
        SocketEnv {
            talos_home: talos_home.map(String::from),
            xdg_runtime_dir: xdg_runtime_dir.map(String::from),
            temp_dir: PathBuf::from("/tmp"),
            uid: 1000,
        }
    }

    fn check(explicit: Option<&str>, env: SocketEnv, expected: &str) {
        let target = SocketTarget::resolve(explicit.map(Path::new), &env);
        assert_eq!(target.path, PathBuf::from(expected), "{explicit:?} {env:?}");
        assert_eq!(target.explicit, explicit.is_some());
    }

    #[test]
    fn socket_path_follows_flag_then_talos_home_then_runtime_dir_then_temp() {
        check(
            Some("/s/d.sock"),
            env(Some("/h"), Some("/run/user/1000")),
            "/s/d.sock",
        );
        check(
            None,
            env(Some("/h"), Some("/run/user/1000")),
            "/h/run/talosd.sock",
        );
        check(
            None,
            env(Some(""), Some("/run/user/1000")),
            "/run/user/1000/talos/talosd.sock",
        );
        check(
            None,
            env(None, Some("/run/user/1000")),
            "/run/user/1000/talos/talosd.sock",
        );
        check(None, env(None, Some("")), "/tmp/talos-1000/talosd.sock");
        check(None, env(None, None), "/tmp/talos-1000/talosd.sock");
    }

    #[test]
    fn a_relative_socket_flag_is_made_absolute() {
        let target = SocketTarget::resolve(Some(Path::new("d.sock")), &env(None, None));
        assert!(target.path.is_absolute(), "{target:?}");
        assert!(target.path.ends_with("d.sock"));
    }

    #[test]
    fn daemon_program_prefers_the_override_then_falls_back_to_path_lookup() {
        let missing_dir = Path::new("/nonexistent-talos-dir/talos");
        assert_eq!(
            daemon_program(Some("/opt/talosd".into()), Some(missing_dir)),
            PathBuf::from("/opt/talosd")
        );
        assert_eq!(
            daemon_program(Some("".into()), Some(missing_dir)),
            PathBuf::from("talosd")
        );
        assert_eq!(daemon_program(None, None), PathBuf::from("talosd"));
    }

    #[test]
    fn effective_uid_matches_the_owner_of_a_file_we_create() {
        use std::os::unix::fs::MetadataExt;
        let path = std::env::temp_dir().join(format!("talos-cli-uid-{}", std::process::id()));
        std::fs::write(&path, b"").unwrap();
        let owner = std::fs::metadata(&path).unwrap().uid();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(effective_uid(), owner);
    }

    #[test]
    fn a_missing_socket_without_auto_start_reports_not_running() {
        let target = SocketTarget {
            path: PathBuf::from("/nonexistent-talos-dir/s.sock"),
            explicit: true,
        };
        assert!(matches!(
            connect(&target, AutoStart::Never),
            Err(Failure::NotRunning(_))
        ));
    }
}

//! The one module that starts processes for commands (the supervisor starts llama-server). A
//! command reaches the OS as an argument list (never a shell), with standard input closed, a
//! cleared environment rebuilt from an allow-list, in its own process group; on timeout,
//! cancellation or a client disconnect the whole group is killed. Output is drained
//! concurrently, capped, and streamed as lines. It also runs the daemon's own helper processes:
//! the containment probes, the containment shim's final exec, and the headless browser of the
//! web verifier, each bounded the same way; and the MCP servers (`crate::mcp`), long-lived
//! children on pipes, each in its own process group with exactly the environment it is given.
// std::fs here: reads /proc and its own pid file, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod input;
pub use input::{InputBounds, InputRun, run_with_input_blocking};

/// Environment variables a command inherits; everything else is dropped.
const ENV_ALLOW: &[&str] = &[
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "PATH",
    "JAVA_HOME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GRADLE_USER_HOME",
    "USER",
    "TERM",
];

/// What to run, fully decided before approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunResult {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub duration_ms: u64,
    pub pid: u32,
}

/// Which stream a progress line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Runs `spec`. Progress lines go to `progress` (dropped silently if it is closed).
pub async fn run(
    spec: &RunSpec,
    cancel: &CancellationToken,
    progress: mpsc::Sender<(Stream, String)>,
) -> std::io::Result<RunResult> {
    let mut command = tokio::process::Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for key in ENV_ALLOW {
        if let Ok(value) = std::env::var(key) {
            command.env(key, value);
        }
    }
    let started = Instant::now();
    let mut child = command.spawn()?;
    let pid = child.id().unwrap_or(0);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_task = tokio::spawn(drain(
        stdout,
        spec.stdout_cap,
        Stream::Stdout,
        progress.clone(),
    ));
    let err_task = tokio::spawn(drain(stderr, spec.stderr_cap, Stream::Stderr, progress));
    let mut result = RunResult {
        pid,
        ..RunResult::default()
    };
    tokio::select! {
        status = child.wait() => result.exit_code = status?.code(),
        () = tokio::time::sleep(spec.timeout) => {
            result.timed_out = true;
            kill_group(pid);
            let _ = child.wait().await;
        }
        () = cancel.cancelled() => {
            result.cancelled = true;
            kill_group(pid);
            let _ = child.wait().await;
        }
    }
    // The group may outlive its leader (a grandchild still holding the pipes): end it too.
    kill_group(pid);
    let grace = Duration::from_secs(5);
    if let Ok(Ok((bytes, truncated))) = tokio::time::timeout(grace, out_task).await {
        (result.stdout, result.stdout_truncated) = (bytes, truncated);
    }
    if let Ok(Ok((bytes, truncated))) = tokio::time::timeout(grace, err_task).await {
        (result.stderr, result.stderr_truncated) = (bytes, truncated);
    }
    result.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(result)
}

/// A long-lived helper process that talks on its standard input and output (an MCP server):
/// what to start, fully decided by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// All of its environment: nothing else is inherited.
    pub env: Vec<(String, String)>,
}

/// A started server and its pipes (what [`spawn_server`] returns), named here so that only this
/// module speaks of processes.
pub use tokio::process::{
    Child as ServerChild, ChildStderr as ServerStderr, ChildStdin as ServerStdin,
    ChildStdout as ServerStdout,
};

/// Starts `spec` with its standard input, output and error piped, the environment exactly
/// `spec.env`, in its own process group, killed when the handle is dropped. The caller ends the
/// group with [`kill_group`] (a server's children share it).
pub fn spawn_server(spec: &ServerSpec) -> std::io::Result<ServerChild> {
    let mut command = tokio::process::Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    command.spawn()
}

/// `name` found on talosd's own `PATH` (as the shell would find it), when it has no slash;
/// a name with a slash is returned as it is.
pub fn resolve_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Where a probe's standard output and error go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutput {
    /// Discarded.
    Discard,
    /// The daemon's own (its log), so a failing probe says why.
    Inherit,
}

/// Runs `program args` with standard input closed, waits, and says whether it exited with
/// success. For capability probes (`unshare --net -- true`, the containment shim), never for a
/// command a model proposed.
pub fn probe_succeeds(program: &Path, args: &[String], output: ProbeOutput) -> bool {
    let mut command = std::process::Command::new(program);
    command.args(args).stdin(Stdio::null());
    if output == ProbeOutput::Discard {
        command.stdout(Stdio::null()).stderr(Stdio::null());
    }
    command.status().is_ok_and(|s| s.success())
}

/// Replaces this process with `program args` (the containment shim's last step, once Landlock
/// holds). Returns only when that failed, with the error.
pub fn exec_replacing(program: &str, args: &[String]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(program).args(args).exec()
}

/// What [`run_bounded_blocking`] saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoundedRun {
    /// The process exited before the time limit.
    pub finished: bool,
    /// Its standard output, lossily decoded, at most the cap.
    pub stdout: String,
}

/// Runs `program args` on this thread, in its own process group, with standard input and error
/// closed and standard output captured up to `stdout_cap` bytes; after `limit`, or once it has
/// exited, the whole group is killed. For the web verifier's headless browser.
pub fn run_bounded_blocking(
    program: &Path,
    args: &[String],
    limit: Duration,
    stdout_cap: u64,
) -> std::io::Result<BoundedRun> {
    use std::os::unix::process::CommandExt;
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    let pid = child.id();
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.take(stdout_cap).read_to_string(&mut out);
        }
        out
    });
    let started = Instant::now();
    let finished = loop {
        match child.try_wait() {
            Ok(Some(_)) => break true,
            Ok(None) if started.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => break false,
        }
    };
    kill_group(pid);
    let _ = child.kill();
    let _ = child.wait();
    let stdout = reader.join().unwrap_or_default();
    Ok(BoundedRun { finished, stdout })
}

/// Sends SIGKILL to the process group `pid` leads. A group that is already gone is fine.
pub fn kill_group(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

async fn drain<R: tokio::io::AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
    stream: Stream,
    progress: mpsc::Sender<(Stream, String)>,
) -> (Vec<u8>, bool) {
    let Some(mut reader) = reader else {
        return (Vec::new(), false);
    };
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut line = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        truncated |= n > room;
        for byte in &buf[..n] {
            if *byte == b'\n' {
                let text = String::from_utf8_lossy(&line).into_owned();
                line.clear();
                // Waits for the reader: a progress line is never dropped (the pipe pushes back
                // on the program instead). A receiver that is gone ends the sending, not the run.
                let _ = progress.send((stream, text)).await;
            } else if line.len() < 4096 {
                line.push(*byte);
            }
        }
    }
    if !line.is_empty() {
        let _ = progress
            .send((stream, String::from_utf8_lossy(&line).into_owned()))
            .await;
    }
    (kept, truncated)
}

/// The environment a command (or a hook) inherits: [`ENV_ALLOW`]'s variables, as talosd has
/// them.
pub fn allowed_env() -> Vec<(String, String)> {
    ENV_ALLOW
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_string(), v)))
        .collect()
}

/// Whether `path` is a regular file someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// [`input::run_with_input_blocking`] with `env` as the whole environment (hooks get
/// [`allowed_env`]), `cwd` as the working directory, and `bounds`.
pub fn run_with_input_in_dir(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
    input: Vec<u8>,
    bounds: &InputBounds,
) -> std::io::Result<InputRun> {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(program);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let mut child = command
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    let pid = child.id();
    let pipes = input::Pipes::of(&mut child, input);
    let ended = input::watch(&mut child, pipes, bounds);
    kill_group(pid);
    let _ = child.kill();
    let _ = child.wait();
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(script: &str, timeout_ms: u64) -> RunSpec {
        RunSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            timeout: Duration::from_millis(timeout_ms),
            stdout_cap: 16,
            stderr_cap: 1024,
        }
    }

    /// Proves no progress line is dropped when the reader is slower than the program: 5,000
    /// lines through a channel of 4 whose reader starts late all arrive, in order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn progress_lines_are_never_dropped_when_the_reader_is_slow() {
        let (tx, mut rx) = mpsc::channel(4);
        let reader = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let mut lines = Vec::new();
            while let Some((_, line)) = rx.recv().await {
                lines.push(line);
            }
            lines
        });
        let r = run(&spec("seq 1 5000", 20_000), &CancellationToken::new(), tx)
            .await
            .unwrap();
        assert_eq!(r.exit_code, Some(0));
        let lines = reader.await.unwrap();
        assert_eq!(lines.len(), 5000);
        assert!(
            lines
                .iter()
                .enumerate()
                .all(|(i, l)| *l == (i + 1).to_string())
        );
    }

    #[tokio::test]
    async fn output_is_capped_and_stdin_is_closed() {
        let (tx, mut rx) = mpsc::channel(64);
        let r = run(
            &spec(
                "read x || echo stdin-closed; yes abcdefgh | head -c 100",
                5000,
            ),
            &CancellationToken::new(),
            tx,
        )
        .await
        .unwrap();
        assert_eq!(r.exit_code, Some(0));
        assert_eq!(r.stdout.len(), 16);
        assert!(r.stdout_truncated);
        assert_eq!(
            rx.recv().await.unwrap(),
            (Stream::Stdout, "stdin-closed".into())
        );
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group_including_grandchildren() {
        let marker = tempfile::tempdir().unwrap();
        let pidfile = marker.path().join("grandchild.pid");
        let script = format!("sleep 60 & echo $! > {}; wait", pidfile.display());
        let (tx, _rx) = mpsc::channel(64);
        let r = run(&spec(&script, 300), &CancellationToken::new(), tx)
            .await
            .unwrap();
        assert!(r.timed_out);
        let grandchild: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let alive = std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        assert!(!alive, "grandchild {grandchild} survived");
    }

    #[tokio::test]
    async fn cancellation_kills_the_group() {
        let cancel = CancellationToken::new();
        let (tx, _rx) = mpsc::channel(64);
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c.cancel();
        });
        let r = run(&spec("sleep 30", 60_000), &cancel, tx).await.unwrap();
        assert!(r.cancelled && r.exit_code.is_none());
        assert!(r.duration_ms < 10_000);
    }
}

//! Short runs that are handed input and answer on standard output: the hooks and the document
//! extractor, started by [`super::run_with_input_in_dir`]. Each runs in its own process group; its standard input is fed and its standard
//! output read without blocking, so nothing it leaves behind can hold the caller: at the
//! deadline (or when the caller stops it) the whole group is killed and reading stops, and
//! once the program itself has exited only what it already wrote is read. A background child
//! that escaped the group (`setsid`) and still holds the pipes delays nothing.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a run is looked at while it goes on.
const TICK: Duration = Duration::from_millis(10);

/// How a run with input ended.
#[derive(Debug)]
pub struct InputRun {
    /// The exit code; `None` when the time limit or the caller stopped it, or a signal ended it.
    pub code: Option<i32>,
    /// Whether the time limit ended it.
    pub timed_out: bool,
    /// Whether the caller stopped it (a cancelled turn, a stopping daemon).
    pub stopped: bool,
    /// Standard output, at most the cap.
    pub stdout: Vec<u8>,
}

/// What bounds a run: its time limit, its standard output cap, and a flag the caller sets to
/// stop it early.
#[derive(Debug, Clone)]
pub struct InputBounds {
    pub limit: Duration,
    pub stdout_cap: u64,
    pub stop: Option<Arc<AtomicBool>>,
}

/// Runs `program args` on this thread in its own process group with an empty environment,
/// `input` written to its standard input, standard error discarded and standard output
/// captured up to `stdout_cap` bytes; after `limit` the whole group is killed. For the
/// document extractor (`crate::documents`).
pub fn run_with_input_blocking(
    program: &Path,
    args: &[String],
    input: Vec<u8>,
    limit: Duration,
    stdout_cap: u64,
) -> std::io::Result<InputRun> {
    let bounds = InputBounds {
        limit,
        stdout_cap,
        stop: None,
    };
    super::run_with_input_in_dir(program, args, &[], None, input, &bounds)
}

/// Waits for `child` until it exits, the deadline passes or the caller stops it, feeding and
/// reading its pipes meanwhile.
pub(super) fn watch(child: &mut Child, mut pipes: Pipes, bounds: &InputBounds) -> InputRun {
    let started = Instant::now();
    let stopped = || {
        bounds
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };
    let mut run = InputRun {
        code: None,
        timed_out: false,
        stopped: false,
        stdout: Vec::new(),
    };
    loop {
        pipes.feed();
        pipes.read_into(&mut run.stdout, bounds.stdout_cap);
        match child.try_wait() {
            Ok(Some(status)) => {
                // What it wrote before it exited is in the pipe already; anything later is
                // a leftover child's, and is not waited for.
                pipes.read_into(&mut run.stdout, bounds.stdout_cap);
                run.code = status.code();
                return run;
            }
            Ok(None) => {}
            Err(_) => return run,
        }
        if stopped() {
            run.stopped = true;
            return run;
        }
        if started.elapsed() >= bounds.limit {
            run.timed_out = true;
            return run;
        }
        std::thread::sleep(TICK);
    }
}

/// A child's standard input still to be fed and its standard output still to be read, both
/// non-blocking; a pipe is dropped (closed) once it is done with.
pub(super) struct Pipes {
    stdin: Option<ChildStdin>,
    input: Vec<u8>,
    fed: usize,
    stdout: Option<ChildStdout>,
}

impl Pipes {
    pub(super) fn of(child: &mut Child, input: Vec<u8>) -> Pipes {
        let stdin = child.stdin.take().filter(non_blocking);
        let stdout = child.stdout.take().filter(non_blocking);
        Pipes {
            stdin,
            input,
            fed: 0,
            stdout,
        }
    }

    /// Writes what the pipe takes now; closes it once all is written or the reader is gone.
    fn feed(&mut self) {
        let Some(stdin) = self.stdin.as_mut() else {
            return;
        };
        while self.fed < self.input.len() {
            match stdin.write(&self.input[self.fed..]) {
                Ok(0) => break,
                Ok(n) => self.fed += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.stdin = None;
    }

    /// Reads what is there now, up to `cap` bytes in all; at the cap or at its end the pipe is
    /// closed, so a program that prints without end is read no further.
    fn read_into(&mut self, out: &mut Vec<u8>, cap: u64) {
        let Some(stdout) = self.stdout.as_mut() else {
            return;
        };
        let mut buf = [0u8; 8192];
        loop {
            let room = usize::try_from(cap)
                .unwrap_or(usize::MAX)
                .saturating_sub(out.len());
            if room == 0 {
                break;
            }
            let want = room.min(buf.len());
            match stdout.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.stdout = None;
    }
}

/// Sets `O_NONBLOCK` on a pipe; a pipe that cannot be made so is not used at all rather than
/// risk a read that never returns.
fn non_blocking(fd: &impl AsFd) -> bool {
    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    fcntl_getfl(fd).is_ok_and(|flags| fcntl_setfl(fd, flags | OFlags::NONBLOCK).is_ok())
}

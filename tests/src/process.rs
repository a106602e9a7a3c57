//! The real `talosd` binary as a child process, for the fault tests that need a process to kill
//! or a broken stderr to give it: started with `--foreground` on a home, waited for until its
//! socket answers, and killed (SIGKILL) or stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `talosd --foreground`.
pub struct DaemonProcess {
    pub child: Child,
    pub socket: PathBuf,
}

impl DaemonProcess {
    /// Starts `exe --foreground` with `TALOS_HOME=home` and the given stderr, and waits up to
    /// ten seconds for its socket (`home/run/talosd.sock`) to accept a connection.
    pub fn start(exe: &str, home: &Path, stderr: Stdio) -> DaemonProcess {
        let mut command = Command::new(exe);
        command.arg("--foreground");
        DaemonProcess::start_command(command, home, stderr)
    }

    /// [`DaemonProcess::start`] with the command made by the caller (a wrapper such as
    /// `prlimit ... talosd --foreground`); `TALOS_HOME`, the log level and stdio are set here.
    pub fn start_command(mut command: Command, home: &Path, stderr: Stdio) -> DaemonProcess {
        let child = command
            .env("TALOS_HOME", home)
            .env("TALOS_LOG", "debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut daemon = DaemonProcess {
            child,
            socket: home.join("run").join("talosd.sock"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(&daemon.socket).is_err() {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!("talosd exited during start-up: {status}");
            }
            assert!(Instant::now() < deadline, "talosd did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        daemon
    }

    /// SIGKILL, then reap: the crash the fault tests inject.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// For a test that sets state once per process (the document extractor a `OnceLock` holds) and
/// so must not share its process with the other tests of its binary: runs the test named
/// `module_path` + `name` again, alone, in a child process of this test binary. Returns true in
/// that child, where the test goes on; in the parent it waits for the child, fails with the
/// child's output unless exactly that one test passed there, and returns false.
pub fn in_own_process(module_path: &str, name: &str) -> bool {
    const ALONE: &str = "TALOS_TEST_ALONE";
    // libtest names a test by its path without the crate's name.
    let module = module_path.split_once("::").map_or("", |(_, rest)| rest);
    let test = if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    };
    if std::env::var_os(ALONE).is_some_and(|v| v == test.as_str()) {
        return true;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test.as_str(), "--exact", "--test-threads=1"])
        .env(ALONE, &test)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed;"),
        "{test} alone in its own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

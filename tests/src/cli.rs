//! The real `talos` binary as a person runs it, for every test that launches it: one place for
//! its environment (a private Talos home, the end-to-end daemon started on demand, no colour),
//! and one way to wait for something another process does.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A binary of this package, built beside the test binaries (`target/debug/NAME`).
pub fn built(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    dir.join(name)
}

/// The real `talos` main, built in this package (docs/decisions/0008-e2e-binaries.md).
pub fn talos_exe() -> PathBuf {
    built("e2e-talos")
}

/// The real `talosd` main, built in this package.
pub fn talosd_exe() -> PathBuf {
    built("e2e-talosd")
}

/// `talos` with `home` as its Talos home, starting the end-to-end daemon when none runs, with
/// colour off and stdin empty.
pub fn command(home: &Path) -> Command {
    let mut command = Command::new(talos_exe());
    command
        .env("TALOS_HOME", home)
        .env("TALOS_DAEMON", talosd_exe())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    command
}

/// Runs `talos ARGS` on `home` with `stdin` as its whole input and waits for it to end.
pub fn talos<S: AsRef<OsStr>>(home: &Path, args: &[S], stdin: &str) -> Output {
    let mut child = command(home)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A program that exits without reading its input closes the pipe: not a failure here.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// [`talos`] from async test code, on a blocking thread so the runtime (and an in-process
/// daemon or fake model on it) keeps running.
pub async fn talos_async(home: PathBuf, args: Vec<String>, stdin: &str) -> Output {
    let stdin = stdin.to_string();
    tokio::task::spawn_blocking(move || talos(&home, &args, &stdin))
        .await
        .unwrap()
}

/// A program's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks `done` every 10 ms until it holds; fails the test naming `what` after `limit`. For
/// what another process does (a file written, a process gone), where no event tells the test.
pub fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// [`wait_until`] from async test code, yielding to the runtime between checks.
pub async fn wait_until_async(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_until_returns_once_the_condition_holds() {
        let mut calls = 0;
        wait_until("the third check", Duration::from_secs(5), || {
            calls += 1;
            calls == 3
        });
        assert_eq!(calls, 3);
    }

    #[test]
    #[should_panic(expected = "never: not within")]
    fn wait_until_fails_naming_what_did_not_happen() {
        wait_until("never", Duration::from_millis(30), || false);
    }
}

//! A real pseudo-terminal for driving the interactive `talos` in tests. The program runs under
//! util-linux `script`, which gives it a new pty as its controlling terminal: what the test
//! writes to `script`'s stdin arrives as typed keys (Ctrl-C, `\x03`, becomes SIGINT for the
//! program through the pty's line discipline, as in a real terminal), and everything the program
//! writes to the terminal comes back on `script`'s stdout. No unsafe code and no pty crate.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A program running on a pty, with the screen text seen so far.
pub struct Terminal {
    child: Child,
    keys: ChildStdin,
    screen: Arc<Mutex<String>>,
    /// How much of the screen earlier `expect`s consumed.
    seen: usize,
}

impl Terminal {
    /// Starts `program args...` on a new pty with `env` added to the environment.
    pub fn spawn(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Terminal {
        // `exec`, so the program replaces the shell `script` starts: a non-interactive shell
        // (dash, the usual /bin/sh) that stayed would share the terminal's foreground group and
        // die of the Ctrl-C meant for the program, and `script` would report its 130.
        let mut line = format!("exec {}", shell_quote(&program.display().to_string()));
        for arg in args {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
        let mut command = Command::new("script");
        command
            .args(["-qfec", &line, "/dev/null"])
            .env("TERM", "xterm")
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("util-linux script runs");
        let keys = child.stdin.take().unwrap();
        let mut out = child.stdout.take().unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let sink = screen.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = out.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Terminal {
            child,
            keys,
            screen,
            seen: 0,
        }
    }

    /// Types `text` (use `\r` for Enter, `\x03` for Ctrl-C, `\x04` for Ctrl-D).
    pub fn type_keys(&mut self, text: &str) {
        self.keys.write_all(text.as_bytes()).unwrap();
        self.keys.flush().unwrap();
    }

    /// Waits until `needle` appears after what earlier calls consumed, and consumes up to its
    /// end; panics with the screen after `timeout`.
    pub fn expect(&mut self, needle: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            {
                let screen = self.screen.lock().unwrap();
                if let Some(at) = screen[self.seen..].find(needle) {
                    let end = self.seen + at + needle.len();
                    let text = screen[self.seen..end].to_string();
                    self.seen = end;
                    return text;
                }
            }
            assert!(
                Instant::now() < deadline,
                "{needle:?} did not appear; the screen after the last match:\n{}",
                &self.screen.lock().unwrap()[self.seen..]
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the program has shown.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits for the program to exit and returns its exit code.
    pub fn wait(mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the program did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` as one word for `sh -c`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

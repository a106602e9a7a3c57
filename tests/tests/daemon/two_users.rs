//! Two users on one machine each get managed mode (issue 25, item 4): two real `talosd`
//! binaries, run as two uids with `setpriv`, each launch their own managed server (the fake
//! llama server binary) on their own default port, 18480 + uid % 1000, with no port in their
//! configuration; `talos model status`, run as each user, shows each one ready on its port.
//! Needs root (to run as other uids); says it skipped otherwise.
#![allow(clippy::print_stdout)] // a skipped test says why

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_tests::managed::FakeServer;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-llama-server");

fn as_user(uid: u32, program: &str) -> Command {
    let mut command = Command::new("setpriv");
    command
        .arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .arg("--clear-groups")
        .arg(program);
    command
}

fn chown(path: &Path, uid: u32) {
    let status = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// `talos model status --json` as `uid`.
fn status(uid: u32, home: &Path) -> Option<Value> {
    let out = as_user(uid, TALOS)
        .args(["model", "status", "--json"])
        .env("TALOS_HOME", home)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    serde_json::from_slice(&out.stdout).ok()
}

struct Daemon(Child);

impl Drop for Daemon {
    /// SIGTERM, so the daemon stops the server it launched; SIGKILL only if it does not go.
    fn drop(&mut self) {
        let pid = self.0.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(8);
        while Instant::now() < deadline {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn two_users_each_get_their_own_managed_server_on_their_own_port() {
    let root = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&root.stdout).trim() != "0"
        || Command::new("setpriv").arg("--version").output().is_err()
    {
        println!("skipped: running as two users needs root and setpriv");
        return;
    }
    let users = [4241u32, 4242];
    let mut daemons = Vec::new();
    let mut fixtures = Vec::new();
    for uid in users {
        let fake = FakeServer::new(json!({"reply": "ok"}));
        let home = tempfile::Builder::new()
            .prefix("tu")
            .tempdir_in("/tmp")
            .unwrap();
        let config = format!(
            "model:\n  mode: managed\n  server: {}\n  path: {}\n  ctx: 4096\n  threads: 1\n  slots: 1\n  start_timeout_secs: 20\n",
            json!(FAKE),
            json!(fake.model)
        );
        std::fs::write(home.path().join("config.yaml"), config).unwrap();
        chown(home.path(), uid);
        chown(fake.dir.path(), uid);
        let child = as_user(uid, TALOSD)
            .arg("--foreground")
            .env("TALOS_HOME", home.path())
            .env("TALOS_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        daemons.push(Daemon(child));
        fixtures.push((uid, home, fake));
    }
    let mut seen = Vec::new();
    for (uid, home, _fake) in &fixtures {
        let deadline = Instant::now() + Duration::from_secs(30);
        let ready = loop {
            if let Some(status) = status(*uid, home.path())
                && status["state"] == "ready"
            {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "uid {uid}: the managed server never became ready"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let port = u64::from(talosd::config::port_for_uid(*uid));
        assert_eq!(ready["port"], json!(port), "uid {uid}: {ready}");
        assert_eq!(ready["owned"], json!(true), "uid {uid}: {ready}");
        seen.push((ready["port"].clone(), ready["pid"].clone()));
    }
    assert_ne!(seen[0], seen[1], "two servers, two ports: {seen:?}");
    drop(daemons);
}

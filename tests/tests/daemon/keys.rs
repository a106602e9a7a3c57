//! A model server with an API key, or behind TLS (issue 25), through the real daemon: the key
//! from a private file is sent as `Authorization: Bearer` and the turn completes; a wrong key,
//! or none, gives one clear refusal naming the 401 and the setting, and nothing is written; the
//! key is in no file under the Talos home and in nothing the client is told; a key file others
//! may read is refused. With Debian's `socat` in front of the fake server and a self-signed CA
//! in `model.ca_file`, an `https` URL works, and the wrong CA is a clear TLS error.
#![allow(clippy::print_stdout)] // a skipped test says why

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use talos_protocol::{Classification, CompletionStatus};
use talos_tests::fake_llama::{FakeLlama, FakeOptions, Reply, scripted};
use talos_tests::harness::{TestDaemon, approve_all, timeout_workspace};

const KEY: &str = "sk-talos-test-9f3c1e7a5b";
const QUESTION: &str = "Hello there";

/// A key file with `mode`, in its own folder.
fn key_file(dir: &Path, key: &str, mode: u32) -> std::path::PathBuf {
    let path = dir.join("model.key");
    std::fs::write(&path, format!("{key}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn config_with(url: &str, extra_model: &str) -> String {
    TestDaemon::config_for(url, true).replacen("tools:", &format!("{extra_model}tools:"), 1)
}

/// Every byte of every file under `dir`.
fn every_file_holds(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && String::from_utf8_lossy(&bytes).contains(needle)
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

async fn keyed_server() -> FakeLlama {
    let options = FakeOptions {
        api_key: Some(KEY.into()),
        ..FakeOptions::default()
    };
    FakeLlama::start_with(options, scripted(vec![Reply::Text("Hello!".into())])).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_from_a_private_file_is_sent_and_written_nowhere() {
    let llama = keyed_server().await;
    let secrets = tempfile::tempdir().unwrap();
    let file = key_file(secrets.path(), KEY, 0o600);
    let extra = format!("  api_key_file: {}\n", file.display());
    let daemon = TestDaemon::start(&config_with(&llama.url, &extra)).await;
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, QUESTION, approve_all("deny"))
        .await;
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    assert_eq!(outcome.final_answer, "Hello!");
    assert_eq!(llama.requests().len(), 1, "the chat request was accepted");
    let said = serde_json::to_string(&seen).unwrap();
    assert!(!said.contains(KEY), "the client is never told the key");
    let holders = every_file_holds(daemon.home.path(), KEY);
    assert!(holders.is_empty(), "the key was written to {holders:?}");
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_key_or_none_is_one_clear_refusal_and_nothing_is_written() {
    let llama = keyed_server().await;
    let secrets = tempfile::tempdir().unwrap();
    let wrong = "sk-wrong-key-0000";
    let file = key_file(secrets.path(), wrong, 0o600);
    let rows = [
        (
            format!("  api_key_file: {}\n", file.display()),
            format!(
                "it did not accept the key from model.api_key_file {}",
                file.display()
            ),
        ),
        (
            String::new(),
            "it wants an API key: set model.api_key_env".to_string(),
        ),
    ];
    for (extra, says) in rows {
        let daemon = TestDaemon::start(&config_with(&llama.url, &extra)).await;
        let ws = timeout_workspace();
        let before = std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        let (outcome, _) = client
            .turn_with(
                &session,
                "In settings.py, change TIMEOUT from 30 to 60.",
                approve_all("approve"),
            )
            .await;
        assert_eq!(
            outcome.classification,
            Classification::Failed,
            "{outcome:?}"
        );
        let answer = &outcome.final_answer;
        assert!(answer.contains("HTTP 401: Invalid API Key"), "{answer}");
        assert!(answer.contains(&says), "{answer}");
        assert!(!answer.contains(wrong));
        let after = std::fs::read_to_string(ws.path().join("settings.py")).unwrap();
        assert_eq!(before, after, "nothing written");
        let trace = daemon.traces().pop().unwrap();
        assert!(trace.warnings.iter().any(|w| w.code == "MODEL_REFUSED"));
        assert!(every_file_holds(daemon.home.path(), wrong).is_empty());
        daemon.stop().await;
    }
}

#[test]
fn a_key_file_others_may_read_is_refused_with_the_fix() {
    let secrets = tempfile::tempdir().unwrap();
    let file = key_file(secrets.path(), KEY, 0o644);
    let text = format!("model:\n  api_key_file: {}\n", file.display());
    let error = talosd::config::Config::parse(&text, "config.yaml").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "config.yaml: model.api_key_file {}: others may read it (mode 644); chmod 600 it",
            file.display()
        )
    );
    assert!(!error.to_string().contains(KEY));
}

/// Runs `openssl` in `dir`.
fn openssl(dir: &Path, args: &[&str]) -> bool {
    Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A self-signed CA `NAME-ca.pem` (key `NAME-ca.key`) in `dir`.
fn ca(dir: &Path, name: &str) -> bool {
    let (key, pem) = (format!("{name}-ca.key"), format!("{name}-ca.pem"));
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &pem,
            "-days",
            "2",
            "-subj",
            "/CN=Talos test CA",
        ],
    )
}

/// `server.crt` and `server.key` for `localhost`, signed by the CA `NAME`.
fn server_certificate(dir: &Path, name: &str) -> bool {
    let (key, pem) = (format!("{name}-ca.key"), format!("{name}-ca.pem"));
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    ) && openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            &pem,
            "-CAkey",
            &key,
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    )
}

/// socat terminating TLS on a free port in front of `upstream` (host:port).
fn socat_tls(dir: &Path, upstream: &str) -> Option<(Child, u16)> {
    let port = talos_tests::managed::free_port();
    let child = Command::new("socat")
        .arg(format!(
            "OPENSSL-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork,cert={},key={},verify=0",
            dir.join("server.crt").display(),
            dir.join("server.key").display()
        ))
        .arg(format!("TCP:{upstream}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((child, port));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_through_socat_with_the_ca_in_model_ca_file_and_a_wrong_ca_refused() {
    let missing = |tool: &str| Command::new(tool).arg("-V").output().is_err();
    if missing("socat") || missing("openssl") {
        println!("skipped: Debian's socat and openssl are needed (.ci/run installs socat)");
        return;
    }
    let llama = keyed_server().await;
    let dir = tempfile::tempdir().unwrap();
    assert!(ca(dir.path(), "right") && ca(dir.path(), "other"));
    assert!(server_certificate(dir.path(), "right"));
    let upstream = llama.url.trim_start_matches("http://").to_string();
    let (mut socat, port) = socat_tls(dir.path(), &upstream).expect("socat listens");
    let secrets = tempfile::tempdir().unwrap();
    let file = key_file(secrets.path(), KEY, 0o600);
    let url = format!("https://localhost:{port}");
    let rows = [("right-ca.pem", true), ("other-ca.pem", false)];
    for (ca, works) in rows {
        let extra = format!(
            "  api_key_file: {}\n  ca_file: {}\n",
            file.display(),
            dir.path().join(ca).display()
        );
        let daemon = TestDaemon::start(&config_with(&url, &extra)).await;
        let ws = timeout_workspace();
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "agent").await;
        let (outcome, _) = client
            .turn_with(&session, QUESTION, approve_all("deny"))
            .await;
        if works {
            assert_eq!(outcome.final_answer, "Hello!", "{outcome:?}");
        } else {
            assert_eq!(
                outcome.classification,
                Classification::Failed,
                "{outcome:?}"
            );
            let answer = &outcome.final_answer;
            assert!(
                answer.contains("could not be reached") && answer.contains(&url),
                "{answer}"
            );
            assert!(
                answer.to_lowercase().contains("certificate"),
                "a TLS error: {answer}"
            );
        }
        assert!(every_file_holds(daemon.home.path(), KEY).is_empty());
        daemon.stop().await;
    }
    let _ = socat.kill();
    let _ = socat.wait();
}

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

/// The key from `model.api_key_env`: `talos run` starts the real `talosd`, which inherits the
/// variable; the turn completes, and the key is in no file under the home, in nothing `talos`
/// printed, and in no process's command line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_from_the_environment_reaches_the_server_and_nothing_else() {
    let llama = keyed_server().await;
    let home = tempfile::Builder::new()
        .prefix("tk")
        .tempdir_in("/tmp")
        .unwrap();
    let config = config_with(&llama.url, "  api_key_env: TALOS_TEST_MODEL_KEY\n");
    std::fs::write(home.path().join("config.yaml"), config).unwrap();
    let ws = timeout_workspace();
    let talos = |args: Vec<String>| {
        let home = home.path().to_path_buf();
        tokio::task::spawn_blocking(move || {
            Command::new(TALOS)
                .args(args)
                .env("TALOS_HOME", &home)
                .env("TALOS_DAEMON", TALOSD)
                .env("TALOS_TEST_MODEL_KEY", KEY)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .output()
                .unwrap()
        })
    };
    let run = vec![
        "run".to_string(),
        "--workspace".into(),
        ws.path().display().to_string(),
        QUESTION.into(),
    ];
    let out = talos(run).await.unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(printed.contains("Hello!"), "{printed}");
    assert!(!printed.contains(KEY));
    let command_lines: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .filter(|c| c.contains(KEY))
        .collect();
    assert!(
        command_lines.is_empty(),
        "in the process list: {command_lines:?}"
    );
    let holders = every_file_holds(home.path(), KEY);
    assert!(holders.is_empty(), "the key was written to {holders:?}");
    let stop = talos(vec!["stop".into()]).await.unwrap();
    assert_eq!(stop.status.code(), Some(0));
}

/// Proves `talosd --check-config` refuses a `model.ca_file` that would not load, each with a
/// sentence naming the setting, without hanging on a FIFO or reading `/dev/zero`: a PEM key, a
/// missing file, a FIFO and a device. A real CA passes.
#[test]
fn check_config_refuses_a_ca_file_that_does_not_load() {
    const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key.pem");
    std::fs::write(
        &key,
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let fifo = dir.path().join("fifo.pem");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let rows = [
        (
            key.display().to_string(),
            "it holds a PEM PrivateKey section",
        ),
        (
            dir.path().join("gone.pem").display().to_string(),
            "cannot read it",
        ),
        (fifo.display().to_string(), "it is a FIFO, socket or device"),
        ("/dev/zero".to_string(), "it is a FIFO, socket or device"),
    ];
    let check = |ca: &str| {
        let config = dir.path().join("config.yaml");
        std::fs::write(
            &config,
            format!("model:\n  mode: connect_only\n  url: https://127.0.0.1:9\n  ca_file: {ca}\n"),
        )
        .unwrap();
        let out = Command::new("timeout")
            .args(["20", TALOSD, "--check-config", "--config-file"])
            .arg(&config)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (ca, want) in rows {
        let (code, stderr) = check(&ca);
        assert_eq!(code, Some(1), "{ca}: {stderr}");
        assert!(
            stderr.contains(&format!("model.ca_file {ca}: {want}")),
            "{ca}: {stderr}"
        );
    }
    if ca(dir.path(), "good") {
        let good = dir.path().join("good-ca.pem").display().to_string();
        let (code, stderr) = check(&good);
        assert_eq!(code, Some(0), "{stderr}");
    }
}

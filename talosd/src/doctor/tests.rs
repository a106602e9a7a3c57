//! Rows for the doctor's verdicts, and its facts read off real files, a real process and a
//! real listening port.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed fixture should panic

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use super::judge::{self, Disk, ModelFile, PortHolder, Server, Status, Template};
use super::{DEFAULT_MODEL_FILE, DEFAULT_MODEL_SHA256, facts};
use crate::config::RetentionConfig;

#[test]
fn the_pinned_model_is_the_one_get_llama_installs() {
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/get-llama.sh"),
    )
    .unwrap();
    assert!(script.contains(&format!("MODEL_SHA={DEFAULT_MODEL_SHA256}\n")));
    assert!(script.contains(&format!("MODEL_NAME={DEFAULT_MODEL_FILE}\n")));
    assert!(
        crate::config::Config::default()
            .model
            .path
            .ends_with(&format!("/models/{DEFAULT_MODEL_FILE}"))
    );
}

#[test]
fn verdict_rows() {
    let present = |gguf, sha256: Option<&str>| ModelFile::Present {
        size: 3 << 20,
        gguf,
        sha256: sha256.map(str::to_string),
    };
    let rows: Vec<(super::Check, Status, &str)> = vec![
        (
            judge::server("/s", Server::Runs("version: 1 (x)".into())),
            Status::Ok,
            "version: 1",
        ),
        (
            judge::server("/s", Server::Missing),
            Status::Fail,
            "not found",
        ),
        (
            judge::server("/s", Server::NotAFile),
            Status::Fail,
            "not a regular file",
        ),
        (
            judge::server("/s", Server::NotExecutable),
            Status::Fail,
            "not executable",
        ),
        (
            judge::server("/s", Server::Broken("exit 1".into())),
            Status::Fail,
            "does not run",
        ),
        (
            judge::model("/m", &ModelFile::Missing),
            Status::Fail,
            "not found",
        ),
        (
            judge::model("/m", &ModelFile::NotAFile),
            Status::Fail,
            "not a regular file",
        ),
        (
            judge::model("/m", &present(false, None)),
            Status::Fail,
            "not a GGUF",
        ),
        (
            judge::model("/m", &present(true, None)),
            Status::Ok,
            "3.0 MiB",
        ),
        (
            judge::model("/m", &present(true, Some(DEFAULT_MODEL_SHA256))),
            Status::Ok,
            "as pinned",
        ),
        (
            judge::model("/m", &present(true, Some("00ff"))),
            Status::Fail,
            "pinned to",
        ),
        (judge::template("", Template::Unset), Status::Ok, "none set"),
        (judge::template("/t", Template::Present), Status::Ok, "/t"),
        (
            judge::template("/t", Template::Missing),
            Status::Fail,
            "not found",
        ),
        (judge::port(9, PortHolder::Free), Status::Ok, "free"),
        (judge::port(9, PortHolder::Ours(42)), Status::Ok, "pid 42"),
        (
            judge::port(
                9,
                PortHolder::Other {
                    pid: Some(7),
                    program: Some("nginx".into()),
                },
            ),
            Status::Fail,
            "pid 7 (nginx)",
        ),
        (
            judge::port(
                9,
                PortHolder::Other {
                    pid: None,
                    program: None,
                },
            ),
            Status::Fail,
            "not identified",
        ),
    ];
    for (check, status, needle) in rows {
        assert_eq!(check.status, status, "{check:?}");
        assert!(check.detail.contains(needle), "{needle}: {check:?}");
        assert_eq!(check.fix.is_empty(), status == Status::Ok, "{check:?}");
    }
}

#[test]
fn connection_rows() {
    let rows: [(&str, Result<Option<String>, String>, Status, &str); 5] = [
        ("http://127.0.0.1:8080", Ok(None), Status::Ok, "turns use the server at http://127.0.0.1:8080"),
        ("http://10.0.0.5:8080", Ok(None), Status::Warn, "cross the network in clear text"),
        (
            "https://gpu.example:8443",
            Ok(Some("model.api_key_env TALOS_KEY".into())),
            Status::Ok,
            "its API key is read from model.api_key_env TALOS_KEY",
        ),
        (
            "http://gpu.example:8080",
            Ok(Some("model.api_key_file /k".into())),
            Status::Warn,
            "any API key cross the network in clear text",
        ),
        (
            "https://gpu.example:8443",
            Err("model.api_key_env TALOS_KEY: the environment variable is not set for talosd (or is empty)".into()),
            Status::Fail,
            "the API key cannot be used: model.api_key_env TALOS_KEY",
        ),
    ];
    for (url, key, status, says) in rows {
        let check = judge::connection(url, key);
        assert_eq!(check.status, status, "{url}");
        assert!(check.detail.contains(says), "{url}: {}", check.detail);
    }
}

#[test]
fn disk_rows() {
    let limits = RetentionConfig {
        max_age_days: 30,
        max_bytes: 100 << 20,
    };
    let disk = |traces: u64, index: u64, free: Option<u64>| Disk {
        home: "/h".into(),
        parts: vec![("traces", traces), ("checkpoints", 0), ("index", index)],
        free,
    };
    let rows = [
        (disk(0, 0, Some(50 << 30)), Status::Ok),
        (disk(0, 0, None), Status::Ok),
        // The index is not under retention: only traces and checkpoints count against it.
        (disk(10 << 20, 500 << 20, Some(50 << 30)), Status::Ok),
        (disk(101 << 20, 0, Some(50 << 30)), Status::Warn),
        (disk(0, 0, Some(512 << 20)), Status::Warn),
        (disk(0, 0, Some(10 << 20)), Status::Fail),
    ];
    for (facts, status) in rows {
        let check = judge::disk(&facts, &limits);
        assert_eq!(check.status, status, "{facts:?}: {check:?}");
        assert!(check.detail.contains("100.0 MiB and 30 days"), "{check:?}");
    }
}

#[test]
fn facts_from_real_files_a_process_and_a_port() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.gguf");
    std::fs::write(&model, b"GGUF and the rest").unwrap();
    let shown = model.display().to_string();
    let got = facts::model(&shown, true);
    let ModelFile::Present {
        size: 17,
        gguf: true,
        sha256: Some(hash),
    } = &got
    else {
        panic!("{got:?}");
    };
    // sha256sum of the same 17 bytes.
    assert_eq!(
        hash,
        "166f1a315a7c541a4ee98b4912d6e43b2e277110a730ffb1c7513b2eed1fed96"
    );
    assert_eq!(
        facts::model(&shown, false),
        ModelFile::Present {
            size: 17,
            gguf: true,
            sha256: None
        }
    );
    std::fs::write(&model, b"GG").unwrap();
    assert!(matches!(
        facts::model(&shown, false),
        ModelFile::Present { gguf: false, .. }
    ));
    assert_eq!(
        facts::model("/nonexistent/m.gguf", true),
        ModelFile::Missing
    );
    assert_eq!(
        facts::model(&dir.path().display().to_string(), true),
        ModelFile::NotAFile
    );

    let server = dir.path().join("llama-server");
    std::fs::write(&server, "#!/bin/sh\necho 'version: 7 (abc)' >&2\n").unwrap();
    let path = server.display().to_string();
    assert_eq!(
        facts::server(&path, Duration::from_secs(5)),
        Server::NotExecutable
    );
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        facts::server(&path, Duration::from_secs(5)),
        Server::Runs("version: 7 (abc)".into())
    );
    std::fs::write(&server, "#!/bin/sh\nexit 3\n").unwrap();
    assert!(matches!(
        facts::server(&path, Duration::from_secs(5)),
        Server::Broken(_)
    ));
    // A server that leaves a process holding its output open still reports, at once.
    std::fs::write(
        &server,
        "#!/bin/sh\necho 'version: 8 (bg)' >&2\nsleep 30 &\nexit 0\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    assert_eq!(
        facts::server(&path, Duration::from_secs(5)),
        Server::Runs("version: 8 (bg)".into())
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    std::fs::write(&server, "#!/bin/sh\nexec sleep 30\n").unwrap();
    let Server::Broken(why) = facts::server(&path, Duration::from_millis(300)) else {
        panic!("a hanging server must be reported");
    };
    assert!(why.contains("did not finish"), "{why}");
    assert_eq!(
        facts::server("/nonexistent/llama-server", Duration::from_secs(1)),
        Server::Missing
    );

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let record = dir.path().join("run/llama-server.json");
    let PortHolder::Other { pid, .. } = facts::port(port, &record) else {
        panic!("a held port without a launch record is someone else's");
    };
    assert_eq!(pid, Some(std::process::id()));
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    let started = crate::supervisor::start_time(std::process::id()).unwrap();
    std::fs::write(
        &record,
        serde_json::json!({"pid": std::process::id(), "startTime": started}).to_string(),
    )
    .unwrap();
    assert_eq!(
        facts::port(port, &record),
        PortHolder::Ours(std::process::id())
    );
    std::fs::write(
        &record,
        serde_json::json!({"pid": std::process::id(), "startTime": started + 1}).to_string(),
    )
    .unwrap();
    assert!(
        matches!(facts::port(port, &record), PortHolder::Other { .. }),
        "a recycled pid is not ours"
    );
    drop(listener);
    assert_eq!(facts::port(port, &record), PortHolder::Free);

    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("traces")).unwrap();
    std::fs::write(home.join("traces/t.json"), vec![0u8; 3000]).unwrap();
    std::fs::write(home.join("stray"), vec![0u8; 10]).unwrap();
    std::os::unix::fs::symlink("/usr", home.join("checkpoints")).unwrap();
    let disk = facts::disk(&crate::paths::Home::from_root(&home));
    assert_eq!(
        disk.parts,
        vec![
            ("traces", 3000),
            ("checkpoints", 0),
            ("sessions", 0),
            ("index", 0),
            ("logs", 0),
            ("other", 10)
        ]
    );
    assert!(disk.free.is_some_and(|f| f > 0));
}

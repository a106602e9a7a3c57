//! Commands through profiles, end to end: a real `cargo test` profile on a fixture crate, raw
//! command keys and screened tokens refused before approval, a process tree killed on timeout
//! and on client disconnect, the workspace-profile pin lifecycle, the declaration file protected
//! from the model, and containment that the kernel actually enforces.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{
    CompletionStatus, ProfileListResult, ProfileTrustResult, TurnEvent, TurnEventParams,
    TurnOutcome,
};
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{Answer, Client, TestDaemon, approvals, approve_all, decode, events};

fn call(args: Value) -> Reply {
    Reply::ToolCalls(vec![("talos.run_command".into(), args.to_string())])
}

/// A tiny crate with two tests, one of which a selector picks.
fn fixture_crate(dir: &Path) {
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub fn parse(s: &str) -> usize { s.len() }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn parse_counts_bytes() { assert_eq!(super::parse(\"abc\"), 3); }\n    #[test]\n    fn other_thing() { assert_eq!(1 + 1, 2); }\n}\n").unwrap();
}

struct Env {
    llama: FakeLlama,
    daemon: TestDaemon,
    ws: tempfile::TempDir,
    client: Client,
    session: String,
}

async fn env(steps: Vec<Reply>) -> Env {
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = tempfile::tempdir().unwrap();
    fixture_crate(ws.path());
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    Env {
        llama,
        daemon,
        ws,
        client,
        session,
    }
}

impl Env {
    async fn turn(
        &mut self,
        prompt: &str,
        decision: &'static str,
    ) -> (TurnOutcome, Vec<talos_protocol::Message>) {
        self.client
            .turn_with(&self.session, prompt, approve_all(decision))
            .await
    }
    fn trace(&self) -> TraceRecord {
        self.daemon
            .traces()
            .into_iter()
            .max_by_key(|t| t.turn_number)
            .unwrap()
    }
    fn declare(&self, yaml: &str) {
        std::fs::create_dir_all(self.ws.path().join(".talos")).unwrap();
        std::fs::write(self.ws.path().join(".talos/profiles.yaml"), yaml).unwrap();
    }
    async fn list(&mut self) -> ProfileListResult {
        self.client
            .request("profile/list", json!({"workspace": self.ws.path()}))
            .await
    }
    async fn trust(&mut self) -> ProfileTrustResult {
        let sha = self.list().await.workspace.sha256.unwrap();
        self.client
            .request(
                "profile/trust",
                json!({"workspace": self.ws.path(), "sha256": sha}),
            )
            .await
    }
}

const RUN_TESTS: &str = "Run the cargo_test command profile";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_cargo_test_profile_runs_with_a_test_selector() {
    let mut e = env(vec![
        call(json!({"profile": "cargo_test", "args": ["parse"]})),
        Reply::Text("The parse test passed.".into()),
    ])
    .await;
    let (outcome, seen) = e.turn(RUN_TESTS, "approve").await;
    let asked = approvals(&seen);
    assert_eq!(asked.len(), 1);
    let details = asked[0].details.join("\n");
    assert!(
        details.contains("host network is not isolated"),
        "{details}"
    );
    assert!(details.contains("checkpoint: not taken"), "{details}");
    assert!(!asked[0].remember_eligible);
    let command = &e.trace().commands[0];
    assert_eq!(command.exit_code, Some(0), "{command:?}");
    assert_eq!(command.argv.last().unwrap(), "parse");
    let progress: String = events(&seen)
        .iter()
        .filter_map(tool_progress)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        progress.contains("parse_counts_bytes") && !progress.contains("other_thing ... ok"),
        "the selector ran one test: {progress}"
    );
    let result = e.llama.requests()[1].to_string();
    assert!(result.contains("exited with code 0"), "{result}");
    assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
}

#[tokio::test]
async fn raw_command_keys_and_screened_tokens_are_refused_before_approval() {
    let mut rows: Vec<(Value, &str)> = [
        "command",
        "cmd",
        "shell",
        "executable",
        "argv",
        "command_line",
    ]
    .iter()
    .map(|k| {
        (
            json!({"profile": "cargo_test", *k: "rm -rf /"}),
            "Raw shell commands are not supported. Use an approved command profile.",
        )
    })
    .collect();
    rows.extend([
        (
            json!({"profile": "cargo_test", "args": ["parse;rm"]}),
            "unsupported shell syntax",
        ),
        (
            json!({"profile": "cargo_test", "args": ["$(id)"]}),
            "unsupported shell syntax",
        ),
        (
            json!({"profile": "cargo_test", "args": ["a|b"]}),
            "unsupported shell syntax",
        ),
        (
            json!({"profile": "cargo_test", "args": ["curl"]}),
            "network command risk",
        ),
        (
            json!({"profile": "cargo_test", "args": ["https://evil.example"]}),
            "",
        ),
        (
            json!({"profile": "cargo_test", "args": ["rm"]}),
            "destructive command risk",
        ),
        (
            json!({"profile": "cargo_test", "args": ["--release", "--target-dir", "/tmp/x"]}),
            "not allowed",
        ),
        (json!({"profile": "bash"}), "Unknown command profile"),
        (json!({"profile": "ws:anything"}), "not available"),
    ]);
    for (args, expected) in rows {
        let mut e = env(vec![call(args.clone()), Reply::Text("Done.".into())]).await;
        let (_, seen) = e.turn(RUN_TESTS, "approve").await;
        assert!(
            approvals(&seen).is_empty(),
            "{args}: refused before approval"
        );
        let rejection = e.trace().tool_calls[0]
            .rejection
            .clone()
            .unwrap_or_default();
        assert!(rejection.contains(expected), "{args}: {rejection}");
        assert!(e.trace().commands.is_empty(), "{args}: nothing ran");
    }
}

/// A script in the workspace: workspace profiles run a fixed argv and refuse shell syntax in
/// it, so anything shell-like lives in a script the person reviewed.
fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn sleeper_yaml(timeout_ms: u64) -> String {
    format!(
        "profiles:\n  - id: sleeper\n    executable: ./sleeper.sh\n    timeout_ms: {timeout_ms}\n"
    )
}

fn gone(pid_file: &Path) -> bool {
    let pid: i32 = std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_tree_is_killed_on_timeout_and_on_client_disconnect() {
    let mut e = env(vec![
        call(json!({"profile": "ws:sleeper"})),
        Reply::Text("Done.".into()),
    ])
    .await;
    script(
        e.ws.path(),
        "sleeper.sh",
        "sleep 60 &\necho $! > grandchild.pid\nwait",
    );
    e.declare(&sleeper_yaml(1000));
    e.trust().await;
    let (outcome, _) = e
        .turn("Run the command profile ws:sleeper", "approve")
        .await;
    assert!(e.trace().commands[0].timed_out, "{outcome:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        gone(&e.ws.path().join("grandchild.pid")),
        "the grandchild died with the tree"
    );

    // A disconnect while the command runs kills it too.
    e.declare(&sleeper_yaml(60_000));
    e.trust().await;
    std::fs::remove_file(e.ws.path().join("grandchild.pid")).unwrap();
    let pid_file = e.ws.path().join("grandchild.pid");
    let mut other = e.daemon.client().await;
    let session = other.open_session(e.ws.path(), "agent").await;
    other.send_line(&json!({"jsonrpc": "2.0", "id": 1, "method": "turn/start", "params": {"sessionId": session, "prompt": "Run the command profile ws:sleeper"}}).to_string()).await;
    loop {
        let m = other.read().await.unwrap();
        if m.method.as_deref() == Some("approval/request") {
            other
                .send_line(
                    &json!({"jsonrpc": "2.0", "id": m.id, "result": {"decision": "approve"}})
                        .to_string(),
                )
                .await;
            break;
        }
    }
    for _ in 0..100 {
        if pid_file.exists()
            && !std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .is_empty()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(other);
    talos_tests::cli::wait_until_async(
        "a disconnect killed the tree",
        Duration::from_secs(10),
        || gone(&pid_file),
    )
    .await;
}

#[tokio::test]
async fn the_pin_lifecycle_untrusted_trusted_changed_corrupt() {
    let steps = vec![
        call(json!({"profile": "ws:hello"})),
        Reply::Text("Done.".into()),
    ];
    let mut e = env(steps).await;
    e.declare("profiles:\n  - id: hello\n    executable: /bin/echo\n    args: [\"hi\"]\n");
    let listed = e.list().await;
    assert_eq!(listed.workspace.state, "untrusted_new");
    let (_, seen) = e.turn("Run the command profile ws:hello", "approve").await;
    assert!(
        approvals(&seen).is_empty(),
        "untrusted: refused before approval"
    );
    let rejection = e.trace().tool_calls[0].rejection.clone();
    assert!(
        rejection.as_deref().unwrap().contains("untrusted"),
        "{rejection:?}"
    );

    let pinned = e.trust().await;
    assert!(pinned.pinned);
    let (outcome, seen) = e.turn("Run the command profile ws:hello", "approve").await;
    assert_eq!(approvals(&seen).len(), 1, "{outcome:?}");
    assert_eq!(e.trace().commands[0].exit_code, Some(0));

    e.declare("profiles:\n  - id: hello\n    executable: /bin/echo\n    args: [\"hi!\"]\n");
    let listed = e.list().await;
    assert_eq!(listed.workspace.state, "untrusted_changed");
    let (_, seen) = e.turn("Run the command profile ws:hello", "approve").await;
    assert!(
        approvals(&seen).is_empty(),
        "one byte changed: untrusted again"
    );

    e.trust().await;
    let pins = e.daemon.home.path().join("trust/workspace-profiles");
    for pin in std::fs::read_dir(&pins).unwrap().flatten() {
        std::fs::write(pin.path(), "{not json").unwrap();
    }
    let listed = e.list().await;
    assert_ne!(
        listed.workspace.state, "trusted",
        "a corrupt pin fails closed"
    );
    let (_, seen) = e.turn("Run the command profile ws:hello", "approve").await;
    assert!(approvals(&seen).is_empty());

    // A stale hash is never pinned.
    let (response, _) = e
        .client
        .call_with(
            "profile/trust",
            json!({"workspace": e.ws.path(), "sha256": "0".repeat(64)}),
            |_| Answer::Ignore,
        )
        .await
        .unwrap();
    let stale: Option<ProfileTrustResult> =
        response.result.map(|r| decode("profile/trust result", r));
    assert_eq!(stale.map(|r| r.pinned), Some(false));
}

#[tokio::test]
async fn the_model_cannot_edit_the_profile_declaration() {
    let write = Reply::ToolCalls(vec![("talos.write_file".into(), json!({"path": ".talos/profiles.yaml", "content": "profiles:\n  - id: pwn\n    executable: /bin/sh\n"}).to_string())]);
    let mut e = env(vec![write, Reply::Text("Done.".into())]).await;
    let (_, seen) = e
        .turn("Add a profile to .talos/profiles.yaml", "approve")
        .await;
    assert!(approvals(&seen).is_empty());
    assert_eq!(
        e.trace().permission_decisions[0].reason_code,
        "PROTECTED_PATH_DENY"
    );
    assert!(!e.ws.path().join(".talos/profiles.yaml").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_profile_has_no_network_and_cannot_write_outside() {
    // Outside both the workspace and the temp dir (which a confined command may write).
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = outside.path().join("escaped.txt");
    let mut e = env(vec![
        call(json!({"profile": "ws:probe"})),
        Reply::Text("Done.".into()),
    ])
    .await;
    script(
        e.ws.path(),
        "probe.sh",
        &format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9), 1)' 2>/dev/null && echo NET-OK\necho x > {} 2>/dev/null && echo WRITE-OK\necho inside > inside.txt && echo INSIDE-OK",
            target.display()
        ),
    );
    e.declare(
        "profiles:\n  - id: probe\n    executable: ./probe.sh\n    isolate: [network, writes]\n",
    );
    e.trust().await;
    let (_, seen) = e.turn("Run the command profile ws:probe", "approve").await;
    let details = approvals(&seen)[0].details.join("\n");
    let command = e.trace().commands[0].clone();
    let support = (command.network_isolated, command.writes_confined);
    if support != (true, true) {
        assert!(
            details.contains("NOT"),
            "uncontained is said plainly: {details}"
        );
        eprintln!("containment not granted by this kernel: {support:?}");
        return;
    }
    let progress: String = events(&seen)
        .iter()
        .filter_map(tool_progress)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!progress.contains("NET-OK"), "{progress}");
    assert!(
        !progress.contains("WRITE-OK") && !target.exists(),
        "{progress}"
    );
    assert!(
        progress.contains("INSIDE-OK"),
        "writes inside the workspace still work: {progress}"
    );
}

#[tokio::test]
async fn a_request_to_run_an_unnamed_command_gets_a_fixed_answer_without_the_model() {
    let mut e = env(vec![Reply::Text("sure, running it".into())]).await;
    let (outcome, _) = e
        .turn("Run pytest and tell me if it passes", "approve")
        .await;
    assert!(
        outcome.final_answer.starts_with(
            "I can't run that command check because no approved command profile was specified."
        ),
        "{outcome:?}"
    );
    assert!(e.llama.requests().is_empty(), "no model call");
}

/// The message of a `tool_progress` event.
fn tool_progress(event: &TurnEventParams) -> Option<String> {
    match &event.event {
        TurnEvent::ToolProgress { message, .. } => Some(message.clone()),
        _ => None,
    }
}

//! The hostile-input corpus (`tests/corpus/hostile.tsv`): escaping and malformed paths, tool
//! payloads a hostile model could write, bad permission rules and configs, and malformed
//! JSON-RPC lines. Each row asserts the decision and its message; after every payload row a
//! canary outside the workspace and the workspace itself are checked byte for byte. A
//! property test over generated paths and a fuzz-style test with random model output and
//! random protocol lines close the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::{Value, json};
use talos_protocol::{Classification, CompletionStatus, DaemonStatusResult, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply};
use talos_tests::harness::{TestDaemon, approve_all, decode};
use talosd::workspace::{Resolver, Workspace};

const CORPUS: &str = include_str!("../../corpus/hostile.tsv");

struct Row {
    line: usize,
    kind: String,
    input: String,
    expected: String,
}

fn rows(kind: &str) -> Vec<Row> {
    CORPUS
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.is_empty())
        .map(|(i, l)| {
            let mut parts = l.splitn(3, '\t');
            let kind = parts.next().unwrap().to_string();
            let body = parts.next().unwrap();
            let input: String = serde_json::from_str(&format!("\"{body}\""))
                .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            Row {
                line: i + 1,
                kind,
                input,
                expected: parts.next().unwrap().to_string(),
            }
        })
        .filter(|r| r.kind == kind)
        .collect()
}

/// A workspace with symlinks in and out, a sibling with a prefix name, and a canary outside.
struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    canary: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let ws = base.join("ws");
    for dir in ["ws/sub", "ws/.git", "outside", "ws-other"] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
    }
    std::fs::write(ws.join("sub/file.txt"), "canary-free content\n").unwrap();
    std::fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    let canary = base.join("outside/canary.txt");
    std::fs::write(&canary, "canary\n").unwrap();
    std::fs::write(base.join("ws-other/x"), "other\n").unwrap();
    std::os::unix::fs::symlink("../outside", ws.join("link-out")).unwrap();
    std::os::unix::fs::symlink("sub", ws.join("link-in")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.join("passwd")).unwrap();
    std::os::unix::fs::symlink("nowhere", ws.join("dangling")).unwrap();
    Fixture {
        _tmp: tmp,
        ws,
        canary,
    }
}

/// Every file under `dir` (not following links) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
                out.insert(entry.path(), b"<dir>".to_vec());
            } else if kind.is_symlink() {
                out.insert(
                    entry.path(),
                    std::fs::read_link(entry.path())
                        .unwrap()
                        .to_string_lossy()
                        .as_bytes()
                        .to_vec(),
                );
            } else {
                out.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn hostile_paths_resolve_as_the_corpus_says() {
    let f = fixture();
    let rows = rows("path");
    assert!(rows.len() >= 70);
    let mut failures = Vec::new();
    for resolver in [Resolver::Openat2, Resolver::ComponentWalk] {
        let ws = Workspace::open_with(&f.ws, resolver).unwrap();
        for row in &rows {
            let r = ws.resolve(&row.input);
            let absolute = r.location.as_deref().map(|l| ws.absolute(l));
            let ok = match row.expected.split_once(':') {
                Some(("escape", problem)) => {
                    r.facts.escapes
                        && r.facts
                            .problem
                            .as_deref()
                            .unwrap_or_default()
                            .contains(problem)
                        && absolute.is_none()
                }
                Some(("inside", rel)) => {
                    !r.facts.escapes
                        && r.facts.relative.as_deref() == Some(rel)
                        && absolute.as_ref().is_some_and(|a| a.starts_with(&f.ws))
                }
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{resolver:?} line {}: {:?} expected {} got {:?}",
                    row.line, row.input, row.expected, r.facts
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_configs_are_refused_with_a_message_naming_the_problem() {
    let rows = rows("config");
    assert!(rows.len() >= 25);
    let mut failures = Vec::new();
    for row in &rows {
        match talosd::config::Config::parse(&row.input, "config.yaml") {
            Ok(_) => failures.push(format!("line {}: {:?} was accepted", row.line, row.input)),
            Err(e) if !e.to_string().contains(&row.expected) => {
                failures.push(format!("line {}: {:?}: {e}", row.line, row.input))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn malformed_protocol_lines_get_their_error_and_the_connection_survives() {
    let daemon = TestDaemon::start("").await;
    let mut client = daemon.client().await;
    let rows = rows("rpc");
    assert!(rows.len() >= 40);
    let mut failures = Vec::new();
    for row in &rows {
        client.send_line(&row.input).await;
        let reply = client.read().await.expect("the daemon answers every line");
        let code = reply
            .error
            .as_ref()
            .map(|e| e.code.to_string())
            .unwrap_or_else(|| "ok".into());
        if code != row.expected {
            failures.push(format!(
                "line {}: {:?} expected {} got {code} ({:?})",
                row.line, row.input, row.expected, reply.error
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
    assert_eq!(status.sessions, 0);
    daemon.stop().await;
}

/// The request that puts the payload's tool on the turn's surface.
fn prompt_for(name: &str) -> &'static str {
    match name {
        "talos.delete_path" => "Delete the requested files",
        "talos.rename_path" => "Rename the requested file",
        "talos.move_path" => "Move the requested file",
        "talos.copy_path" => "Copy the requested file",
        "talos.mkdir" => "Create a folder as requested",
        "talos.apply_workspace_batch" => {
            "Create the requested folders and move the requested files into them"
        }
        _ => "please make the requested change",
    }
}

#[tokio::test]
async fn hostile_tool_payloads_are_refused_and_nothing_changes() {
    let current: Arc<Mutex<(String, String)>> = Arc::default();
    let shared = current.clone();
    let script = Arc::new(move |request: &Value| {
        if talos_tests::fake_llama::tool_results(request) > 0 {
            return Reply::Text("Done.".into());
        }
        let (name, args) = shared.lock().unwrap().clone();
        Reply::ToolCalls(vec![(name, args)])
    });
    let llama = FakeLlama::start(true, script).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let f = fixture();
    let mut client = daemon.client().await;
    let session = client.open_session(&f.ws, "agent").await;
    let before = snapshot(f.ws.parent().unwrap());
    let rows = rows("payload");
    assert!(rows.len() >= 100);
    let mut failures = Vec::new();
    for row in &rows {
        let payload: Value = serde_json::from_str(&row.input).unwrap();
        let name = payload["name"].as_str().unwrap().to_string();
        let args = match &payload["arguments"] {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        *current.lock().unwrap() = (name.clone(), args);
        // Approve anything asked: a payload that reached approval would then do its damage.
        let (response, _) = client
            .call_with(
                "turn/start",
                json!({"sessionId": session, "prompt": prompt_for(&name)}),
                approve_all("approve"),
            )
            .await
            .unwrap();
        let outcome: Option<TurnOutcome> = response
            .result
            .map(|result| decode("turn/start result", result));
        let trace = daemon
            .traces()
            .into_iter()
            .max_by_key(|t| t.turn_number)
            .unwrap();
        let record = format!(
            "{} {}",
            serde_json::to_string(&trace.permission_decisions).unwrap(),
            serde_json::to_string(&trace.tool_calls).unwrap()
        );
        if !record.contains(&row.expected) {
            failures.push(format!(
                "line {}: {name} expected {:?} in {record}",
                row.line, row.expected
            ));
        }
        if let Some(outcome) = outcome.filter(|o| {
            o.status == CompletionStatus::Complete
                && o.classification != Classification::ReadOnlyAnswered
        }) {
            failures.push(format!("line {}: {name} completed: {outcome:?}", row.line));
        }
        assert_eq!(
            std::fs::read_to_string(&f.canary).unwrap(),
            "canary\n",
            "line {}: the canary outside changed",
            row.line
        );
        if snapshot(f.ws.parent().unwrap()) != before {
            failures.push(format!("line {}: {name}: files changed", row.line));
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    daemon.stop().await;
}

/// A small deterministic generator, so a failure can be reproduced from its seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = (self.next() as usize) % max;
        let alphabet = b"{}[]\":,\\ \n\tabc./talos_writefilecontentpathname0123456789`\x00\xff\xc3";
        (0..len)
            .map(|_| {
                if self.next().is_multiple_of(4) {
                    (self.next() & 0xff) as u8
                } else {
                    alphabet[(self.next() as usize) % alphabet.len()]
                }
            })
            .collect()
    }
}

#[tokio::test]
async fn random_model_output_and_random_protocol_lines_neither_crash_nor_write() {
    let seed = Arc::new(Mutex::new(XorShift(0x9e37_79b9_7f4a_7c15)));
    let rng = seed.clone();
    let script = Arc::new(move |request: &Value| {
        let mut r = rng.lock().unwrap();
        let text = String::from_utf8_lossy(&r.bytes(400)).into_owned();
        if talos_tests::fake_llama::tool_results(request) > 2 {
            return Reply::Text(text);
        }
        match r.next() % 3 {
            0 => Reply::Text(text),
            1 => Reply::Text(format!(
                "```json\n{{\"name\": \"talos.write_file\", \"parameters\": {text}\n```"
            )),
            _ => Reply::ToolCalls(vec![(
                [
                    "talos.write_file",
                    "talos.edit_file",
                    "talos.delete_path",
                    "x",
                ][(r.next() % 4) as usize]
                    .into(),
                text,
            )]),
        }
    });
    for native in [true, false] {
        let llama = FakeLlama::start(native, script.clone()).await;
        let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
        let f = fixture();
        let before = snapshot(f.ws.parent().unwrap());
        let mut client = daemon.client().await;
        let session = client.open_session(&f.ws, "agent").await;
        for _ in 0..60 {
            let (response, _) = client
                .call_with(
                    "turn/start",
                    json!({"sessionId": session, "prompt": "please make the requested change"}),
                    approve_all("deny"),
                )
                .await
                .unwrap();
            assert!(response.result.is_some(), "{:?}", response.error);
        }
        let mut raw = tokio::net::UnixStream::connect(&daemon.socket)
            .await
            .unwrap();
        let mut lines = XorShift(0x1234_5678_9abc_def1);
        for _ in 0..500 {
            let mut line = lines.bytes(300);
            line.retain(|b| *b != b'\n');
            line.push(b'\n');
            tokio::io::AsyncWriteExt::write_all(&mut raw, &line)
                .await
                .unwrap();
        }
        let status: DaemonStatusResult = client.request("daemon/status", json!({})).await;
        assert_eq!(status.pid, std::process::id(), "the daemon still answers");
        assert_eq!(
            snapshot(f.ws.parent().unwrap()),
            before,
            "random output wrote nothing"
        );
        daemon.stop().await;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// Whatever path is generated, a path the boundary lets in lies inside the workspace once
    /// every symlink is resolved.
    #[test]
    fn any_generated_path_that_resolves_inside_stays_inside(segments in proptest::collection::vec(prop_oneof![
        Just(".."), Just("."), Just("sub"), Just("link-out"), Just("link-in"), Just("passwd"), Just("dangling"), Just("new"), Just("file.txt"), Just(""), Just("~"), Just("a\\b"), Just("\u{0}"), Just("ws-other"), Just("..."),
    ], 0..8), absolute in any::<bool>()) {
        let f = fixture();
        let raw = format!("{}{}", if absolute { "/" } else { "" }, segments.join("/"));
        let ws = Workspace::open(&f.ws).unwrap();
        let r = ws.resolve(&raw);
        if let Some(abs) = r.location.as_deref().map(|l| ws.absolute(l)) {
            prop_assert!(!r.facts.escapes);
            prop_assert!(abs.starts_with(&f.ws), "{raw:?} -> {abs:?}");
            let mut existing = abs.clone();
            while !existing.exists() {
                existing = existing.parent().unwrap().to_path_buf();
            }
            prop_assert!(std::fs::canonicalize(&existing).unwrap().starts_with(&f.ws), "{raw:?}");
        } else {
            prop_assert!(r.facts.escapes);
        }
    }
}

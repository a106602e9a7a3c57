//! Issue 12's contract corrections and commands in plain words, end to end through the socket
//! with the fake model: "who are you" answered from the runtime's fixed text (never the model's
//! "I'm Qwen"), "run the tests" reaching `talos.run_command` with the `cargo_test` profile on a
//! real crate (native and text calls), a runner with no profile getting the fixed answer that
//! lists the profiles that exist, a trusted workspace profile named by its id alone, and a
//! change turn whose tests fail after the change ending FAILED, not COMPLETED_VERIFIED.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use talos_protocol::trace::TraceRecord;
use talos_protocol::{Classification, CompletionStatus, ProfileListResult, TurnEvent, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, after_tool_result, offered_tools, scripted};
use talos_tests::harness::{Client, TestDaemon, approvals, approve_all, events};

/// A tiny crate with one passing test.
fn fixture_crate(dir: &Path) {
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), LIB).unwrap();
}

const LIB: &str = "pub fn parse(s: &str) -> usize { s.len() }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn parse_counts_bytes() { assert_eq!(super::parse(\"abc\"), 3); }\n}\n";

struct Env {
    llama: FakeLlama,
    daemon: TestDaemon,
    ws: tempfile::TempDir,
    client: Client,
    session: String,
}

async fn env(native: bool, model: Arc<dyn Fn(&Value) -> Reply + Send + Sync>, crate_: bool) -> Env {
    let llama = FakeLlama::start(native, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_reading_first(&llama.url, native)).await;
    let ws = tempfile::tempdir().unwrap();
    if crate_ {
        fixture_crate(ws.path());
    } else {
        std::fs::write(ws.path().join("README.md"), "# notes\n").unwrap();
    }
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
    async fn turn(&mut self, prompt: &str) -> (TurnOutcome, Vec<talos_protocol::Message>) {
        self.client
            .turn_with(&self.session, prompt, approve_all("approve"))
            .await
    }
    fn trace(&self) -> TraceRecord {
        self.daemon
            .traces()
            .into_iter()
            .max_by_key(|t| t.turn_number)
            .unwrap()
    }
}

/// Everything the model's text streamed to the client during the turn.
fn streamed(seen: &[talos_protocol::Message]) -> String {
    events(seen)
        .iter()
        .filter_map(|e| match &e.event {
            TurnEvent::StreamChunk { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// The system prompt of a model request.
fn system_prompt(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Proves "who are you" and "what can you do" are answered from the runtime's fixed text with
/// no model call, in both calling modes, and nothing the model would say is streamed.
#[tokio::test]
async fn who_are_you_is_answered_by_the_runtime_not_the_model() {
    for native in [true, false] {
        let qwen = scripted(vec![Reply::Text(
            "I'm Qwen, a large language model created by Alibaba Cloud.".into(),
        )]);
        let mut e = env(native, qwen, false).await;
        for prompt in ["Who are you?", "What can you do?"] {
            let (outcome, seen) = e.turn(prompt).await;
            assert!(
                outcome.final_answer.starts_with(
                    "I'm Talos, a coding assistant that runs locally on this machine."
                ),
                "{prompt} (native {native}): {outcome:?}"
            );
            assert!(outcome.final_answer.contains("I cannot:"), "{outcome:?}");
            assert!(!outcome.final_answer.contains("Qwen"), "{outcome:?}");
            assert!(
                !streamed(&seen).contains("Qwen"),
                "nothing from the model is streamed"
            );
            assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
        }
        assert!(
            e.llama.requests().is_empty(),
            "no model call (native {native})"
        );
    }
}

/// A model that runs the `cargo_test` profile (natively or as a fenced text call), then
/// reports.
fn runs_cargo_test(native: bool) -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    Arc::new(move |request: &Value| {
        if after_tool_result(request) {
            Reply::Text("The tests passed.".into())
        } else if native {
            Reply::ToolCalls(vec![(
                "talos.run_command".into(),
                json!({"profile": "cargo_test"}).to_string(),
            )])
        } else {
            Reply::Text("Running the tests.\n```json\n{\"name\": \"talos.run_command\", \"parameters\": {\"profile\": \"cargo_test\"}}\n```".into())
        }
    })
}

/// Proves "Run the tests" in a Cargo workspace offers `talos.run_command`, names the
/// `cargo_test` profile to the model, asks before running it, and runs the real `cargo test`,
/// in both calling modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_the_tests_reaches_the_cargo_test_profile() {
    for native in [true, false] {
        let mut e = env(native, runs_cargo_test(native), true).await;
        let (outcome, seen) = e.turn("Run the tests").await;
        let first = &e.llama.requests()[0];
        let prompt = system_prompt(first);
        assert!(
            prompt.contains("command profile for this request: cargo_test"),
            "{prompt}"
        );
        if native {
            assert!(
                offered_tools(first).contains(&"talos.run_command".to_string()),
                "{first}"
            );
        } else {
            assert!(prompt.contains("- talos.run_command:"), "{prompt}");
        }
        let asked = approvals(&seen);
        assert_eq!(asked.len(), 1, "asked like every command (native {native})");
        assert_eq!(asked[0].tool, "talos.run_command");
        let trace = e.trace();
        assert_eq!(trace.commands.len(), 1, "{outcome:?}");
        assert_eq!(trace.commands[0].profile, "cargo_test");
        assert_eq!(
            trace.commands[0].exit_code,
            Some(0),
            "{:?}",
            trace.commands[0]
        );
        assert_eq!(outcome.status, CompletionStatus::Complete, "{outcome:?}");
    }
}

/// Proves a runner with no matching profile keeps the fixed answer, now listing the profiles
/// the workspace does have, without a model call.
#[tokio::test]
async fn a_runner_with_no_profile_gets_the_list_of_profiles_that_exist() {
    let rows = [
        (
            true,
            "Profiles available in this workspace: cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check.",
        ),
        (
            false,
            "No profile applies to this workspace: it has no Cargo.toml or gradlew at its root and no trusted workspace profile.",
        ),
    ];
    for (crate_, listing) in rows {
        let mut e = env(
            true,
            scripted(vec![Reply::Text("sure, running it".into())]),
            crate_,
        )
        .await;
        let (outcome, seen) = e.turn("Run pytest and tell me if it passes").await;
        assert!(
            outcome.final_answer.starts_with(
                "I can't run that command check because no approved command profile was specified."
            ),
            "{outcome:?}"
        );
        assert!(outcome.final_answer.ends_with(listing), "{outcome:?}");
        assert!(approvals(&seen).is_empty());
        assert!(e.llama.requests().is_empty(), "no model call");
    }
}

/// Proves a trusted workspace profile is reached by its id alone ("run lint" for `ws:lint`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_workspace_profile_is_named_by_its_id_alone() {
    let model = scripted(vec![
        Reply::ToolCalls(vec![(
            "talos.run_command".into(),
            json!({"profile": "ws:lint"}).to_string(),
        )]),
        Reply::Text("Lint is clean.".into()),
    ]);
    let mut e = env(true, model, false).await;
    std::fs::write(e.ws.path().join("lint.sh"), "#!/bin/sh\necho LINT-OK\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        e.ws.path().join("lint.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir_all(e.ws.path().join(".talos")).unwrap();
    std::fs::write(
        e.ws.path().join(".talos/profiles.yaml"),
        "profiles:\n  - id: lint\n    executable: ./lint.sh\n",
    )
    .unwrap();
    let listed: ProfileListResult = e
        .client
        .request("profile/list", json!({"workspace": e.ws.path()}))
        .await;
    let sha = listed.workspace.sha256.unwrap();
    let _: Value = e
        .client
        .request(
            "profile/trust",
            json!({"workspace": e.ws.path(), "sha256": sha}),
        )
        .await;
    let (outcome, seen) = e.turn("run lint").await;
    let prompt = system_prompt(&e.llama.requests()[0]);
    assert!(
        prompt.contains("command profile for this request: ws:lint"),
        "{prompt}"
    );
    assert_eq!(approvals(&seen).len(), 1);
    let trace = e.trace();
    assert_eq!(trace.commands[0].profile, "ws:lint", "{outcome:?}");
    assert_eq!(trace.commands[0].exit_code, Some(0), "{outcome:?}");
}

/// Proves a change turn that asked for the tests to pass, whose change breaks them, ends
/// FAILED with the failing run in the answer's evidence, not COMPLETED_VERIFIED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tests_failing_after_the_change_are_not_completed_verified() {
    let broken = LIB.replace("s.len()", "s.len() + 1");
    let model = scripted(vec![
        Reply::ToolCalls(vec![(
            "talos.read_file".into(),
            json!({"path": "src/lib.rs"}).to_string(),
        )]),
        Reply::ToolCalls(vec![(
            "talos.write_file".into(),
            json!({"path": "src/lib.rs", "content": broken}).to_string(),
        )]),
        Reply::ToolCalls(vec![(
            "talos.run_command".into(),
            json!({"profile": "cargo_test"}).to_string(),
        )]),
        Reply::Text("Done: parse is fixed and the tests pass.".into()),
    ]);
    let mut e = env(true, model, true).await;
    let (outcome, seen) = e
        .turn("Fix the parse function in src/lib.rs so the tests pass")
        .await;
    let asked: Vec<String> = approvals(&seen).iter().map(|a| a.tool.clone()).collect();
    assert_eq!(
        asked,
        ["talos.write_file", "talos.run_command"],
        "{outcome:?}"
    );
    assert_eq!(
        std::fs::read_to_string(e.ws.path().join("src/lib.rs")).unwrap(),
        broken
    );
    let trace = e.trace();
    assert_ne!(trace.commands[0].exit_code, Some(0), "{:?}", trace.commands);
    assert_eq!(
        (outcome.status, outcome.classification),
        (CompletionStatus::Failed, Classification::Failed),
        "{outcome:?}"
    );
}

/// A model that reads `report.md` (natively or as a fenced text call), then answers from it.
fn reads_the_fallback(native: bool) -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    Arc::new(move |request: &Value| {
        if after_tool_result(request) {
            Reply::Text("The report says revenue grew 40% in Q3.".into())
        } else if native {
            Reply::ToolCalls(vec![(
                "talos.read_file".into(),
                json!({"path": "report.md"}).to_string(),
            )])
        } else {
            Reply::Text("```json\n{\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"report.md\"}}\n```".into())
        }
    })
}

/// Proves a request that names a readable fallback for a document the text tools cannot read
/// goes to the model, which reads the fallback and answers from it (native and text calls),
/// instead of ending on the capability note.
#[tokio::test]
async fn a_readable_fallback_for_a_pdf_is_read_and_used() {
    for native in [true, false] {
        let mut e = env(native, reads_the_fallback(native), false).await;
        std::fs::write(e.ws.path().join("report.pdf"), b"%PDF-1.7\n\x00\x01binary").unwrap();
        std::fs::write(e.ws.path().join("report.md"), "Revenue grew 40% in Q3.\n").unwrap();
        let (outcome, _) = e
            .turn("Summarize report.pdf. If PDF is unsupported, read report.md instead.")
            .await;
        let trace = e.trace();
        let read: Vec<Option<String>> = trace
            .tool_calls
            .iter()
            .map(|c| c.path_hint.clone())
            .collect();
        assert_eq!(
            read,
            [Some("report.md".to_string())],
            "native {native}: {outcome:?}"
        );
        assert!(
            e.llama.requests()[1]
                .to_string()
                .contains("Revenue grew 40% in Q3."),
            "the fallback's text reached the model"
        );
        assert!(outcome.final_answer.contains("40%"), "{outcome:?}");
        assert_eq!(
            (outcome.status, outcome.classification),
            (CompletionStatus::Complete, Classification::ReadOnlyAnswered),
            "native {native}: {outcome:?}"
        );
    }
}

/// A model that writes `content` to `path` (natively or as a fenced text call), then reports.
fn writes(
    native: bool,
    path: &'static str,
    content: &'static str,
) -> Arc<dyn Fn(&Value) -> Reply + Send + Sync> {
    let args = json!({"path": path, "content": content});
    let read = json!({"path": path});
    // Read first (a full write may not replace a file not read this turn), then write.
    Arc::new(move |request: &Value| {
        let (name, args) = match talos_tests::fake_llama::tool_results(request) {
            0 => ("talos.read_file", &read),
            1 => ("talos.write_file", &args),
            _ => return Reply::Text(format!("{path} now holds the new content.")),
        };
        if native {
            Reply::ToolCalls(vec![(name.into(), args.to_string())])
        } else {
            Reply::Text(format!(
                "```json\n{{\"name\": \"{name}\", \"parameters\": {args}}}\n```"
            ))
        }
    })
}

/// Proves an unquoted exact literal ends at its sentence (the file holds `AFTER`, not the
/// rest of the request), and an uncertain literal leaves the model's content as written, in
/// both calling modes.
#[tokio::test]
async fn an_unquoted_literal_ends_at_its_sentence_and_an_uncertain_one_is_not_forced() {
    let rows = [
        (
            "Overwrite notes.txt with exactly AFTER. Then tell me what changed.",
            "AFTER\nand more\n",
            "AFTER",
            true,
        ),
        (
            "Overwrite notes.txt with exactly two short lines about cats.",
            "Cats nap.\nCats purr.\n",
            "Cats nap.\nCats purr.\n",
            false,
        ),
    ];
    for native in [true, false] {
        for (prompt, proposed, expected, corrected) in rows {
            let mut e = env(native, writes(native, "notes.txt", proposed), false).await;
            std::fs::write(e.ws.path().join("notes.txt"), "BEFORE\n").unwrap();
            let (outcome, _) = e.turn(prompt).await;
            assert_eq!(
                std::fs::read_to_string(e.ws.path().join("notes.txt")).unwrap(),
                expected,
                "{prompt} (native {native}): {outcome:?}"
            );
            let warned = e
                .trace()
                .warnings
                .iter()
                .any(|w| w.code == "EXACT_LITERAL_WRITE_CORRECTED");
            assert_eq!(warned, corrected, "{prompt} (native {native})");
            // An uncertain literal is no rule: nothing in the request could be checked.
            let verified = if corrected {
                Classification::CompletedVerified
            } else {
                Classification::CompletedUnverified
            };
            assert_eq!(
                outcome.classification, verified,
                "{prompt} (native {native}): {outcome:?}"
            );
        }
    }
}

/// Proves ", and update X too" inside a constraint clause makes X a target the turn may change
/// (its write is asked and made), while the constraint's own file stays verify-only.
#[tokio::test]
async fn and_update_x_too_in_a_constraint_makes_x_a_change_target() {
    let model = scripted(vec![
        Reply::ToolCalls(vec![
            (
                "talos.read_file".into(),
                json!({"path": "styles.css"}).to_string(),
            ),
            (
                "talos.read_file".into(),
                json!({"path": "script.js"}).to_string(),
            ),
        ]),
        // Steps are counted by tool results: the two reads make the next request the third.
        Reply::Text("unused".into()),
        Reply::ToolCalls(vec![(
            "talos.write_file".into(),
            json!({"path": "styles.css", "content": "body { color: navy; }\n"}).to_string(),
        )]),
        Reply::ToolCalls(vec![(
            "talos.write_file".into(),
            json!({"path": "script.js", "content": "console.log('updated');\n"}).to_string(),
        )]),
        Reply::Text("Both files are updated.".into()),
    ]);
    let mut e = env(true, model, false).await;
    std::fs::write(
        e.ws.path().join("index.html"),
        "<!doctype html><html><head><link rel=\"stylesheet\" href=\"styles.css\"></head><body><p>hi</p><script src=\"script.js\"></script></body></html>\n",
    )
    .unwrap();
    std::fs::write(e.ws.path().join("styles.css"), "body { color: black; }\n").unwrap();
    std::fs::write(e.ws.path().join("script.js"), "console.log('old');\n").unwrap();
    let (outcome, seen) = e
        .turn("Rewrite styles.css so index.html still works, and update script.js too")
        .await;
    let asked: Vec<Option<String>> = approvals(&seen).iter().map(|a| a.target.clone()).collect();
    assert_eq!(
        asked,
        [
            Some("styles.css".to_string()),
            Some("script.js".to_string())
        ],
        "{outcome:?}"
    );
    assert_eq!(
        std::fs::read_to_string(e.ws.path().join("script.js")).unwrap(),
        "console.log('updated');\n"
    );
    let trace = e.trace();
    let mut expected = trace.task_contract.expected_targets.clone();
    expected.sort();
    assert_eq!(expected, ["script.js", "styles.css"]);
    assert_eq!(
        outcome.classification,
        Classification::CompletedVerified,
        "{outcome:?}"
    );
}

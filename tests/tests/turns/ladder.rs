//! The permission ladder through the socket, rung by rung, with configured rules; remembered
//! approvals and their exceptions; the format-change ask; a file swapped or changed after
//! approval; and the approval timeout. Every case checks the files on disk.

use serde_json::{Value, json};
use talos_protocol::event::ApprovalSource;
use talos_protocol::{ApprovalRequestParams, Classification, CompletionStatus, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{Answer, Client, TestDaemon, approvals, approve_all};

const RULES: &str = "permissions:\n  rules:\n    - effect: allow\n      paths: [\"notes/**\"]\n    - effect: ask\n      tools: [talos.read_file]\n      paths: [\"docs/**\"]\n      reason: docs are reviewed\n    - effect: deny\n      paths: [\"vendor/**\"]\n      reason: vendored code is read-only\n";

fn call(name: &str, args: Value) -> Reply {
    Reply::ToolCalls(vec![(name.into(), args.to_string())])
}

struct Case {
    _llama: FakeLlama,
    daemon: TestDaemon,
    ws: tempfile::TempDir,
    client: Client,
    session: String,
}

async fn case(steps: Vec<Reply>, extra_config: &str) -> Case {
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&format!(
        "{}{extra_config}",
        TestDaemon::config_reading_first(&llama.url, true)
    ))
    .await;
    let ws = tempfile::tempdir().unwrap();
    for dir in ["notes", "docs", "vendor", ".github"] {
        std::fs::create_dir(ws.path().join(dir)).unwrap();
    }
    std::fs::write(ws.path().join("docs/a.md"), "# a\n").unwrap();
    std::fs::write(ws.path().join("vendor/lib.rs"), "// vendored\n").unwrap();
    std::fs::write(ws.path().join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(ws.path().join("notes/n.txt"), "one\n").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    Case {
        _llama: llama,
        daemon,
        ws,
        client,
        session,
    }
}

impl Case {
    async fn turn(
        &mut self,
        prompt: &str,
        decision: &'static str,
    ) -> (TurnOutcome, Vec<ApprovalRequestParams>) {
        let (outcome, seen) = self
            .client
            .turn_with(&self.session, prompt, approve_all(decision))
            .await;
        (outcome, approvals(&seen))
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.path().join(rel)).unwrap_or_default()
    }
    fn decisions(&self) -> Vec<String> {
        let trace = self
            .daemon
            .traces()
            .into_iter()
            .max_by_key(|t| t.turn_number)
            .unwrap();
        trace
            .permission_decisions
            .iter()
            .map(|d| d.reason_code.clone())
            .collect()
    }
}

#[tokio::test]
async fn each_rung_of_the_ladder() {
    // (request, the model's call, approval asked?, reason code, file that must (not) change)
    let rows: Vec<(&str, Reply, bool, &str)> = vec![
        (
            "Write .env with SECRET=2",
            call(
                "talos.write_file",
                json!({"path": ".env", "content": "SECRET=2\n"}),
            ),
            false,
            "PROTECTED_PATH_DENY",
        ),
        (
            "Update vendor/lib.rs",
            call(
                "talos.write_file",
                json!({"path": "vendor/lib.rs", "content": "x"}),
            ),
            false,
            "CONFIG_DENY",
        ),
        (
            "What is in vendor/lib.rs?",
            call("talos.read_file", json!({"path": "vendor/lib.rs"})),
            false,
            "CONFIG_DENY",
        ),
        (
            "What is in .env?",
            call("talos.read_file", json!({"path": ".env"})),
            true,
            "PROTECTED_PATH_ASK",
        ),
        (
            "What is in docs/a.md?",
            call("talos.read_file", json!({"path": "docs/a.md"})),
            true,
            "CONFIG_ASK",
        ),
        (
            "Write notes/b.txt saying two",
            call(
                "talos.write_file",
                json!({"path": "notes/b.txt", "content": "two\n"}),
            ),
            false,
            "CONFIG_ALLOW",
        ),
        (
            "What is in notes/n.txt?",
            call("talos.read_file", json!({"path": "notes/n.txt"})),
            false,
            "CONFIG_ALLOW",
        ),
        (
            "Write hello.txt saying hi",
            call(
                "talos.write_file",
                json!({"path": "hello.txt", "content": "hi\n"}),
            ),
            true,
            "DEFAULT_WRITE_ASK",
        ),
    ];
    for (prompt, reply, asks, code) in rows {
        let mut c = case(vec![reply, Reply::Text("Done.".into())], RULES).await;
        let (_, asked) = c.turn(prompt, "deny").await;
        assert_eq!(!asked.is_empty(), asks, "{prompt}: asked");
        assert_eq!(c.decisions(), vec![code.to_string()], "{prompt}");
        assert_eq!(c.read(".env"), "SECRET=1\n");
        assert_eq!(c.read("vendor/lib.rs"), "// vendored\n");
        assert_eq!(
            c.read("hello.txt"),
            "",
            "{prompt}: denied writes change nothing"
        );
        if code == "CONFIG_ALLOW" && prompt.starts_with("Write") {
            assert_eq!(
                c.read("notes/b.txt"),
                "two\n",
                "an allow rule skips the prompt"
            );
        }
        if code == "CONFIG_ASK" {
            assert!(
                asked[0]
                    .details
                    .iter()
                    .any(|d| d.contains("docs are reviewed"))
            );
        }
    }
}

#[tokio::test]
async fn remembered_approval_covers_plain_writes_but_not_github_deletes_or_operations() {
    let mut c = case(
        vec![
            call(
                "talos.write_file",
                json!({"path": "a.txt", "content": "a\n"}),
            ),
            call(
                "talos.write_file",
                json!({"path": "b.txt", "content": "b\n"}),
            ),
            call(
                "talos.write_file",
                json!({"path": ".github/dependabot.yml", "content": "version: 2\n"}),
            ),
            Reply::Text("Done.".into()),
        ],
        "",
    )
    .await;
    let (outcome, asked) = c
        .turn(
            "Create a.txt, b.txt and .github/dependabot.yml",
            "approveForSession",
        )
        .await;
    // a.txt asks and is remembered; b.txt rides on it; .github asks again.
    assert_eq!(asked.len(), 2, "{outcome:?}");
    assert_eq!(asked[1].target.as_deref(), Some(".github/dependabot.yml"));
    assert!(!asked[1].remember_eligible);
    assert_eq!(
        c.decisions(),
        vec![
            "DEFAULT_WRITE_ASK",
            "SESSION_REMEMBER_ALLOW",
            "DEFAULT_WRITE_ASK"
        ]
    );
    assert_eq!(
        (c.read("a.txt"), c.read("b.txt")),
        ("a\n".to_string(), "b\n".to_string())
    );
}

#[tokio::test]
async fn an_allowed_change_of_line_endings_bom_or_final_newline_is_asked() {
    for (content, change) in [
        ("one\r\n", "line endings change to CRLF"),
        ("\u{feff}one\n", "a byte order mark is added"),
        ("one", "the final newline is removed"),
    ] {
        let mut c = case(
            vec![
                // Read first: a full write may not replace a file not read this turn.
                call("talos.read_file", json!({"path": "notes/n.txt"})),
                call(
                    "talos.write_file",
                    json!({"path": "notes/n.txt", "content": content}),
                ),
                Reply::Text("Done.".into()),
            ],
            RULES,
        )
        .await;
        let (_, asked) = c.turn("Rewrite notes/n.txt", "deny").await;
        assert_eq!(
            asked.len(),
            1,
            "{change}: the allow rule does not skip this prompt"
        );
        assert!(
            asked[0].details.iter().any(|d| d.contains(change)),
            "{:?}",
            asked[0]
        );
        // The read, then the write the format rung turns into an ask.
        assert_eq!(
            c.decisions(),
            vec!["CONFIG_ALLOW", "CONFIG_ALLOW", "FORMAT_CHANGE_ASK"]
        );
        assert_eq!(c.read("notes/n.txt"), "one\n");
    }
}

#[tokio::test]
async fn a_file_changed_or_swapped_for_a_symlink_after_approval_is_not_written() {
    let outside = tempfile::tempdir().unwrap();
    let canary = outside.path().join("canary.txt");
    std::fs::write(&canary, "canary\n").unwrap();
    for swap in ["content", "symlink"] {
        let mut c = case(
            vec![
                call("talos.read_file", json!({"path": "hello.txt"})),
                call(
                    "talos.write_file",
                    json!({"path": "hello.txt", "content": "hi\n"}),
                ),
                Reply::Text("Done.".into()),
            ],
            "",
        )
        .await;
        std::fs::write(c.ws.path().join("hello.txt"), "original\n").unwrap();
        let target = c.ws.path().join("hello.txt");
        let canary = canary.clone();
        let (outcome, _) = c
            .client
            .turn_with(&c.session, "Overwrite hello.txt with hi", |m| {
                if m.method.as_deref() != Some("approval/request") {
                    return Answer::Ignore;
                }
                if swap == "content" {
                    std::fs::write(&target, "edited by someone else\n").unwrap();
                } else {
                    std::fs::remove_file(&target).unwrap();
                    std::os::unix::fs::symlink(&canary, &target).unwrap();
                }
                Answer::Result(json!({"decision": "approve"}))
            })
            .await;
        assert_eq!(
            outcome.status,
            CompletionStatus::Failed,
            "{swap}: {outcome:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&canary).unwrap(),
            "canary\n",
            "{swap}: nothing outside changed"
        );
        if swap == "content" {
            assert_eq!(c.read("hello.txt"), "edited by someone else\n");
            assert!(
                outcome
                    .final_answer
                    .contains("changed since the change was approved; nothing written"),
                "{outcome:?}"
            );
        } else {
            assert!(
                std::fs::symlink_metadata(c.ws.path().join("hello.txt"))
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
    }
}

#[tokio::test]
async fn an_unanswered_approval_times_out_as_a_denial() {
    let mut c = case(
        vec![
            call(
                "talos.write_file",
                json!({"path": "hello.txt", "content": "hi\n"}),
            ),
            Reply::Text("Done.".into()),
        ],
        "",
    )
    .await;
    // Rewrite the config's timeout: a fresh daemon with a one-second approval timeout.
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            call(
                "talos.write_file",
                json!({"path": "hello.txt", "content": "hi\n"}),
            ),
            Reply::Text("Done.".into()),
        ]),
    )
    .await;
    let config =
        TestDaemon::config_for(&llama.url, true).replace("timeout_secs: 30", "timeout_secs: 1");
    let daemon = TestDaemon::start(&config).await;
    let mut client = daemon.client().await;
    let session = client.open_session(c.ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(&session, "Write hello.txt saying hi", |_| Answer::Ignore)
        .await;
    assert_eq!(approvals(&seen).len(), 1);
    assert_eq!(outcome.classification, Classification::BlockedByApproval);
    let trace = daemon.traces().pop().unwrap();
    assert_eq!(trace.approvals[0].source, ApprovalSource::Timeout);
    assert!(!c.ws.path().join("hello.txt").exists());
    let _ = c.turn("hello", "deny").await;
}

#[tokio::test]
async fn trailing_commentary_is_stripped_before_the_approval_so_approved_bytes_are_written_bytes() {
    let content = "def f():\n    return 1\n\n```\n\n**Explanation:**\n1. `f` returns one.\n\nLet me know if you need more!\n";
    let mut c = case(
        vec![
            call(
                "talos.write_file",
                json!({"path": "app.py", "content": content}),
            ),
            Reply::Text("Done.".into()),
        ],
        "",
    )
    .await;
    let (outcome, asked) = c
        .turn("Create app.py with a function f that returns 1", "approve")
        .await;
    // Written as approved; a function described in words is nothing Talos can check.
    assert_eq!(
        outcome.classification,
        Classification::CompletedUnverified,
        "{outcome:?}"
    );
    let diff = &asked[0].diff.as_ref().unwrap().text;
    assert!(
        !diff.contains("Explanation") && diff.contains("+    return 1"),
        "{diff}"
    );
    assert_eq!(c.read("app.py"), "def f():\n    return 1\n");
    let trace = c.daemon.traces().pop().unwrap();
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.code == "TOOL_CONTENT_SANITIZED")
    );
}

#[tokio::test]
async fn grep_and_listing_are_no_side_door_into_protected_content() {
    let mut c = case(
        vec![
            call("talos.grep", json!({"pattern": "SECRET"})),
            call("talos.list_dir", json!({"path": "."})),
            Reply::Text("Done.".into()),
        ],
        "",
    )
    .await;
    std::fs::write(c.ws.path().join("notes/api_token.txt"), "SECRET=2\n").unwrap();
    let (_, asked) = c.turn("Search the workspace for SECRET", "approve").await;
    assert!(asked.is_empty());
    let requests = c._llama.requests();
    let grep_result = requests[1]["messages"].to_string();
    assert!(
        !grep_result.contains("SECRET=1") && !grep_result.contains("SECRET=2"),
        "{grep_result}"
    );
    assert!(grep_result.contains("may exist in protected content"));
    let listing = requests[2]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        listing.contains(".env") && !listing.contains("SECRET"),
        "names only: {listing}"
    );
}

//! What the person approves is what they see (issue 18), through the socket and the real
//! binaries: a write whose diff holds a right-to-left override carries a `warning:` line in
//! its approval and in the trace, and `talos run` shows the character as `\u{202e}`; a path
//! holding one is refused before approval unless `permissions.allow_invisible_path_characters`
//! allows it; a hard-linked file's read asks and, denied, its bytes never reach the model (nor
//! through grep or a pin), and a write to it leaves the other link's bytes as they were.

use serde_json::{Value, json};
use talos_protocol::ApprovalRequestParams;
use talos_tests::cli::talos;
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted, write_call};
use talos_tests::harness::{Answer, Client, TestDaemon, approvals, approve_all};

/// The secret a hard link shares with the workspace.
const SECRET: &str = "API_KEY=sk-outside-the-workspace-7431";

/// Line 2 displays as `if admin { return; }` reordered; it holds U+202E and U+2066.
const TROJAN: &str = "def check(admin):\n    if admin: # \u{202E} } \u{2066} return True\n";

struct Case {
    llama: FakeLlama,
    daemon: TestDaemon,
    /// Holds `ws/` (the workspace) and `secret.txt` beside it, on one filesystem.
    base: tempfile::TempDir,
    client: Client,
    session: String,
}

async fn case(steps: Vec<Reply>, extra_config: &str) -> Case {
    let llama = FakeLlama::start(true, scripted(steps)).await;
    let daemon = TestDaemon::start(&format!(
        "{}{extra_config}",
        TestDaemon::config_for(&llama.url, true)
    ))
    .await;
    let base = tempfile::tempdir().unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(base.path().join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::hard_link(base.path().join("secret.txt"), ws.join("notes.txt")).unwrap();
    std::fs::write(ws.join("readme.md"), "# readme\n").unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(&ws, "agent").await;
    Case {
        llama,
        daemon,
        base,
        client,
        session,
    }
}

impl Case {
    async fn turn(&mut self, prompt: &str, decision: &'static str) -> Vec<ApprovalRequestParams> {
        let (_, seen) = self
            .client
            .turn_with(&self.session, prompt, approve_all(decision))
            .await;
        approvals(&seen)
    }

    fn ws(&self) -> std::path::PathBuf {
        self.base.path().join("ws")
    }

    /// Whether any request the model was sent holds the secret.
    fn model_saw_secret(&self) -> bool {
        self.llama
            .requests()
            .iter()
            .any(|r| r.to_string().contains("sk-outside-the-workspace"))
    }

    fn warnings(&self) -> Vec<(String, String)> {
        self.daemon
            .traces()
            .iter()
            .flat_map(|t| t.warnings.iter())
            .filter(|w| w.code == "DECEPTIVE_TEXT_IN_APPROVAL")
            .map(|w| (w.code.clone(), w.message.clone()))
            .collect()
    }
}

/// Proves a write whose diff holds U+202E and U+2066 is asked with a `warning:` line naming
/// each character and its line, and the trace records the same warnings.
#[tokio::test]
async fn a_trojan_source_diff_is_asked_with_warnings_in_details_and_trace() {
    let mut c = case(
        vec![
            write_call("check.py", TROJAN),
            Reply::Text("Written.".into()),
        ],
        "",
    )
    .await;
    let asked = c.turn("Create check.py with an admin check.", "deny").await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    let warnings: Vec<&String> = asked[0]
        .details
        .iter()
        .filter(|d| d.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: this change contains a right-to-left override (U+202E) at line 2",
            "warning: this change contains a left-to-right isolate (U+2066) at line 2",
        ]
    );
    assert!(!c.ws().join("check.py").exists(), "denied, nothing written");
    assert_eq!(
        c.warnings(),
        [
            (
                "DECEPTIVE_TEXT_IN_APPROVAL".to_string(),
                "talos.write_file approval: this change contains a right-to-left override (U+202E) at line 2".to_string()
            ),
            (
                "DECEPTIVE_TEXT_IN_APPROVAL".to_string(),
                "talos.write_file approval: this change contains a left-to-right isolate (U+2066) at line 2".to_string()
            ),
        ]
    );
}

/// Proves a path holding U+202E is refused before approval (nothing asked, nothing written,
/// the model told why), and with `permissions.allow_invisible_path_characters: true` it is
/// asked with a warning about the target.
#[tokio::test]
async fn a_path_with_a_right_to_left_override_is_refused_before_approval() {
    let path = "notes\u{202E}txt.sh";
    let steps = || vec![write_call(path, "echo hi\n"), Reply::Text("Done.".into())];
    let mut refused = case(steps(), "").await;
    let asked = refused
        .turn("Write a short greeting into a new file.", "approve")
        .await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(!refused.ws().join(path).exists());
    let told = refused
        .llama
        .requests()
        .last()
        .map(|r| r.to_string())
        .unwrap();
    assert!(
        told.contains("contains a right-to-left override (U+202E)")
            && told.contains("allow_invisible_path_characters"),
        "{told}"
    );
    let trace = refused.daemon.traces().pop().unwrap();
    let call = trace.tool_calls.last().unwrap();
    assert_eq!(
        (call.stage.as_str(), call.path_hint.as_deref()),
        ("rejected", Some("notes\\u{202e}txt.sh"))
    );

    let mut allowed = case(
        steps(),
        "permissions:\n  allow_invisible_path_characters: true\n",
    )
    .await;
    let asked = allowed
        .turn("Write a short greeting into a new file.", "deny")
        .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].details.contains(
            &"warning: the target contains a right-to-left override (U+202E)".to_string()
        ),
        "{:?}",
        asked[0].details
    );
    assert!(!allowed.ws().join(path).exists(), "denied, nothing written");
    let trace = allowed.daemon.traces().pop().unwrap();
    let recorded: Vec<Option<&str>> = trace
        .permission_decisions
        .iter()
        .map(|d| d.relative_path.as_deref())
        .collect();
    assert_eq!(
        recorded,
        [Some("notes\\u{202e}txt.sh")],
        "kept escaped in the trace"
    );
}

/// Proves a read of a file hard-linked to a secret outside the workspace asks, the approval
/// says why, and denied, the secret never reaches the model.
#[tokio::test]
async fn a_hard_linked_read_asks_and_denied_nothing_reaches_the_model() {
    let mut c = case(
        vec![
            read_call("notes.txt"),
            Reply::Text("I could not read it.".into()),
        ],
        "",
    )
    .await;
    let asked = c.turn("What is in notes.txt?", "deny").await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].target.as_deref(), Some("notes.txt"));
    assert!(
        asked[0]
            .details
            .iter()
            .any(|d| d.contains("it is a hard link (2 names share its bytes)")),
        "{:?}",
        asked[0].details
    );
    assert!(!c.model_saw_secret(), "the secret reached the model");
    let trace = c.daemon.traces().pop().unwrap();
    assert!(
        trace
            .permission_decisions
            .iter()
            .any(|d| d.reason_code == "HARD_LINK_ASK" && d.action == "ask"),
        "{:?}",
        trace.permission_decisions
    );
}

/// Proves the same read, approved, does reach the model (so the denial above is what kept it
/// away), while grep skips the hard-linked file and says matches may exist where it did not
/// look.
#[tokio::test]
async fn an_approved_read_reaches_the_model_and_grep_skips_the_hard_link() {
    let mut approved = case(
        vec![
            read_call("notes.txt"),
            Reply::Text("It holds a key.".into()),
        ],
        "",
    )
    .await;
    let asked = approved.turn("What is in notes.txt?", "approve").await;
    assert_eq!(asked.len(), 1);
    assert!(approved.model_saw_secret(), "an approved read is sent on");

    let grep = Reply::ToolCalls(vec![(
        "talos.grep".into(),
        json!({"pattern": "API_KEY"}).to_string(),
    )]);
    let mut searched = case(vec![grep, Reply::Text("No key found.".into())], "").await;
    let asked = searched
        .turn("Search the workspace for API_KEY.", "approve")
        .await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(
        !searched.model_saw_secret(),
        "grep returned the hard link's lines"
    );
    let told = searched
        .llama
        .requests()
        .last()
        .map(|r| r.to_string())
        .unwrap();
    assert!(told.contains("matching lines were not returned"), "{told}");
}

/// Proves an approved write to a hard-linked file (after its read, which asks) replaces the
/// workspace's name only: the secret outside keeps its bytes.
#[tokio::test]
async fn a_write_to_a_hard_link_leaves_the_other_link_unchanged() {
    let mut c = case(
        vec![
            read_call("notes.txt"),
            write_call("notes.txt", "my own notes\n"),
            Reply::Text("Written.".into()),
        ],
        "",
    )
    .await;
    let asked = c
        .turn("Overwrite notes.txt with my own notes.", "approve")
        .await;
    // Replacing an existing file needs a read first; that read asks (a hard link), then the
    // write asks.
    let asked: Vec<&str> = asked.iter().map(|a| a.description.as_str()).collect();
    assert_eq!(
        asked,
        [
            "protected read: talos.read_file",
            "write operation: talos.write_file"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(c.ws().join("notes.txt")).unwrap(),
        "my own notes\n"
    );
    assert_eq!(
        std::fs::read_to_string(c.base.path().join("secret.txt")).unwrap(),
        format!("{SECRET}\n"),
        "the write changed the other link's bytes"
    );
}

/// Proves a hard-linked pin is refused before it is read: the model never sees its bytes.
#[tokio::test]
async fn a_hard_linked_pin_is_refused() {
    let mut c = case(vec![Reply::Text("Nothing pinned.".into())], "").await;
    let params = json!({"sessionId": c.session, "prompt": "Summarise the pinned file.", "pins": ["notes.txt"]});
    let (response, seen) = c
        .client
        .call_with("turn/start", params, |_| Answer::Ignore)
        .await
        .unwrap();
    assert!(response.error.is_none(), "{:?}", response.error);
    let said: Vec<String> = seen
        .iter()
        .filter_map(|m| m.params.as_ref().map(Value::to_string))
        .collect();
    assert!(
        said.iter()
            .any(|s| s.contains("pin notes.txt refused: it is a hard link")),
        "{said:?}"
    );
    assert!(!c.model_saw_secret());
}

/// Proves `talos run` shows the approval's right-to-left override as `\u{202e}` and the
/// daemon's warning line, and never writes the character raw to the terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_run_shows_the_override_escaped() {
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            write_call("check.py", TROJAN),
            Reply::Text("Written.".into()),
        ]),
    )
    .await;
    let home = tempfile::Builder::new()
        .prefix("tv")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        talos_tests::harness::offline(&TestDaemon::config_for(&llama.url, true)),
    )
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (h, w) = (home.path().to_path_buf(), ws.path().display().to_string());
    let run = tokio::task::spawn_blocking(move || {
        let run = talos(
            &h,
            &[
                "run",
                "--workspace",
                &w,
                "Create check.py with an admin check.",
            ],
            "n\n",
        );
        talos(&h, &["stop"], "");
        run
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(
        stderr.contains("if admin: # \\u{202e} } \\u{2066} return True"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("warning: this change contains a right-to-left override (U+202E) at line 2"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{202E}') && !stderr.contains('\u{2066}'),
        "{stderr}"
    );
    assert!(!ws.path().join("check.py").exists(), "denied at the prompt");
}

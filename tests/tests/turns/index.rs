//! Issue 16 end to end: a workspace question answered through `talos.search` then
//! `talos.read_file`; protected content never in search results (tool or `index/search`);
//! pdf, docx and xlsx read as text; a malformed pdf and a zip-bomb-shaped docx ending in the
//! capability note with nothing written; `index/status` and `index/rebuild`.

use serde_json::json;
use talos_protocol::{
    CompletionStatus, IndexProgressParams, IndexRebuildResult, IndexSearchResult, IndexStatusResult,
};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, agent_turn};
use talosd::documents::samples;

fn search_call(query: &str) -> Reply {
    Reply::ToolCalls(vec![(
        "talos.search".into(),
        json!({ "query": query }).to_string(),
    )])
}

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::write(
        ws.path().join("src/approval.rs"),
        "//! Approvals.\n\n/// How long an approval waits.\npub const APPROVAL_TIMEOUT_SECS: u64 = 120;\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("src/other.rs"), "fn unrelated() {}\n").unwrap();
    std::fs::write(
        ws.path().join(".env"),
        "APPROVAL_TIMEOUT_TOKEN=hunter2-secret\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("secrets.pem"),
        "approval timeout hunter2-secret\n",
    )
    .unwrap();
    ws
}

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Proves a workspace question is answered by searching, then reading the file the search
/// ranked first; the protected files' text never reaches the model.
#[tokio::test]
async fn a_question_is_answered_through_search_then_read() {
    let ws = workspace();
    let before = names(ws.path());
    let model = scripted(vec![
        search_call("approval timeout"),
        read_call("src/approval.rs"),
        Reply::Text(
            "The approval timeout is APPROVAL_TIMEOUT_SECS in src/approval.rs: 120 seconds.".into(),
        ),
    ]);
    let run = agent_turn(ws.path(), model, "Where is the approval timeout set?").await;
    let sent = serde_json::to_string(&run.requests).unwrap();
    assert!(
        sent.contains("src/approval.rs:1-4"),
        "the search ranked the file: {sent}"
    );
    assert!(
        sent.contains("4 | pub const APPROVAL_TIMEOUT_SECS"),
        "then it was read: {sent}"
    );
    assert!(
        !sent.contains("hunter2"),
        "protected text never sent: {sent}"
    );
    assert!(sent.contains("talos.search"), "the tool is offered: {sent}");
    assert_eq!(
        run.outcome.status,
        CompletionStatus::Complete,
        "{:?}",
        run.outcome
    );
    let tools: Vec<&str> = run
        .trace
        .tool_calls
        .iter()
        .filter_map(|c| c.tool.as_deref())
        .collect();
    assert_eq!(
        tools,
        ["talos.search", "talos.read_file"],
        "{:?}",
        run.trace
    );
    assert_eq!(
        names(ws.path()),
        before,
        "the index is not kept in the workspace"
    );
}

/// Proves `index/search` (what `talos search` prints) never returns a protected file, and
/// `index/status` and `index/rebuild` report the index.
#[tokio::test]
async fn index_methods_report_and_never_show_protected_files() {
    let ws = workspace();
    let llama = FakeLlama::start(true, scripted(vec![Reply::Text("unused".into())])).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let root = root.to_str().unwrap();
    let status: IndexStatusResult = client
        .request("index/status", json!({ "workspace": root }))
        .await;
    assert_eq!(status.state, "absent");
    let found: IndexSearchResult = client
        .request(
            "index/search",
            json!({ "workspace": root, "query": "hunter2 approval timeout" }),
        )
        .await;
    let paths: Vec<&str> = found.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["src/approval.rs"], "{found:?}");
    assert!(!serde_json::to_string(&found).unwrap().contains("hunter2"));
    let (response, seen) = client
        .call_with("index/rebuild", json!({ "workspace": root }), |_| {
            talos_tests::harness::Answer::Ignore
        })
        .await
        .unwrap();
    let progress: Vec<IndexProgressParams> = seen
        .iter()
        .filter(|m| m.method.as_deref() == Some("index/progress"))
        .map(|m| serde_json::from_value(m.params.clone().unwrap()).unwrap())
        .collect();
    assert_eq!(
        progress.last(),
        Some(&IndexProgressParams {
            workspace: root.to_string(),
            done: 3,
            total: 3
        }),
        "{progress:?}"
    );
    let rebuilt: IndexRebuildResult = serde_json::from_value(response.result.unwrap()).unwrap();
    assert_eq!(rebuilt.indexed, 2, "{rebuilt:?}");
    assert_eq!(rebuilt.status.state, "ready");
    assert_eq!((rebuilt.status.files, rebuilt.status.chunks), (2, 2));
    assert!(rebuilt.status.bytes > 0 && rebuilt.status.last_update_ms.is_some());
    daemon.stop().await;
}

/// Proves pdf, docx and xlsx are read as text with their markers.
#[tokio::test]
async fn documents_are_read_as_text() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("report.pdf"),
        samples::pdf(&["Quarterly revenue grew"]),
    )
    .unwrap();
    std::fs::write(
        ws.path().join("proposal.docx"),
        samples::docx(&["Proposal: adopt tantivy"]),
    )
    .unwrap();
    std::fs::write(
        ws.path().join("budget.xlsx"),
        samples::xlsx("Budget", &[&["Item", "Cost"], &["Servers", "1200"]]),
    )
    .unwrap();
    let model = scripted(vec![
        read_call("report.pdf"),
        read_call("proposal.docx"),
        read_call("budget.xlsx"),
        Reply::Text("Revenue grew; the proposal adopts tantivy; servers cost 1200.".into()),
    ]);
    let run = agent_turn(
        ws.path(),
        model,
        "Summarize report.pdf, proposal.docx and budget.xlsx",
    )
    .await;
    let sent = serde_json::to_string(&run.requests).unwrap();
    assert!(sent.contains("[page 1]"), "{sent}");
    assert!(sent.contains("Quarterly revenue grew"), "{sent}");
    assert!(sent.contains("Proposal: adopt tantivy"), "{sent}");
    assert!(sent.contains("[sheet Budget]"), "{sent}");
    assert!(sent.contains("Servers\\t1200"), "{sent}");
    assert!(
        !run.outcome.final_answer.contains("Capability note"),
        "{:?}",
        run.outcome
    );
}

/// Proves a malformed pdf and a zip-bomb-shaped docx each end in the capability note (from
/// the extractor child, within its limits), never in invented text, and nothing is written.
#[tokio::test]
async fn hostile_documents_end_in_the_capability_note() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("bad.pdf"), samples::malformed_pdf()).unwrap();
    std::fs::write(ws.path().join("bomb.docx"), samples::zip_bomb_docx(200)).unwrap();
    let before = names(ws.path());
    let model = scripted(vec![
        read_call("bad.pdf"),
        read_call("bomb.docx"),
        Reply::Text("Neither document could be read.".into()),
    ]);
    let run = agent_turn(ws.path(), model, "Summarize bad.pdf and bomb.docx").await;
    let sent = serde_json::to_string(&run.requests).unwrap();
    assert!(
        sent.contains("bad.pdf is a binary document; Talos could not extract its text"),
        "{sent}"
    );
    // Once every named document was read and none could be extracted, the turn ends with the
    // document note, without sending the last result to the model again (issue 27).
    let answer = &run.outcome.final_answer;
    assert!(
        answer.contains("cannot extract the text of bad.pdf, bomb.docx"),
        "{answer}"
    );
    assert_eq!(
        run.outcome.classification,
        talos_protocol::Classification::AdvisoryOnly,
        "{answer}"
    );
    assert_eq!(names(ws.path()), before, "nothing written");
}

/// Hostile: a link inside the workspace to a file outside is neither searched nor read.
#[tokio::test]
async fn a_link_out_of_the_workspace_is_never_searched() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("notes.txt"),
        "approval timeout outsider-text\n",
    )
    .unwrap();
    let ws = workspace();
    std::os::unix::fs::symlink(
        outside.path().join("notes.txt"),
        ws.path().join("notes.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("outdir")).unwrap();
    let model = scripted(vec![
        search_call("approval timeout outsider"),
        Reply::Text("Found it in src/approval.rs.".into()),
    ]);
    let run = agent_turn(ws.path(), model, "Where is the approval timeout set?").await;
    let sent = serde_json::to_string(&run.requests).unwrap();
    assert!(sent.contains("src/approval.rs"), "{sent}");
    assert!(!sent.contains("outsider-text"), "{sent}");
    assert!(!sent.contains("notes.txt:"), "{sent}");
}

/// Proves the runtime retrieves first on a workspace question: the first model request
/// already offers the ranked file (not its protected neighbours) for reading, and the answer
/// rests on the read that follows.
#[tokio::test]
async fn the_runtime_offers_the_top_files_before_the_first_request() {
    let ws = workspace();
    let model = scripted(vec![
        read_call("src/approval.rs"),
        Reply::Text("APPROVAL_TIMEOUT_SECS in src/approval.rs sets it to 120 seconds.".into()),
    ]);
    let run = agent_turn(ws.path(), model, "Where is the approval timeout set?").await;
    let first = serde_json::to_string(&run.requests[0]).unwrap();
    assert!(
        first.contains("Talos searched the workspace index"),
        "{first}"
    );
    assert!(first.contains("- src/approval.rs (lines 1-4"), "{first}");
    assert!(
        !first.contains("hunter2") && !first.contains(".env"),
        "{first}"
    );
    assert_eq!(
        run.outcome.status,
        CompletionStatus::Complete,
        "{:?}",
        run.outcome
    );
    let tools: Vec<&str> = run
        .trace
        .tool_calls
        .iter()
        .filter_map(|c| c.tool.as_deref())
        .collect();
    assert_eq!(tools, ["talos.read_file"], "{:?}", run.trace);
}

/// Proves `talos search` prints ranked hits without the model, and `talos index` reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_search_and_talos_index_print_without_the_model() {
    const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
    let ws = workspace();
    let llama = FakeLlama::start(true, scripted(vec![Reply::Text("unused".into())])).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let home = daemon.home.path().to_path_buf();
    let root = ws.path().to_path_buf();
    let run = move |args: Vec<&'static str>| {
        let home = home.clone();
        let root = root.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                std::process::Command::new(TALOS)
                    .args(&args)
                    .arg("--workspace")
                    .arg(&root)
                    .env("TALOS_HOME", &home)
                    .env("NO_COLOR", "1")
                    .stdin(std::process::Stdio::null())
                    .output()
                    .unwrap()
            })
            .await
            .unwrap()
        }
    };
    let out = run(vec!["search", "approval timeout hunter2"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout.starts_with("1. src/approval.rs:1-4 (line 4)\n   pub const APPROVAL_TIMEOUT_SECS"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("hunter2") && !stdout.contains("secrets.pem"),
        "{stdout}"
    );
    let out = run(vec!["index", "status"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(": ready\n  files: 2\n  chunks: 2\n"),
        "{stdout}"
    );
    let out = run(vec!["index", "rebuild"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Indexed 2 file(s), skipped 1."),
        "{stdout}"
    );
    assert!(llama.requests().is_empty(), "the model is never asked");
    daemon.stop().await;
}

/// The `tool_progress` messages of the index in a turn's messages.
fn indexing(seen: &[talos_protocol::Message]) -> Vec<String> {
    talos_tests::harness::events(seen)
        .into_iter()
        .filter_map(|e| match e.event {
            talos_protocol::event::TurnEvent::ToolProgress {
                call_id, message, ..
            } if call_id == "index" => Some(message),
            _ => None,
        })
        .collect()
}

/// Proves the first turn that builds a large workspace's index reports its progress as turn
/// events (each quarter once, ending at every file), and a later turn, which only updates it,
/// reports none.
#[tokio::test]
async fn the_first_build_in_a_turn_reports_its_progress() {
    let ws = workspace();
    for n in 0..150 {
        std::fs::write(
            ws.path().join(format!("src/mod{n}.rs")),
            format!("pub fn f{n}() {{}}\n"),
        )
        .unwrap();
    }
    let model = scripted(vec![
        read_call("src/approval.rs"),
        Reply::Text("APPROVAL_TIMEOUT_SECS in src/approval.rs sets it to 120 seconds.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let question = "Where is the approval timeout set?";
    let (_, first) = client
        .turn_with(
            &session,
            question,
            talos_tests::harness::approve_all("approve"),
        )
        .await;
    let (_, second) = client
        .turn_with(
            &session,
            question,
            talos_tests::harness::approve_all("approve"),
        )
        .await;
    daemon.stop().await;
    let reported = indexing(&first);
    assert!(
        reported.len() >= 2 && reported[0].starts_with("indexing the workspace: 0 of "),
        "{reported:?}"
    );
    let last = reported.last().unwrap();
    let total = last
        .rsplit(" of ")
        .next()
        .unwrap()
        .trim_end_matches(" files");
    assert_eq!(
        last,
        &format!("indexing the workspace: {total} of {total} files")
    );
    assert!(indexing(&second).is_empty(), "{:?}", indexing(&second));
}

//! Issue 26 end to end, besides ignore files: a document whose extraction fails is extracted
//! once, not on every `index/search`, until its bytes change; and `talos search` shows a file
//! name holding a newline on one line, escaped, so the name cannot forge a result line.
//!
//! The extractor here is a script that counts its runs and fails; it is set before any daemon
//! of this test binary starts (the first program set is the one used), which is why these
//! tests live apart from the other document tests.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;
use talos_protocol::IndexSearchResult;
use talos_tests::harness::{Client, TestDaemon};

const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

/// The counting extractor: a script that appends a line to its count file per run, reads its
/// input and fails as an unreadable document does. Set once for this process, which is why the
/// test that counts its runs has a process of its own.
fn counting_extractor() -> &'static Path {
    static COUNT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, count) = COUNT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("runs");
        let script = dir.path().join("extract");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n/bin/cat > /dev/null\necho run >> '{}'\nexit 1\n",
                count.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700)).unwrap();
        talosd::documents::use_program(script);
        (dir, count)
    });
    count
}

fn runs(count: &Path) -> usize {
    std::fs::read_to_string(count).map_or(0, |text| text.lines().count())
}

/// A daemon without a model (these tests ask none).
async fn daemon() -> TestDaemon {
    TestDaemon::start("").await
}

async fn search(client: &mut Client, root: &Path, query: &str) -> IndexSearchResult {
    client
        .request("index/search", json!({ "workspace": root, "query": query }))
        .await
}

/// Proves a pdf whose extraction fails is extracted once over three searches, and once more
/// after its bytes change; a text file beside it is found every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_document_is_extracted_once_until_it_changes() {
    // The extractor is set once per process: this test counts its runs alone in a process.
    if !talos_tests::process::in_own_process(
        module_path!(),
        "a_failed_document_is_extracted_once_until_it_changes",
    ) {
        return;
    }
    let count = counting_extractor();
    let daemon = daemon().await;
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::write(root.join("slow.pdf"), b"%PDF-1.4 broken needle").unwrap();
    std::fs::write(root.join("notes.txt"), "needle\n").unwrap();
    let mut client = daemon.client().await;
    for _ in 0..3 {
        let found = search(&mut client, &root, "needle").await;
        let paths: Vec<&str> = found.hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["notes.txt"]);
    }
    assert_eq!(runs(count), 1, "extracted once, not once per search");
    std::fs::write(root.join("slow.pdf"), b"%PDF-1.4 changed, still broken").unwrap();
    search(&mut client, &root, "needle").await;
    search(&mut client, &root, "needle").await;
    assert_eq!(runs(count), 2, "changed bytes are tried once more");
    daemon.stop().await;
}

/// Proves `talos search` prints a hit whose file name holds a newline as its two lines, the
/// newline escaped: nothing in the name starts a line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_search_escapes_a_newline_in_a_file_name() {
    let daemon = daemon().await;
    let ws = tempfile::tempdir().unwrap();
    let forged = "a.txt\n2. forged.txt:1-1 (line 1)";
    std::fs::write(ws.path().join(forged), "needle\n").unwrap();
    let home = daemon.home.path().to_path_buf();
    let dir = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(TALOS)
            .args(["search", "needle"])
            .current_dir(dir)
            .env("TALOS_HOME", home)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "1. a.txt\\u{a}2. forged.txt:1-1 (line 1):1-1 (line 1)",
            "   needle"
        ]
    );
    daemon.stop().await;
}

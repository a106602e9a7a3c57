//! Idle sessions release their workspace handles (issue 26, defect 4): after
//! `Daemon::release_idle` (run every minute for sessions unused for ten), the daemon holds no
//! descriptor on the session's workspace; the next turn opens it again and runs; a folder put
//! in the workspace's place meanwhile is refused, never used.

use std::path::Path;

use serde_json::json;
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{Answer, TestDaemon, timeout_workspace};

/// This process's descriptors open on `dir` (the daemon runs in the test's process).
fn descriptors_on(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == dir))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_releases_its_handle_and_reopens_only_the_same_folder() {
    let llama =
        FakeLlama::start(true, scripted(vec![Reply::Text("It sets TIMEOUT.".into())])).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let ws = timeout_workspace();
    let root = ws.path().canonicalize().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(&root, "ask").await;
    client
        .turn(&session, "What does settings.py configure?", "deny")
        .await;
    assert_eq!(
        descriptors_on(&root),
        1,
        "one handle while the session is open"
    );

    assert_eq!(daemon.daemon.release_idle(0), 1);
    assert_eq!(descriptors_on(&root), 0, "released while idle");
    let outcome = client
        .turn(&session, "What does settings.py configure?", "deny")
        .await;
    assert!(outcome.final_answer.contains("TIMEOUT"), "{outcome:?}");
    assert_eq!(descriptors_on(&root), 1, "opened again by the turn");

    // A folder put in the workspace's place while the handle is released is refused.
    assert_eq!(daemon.daemon.release_idle(0), 1);
    let moved = root.with_extension("moved");
    std::fs::rename(&root, &moved).unwrap();
    std::fs::create_dir(&root).unwrap();
    let (response, _) = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": "What does settings.py configure?"}),
            |_| Answer::Ignore,
        )
        .await
        .unwrap();
    let error = response.error.expect("refused");
    assert!(
        error
            .message
            .contains("the folder was replaced since the session opened it"),
        "{error:?}"
    );
    std::fs::remove_dir(&root).unwrap();
    std::fs::rename(&moved, &root).unwrap();
    let outcome = client
        .turn(&session, "What does settings.py configure?", "deny")
        .await;
    assert!(outcome.final_answer.contains("TIMEOUT"), "{outcome:?}");
}

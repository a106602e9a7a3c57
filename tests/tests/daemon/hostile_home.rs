//! Things planted in the Talos home's own stores (issue 26, defect 13): a FIFO where a
//! checkpoint manifest should be does not hang `checkpoint/list`; a checkpoint object replaced
//! by a link to `/dev/zero` is refused as damaged, never read; an `objects` folder replaced by
//! a link out of the home stops the next change (no checkpoint, no write) and nothing is
//! written outside; a traces folder linked out of the home gets no trace.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use talos_tests::fake_llama::{FakeLlama, Reply, scripted};
use talos_tests::harness::{Answer, Client, TestDaemon, timeout_workspace};

const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";

fn edit_model() -> talos_tests::fake_llama::Script {
    scripted(vec![
        Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                .into(),
        )]),
        Reply::Text("Done.".into()),
    ])
}

/// The one workspace folder under `checkpoints/`.
fn checkpoint_dir(home: &Path) -> PathBuf {
    std::fs::read_dir(home.join("checkpoints"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("a workspace's checkpoints")
}

async fn edit(client: &mut Client, session: &str) -> talos_protocol::TurnOutcome {
    client.turn(session, EDIT, "approve").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_fifos_devices_and_links_in_the_home_are_never_followed() {
    let llama = FakeLlama::start(true, edit_model()).await;
    let daemon = TestDaemon::start(&TestDaemon::config_for(&llama.url, true)).await;
    let home = daemon.home.path().to_path_buf();
    let ws = timeout_workspace();
    let mut client = daemon.client().await;
    client.read_timeout = Duration::from_secs(10);
    let session = client.open_session(ws.path(), "agent").await;
    let first = edit(&mut client, &session).await;
    assert_eq!(
        first.classification,
        talos_protocol::Classification::CompletedVerified
    );
    let store = checkpoint_dir(&home);

    // A FIFO where a manifest should be: listed past, never waited on.
    let fifo = store.join("manifests/chk-00000000000000000000000000000000.json");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        0o600.into(),
        0,
    )
    .unwrap();
    let listed: Value = client
        .call("checkpoint/list", json!({"workspace": ws.path()}))
        .await;
    assert_eq!(
        listed["checkpoints"].as_array().unwrap().len(),
        1,
        "{listed}"
    );

    // The object replaced by a link to /dev/zero: refused as damaged at once.
    let checkpoint = listed["checkpoints"][0]["checkpointId"]
        .as_str()
        .unwrap()
        .to_string();
    let object = std::fs::read_dir(store.join("objects"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    std::fs::remove_file(&object).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &object).unwrap();
    let (response, _) = client
        .call_with(
            "checkpoint/restore",
            json!({"checkpointId": checkpoint, "sessionId": session}),
            |m| match m.method.as_deref() {
                Some("approval/request") => Answer::Result(json!({"decision": "approve"})),
                _ => Answer::Ignore,
            },
        )
        .await
        .unwrap();
    let said = format!("{:?}{:?}", response.result, response.error);
    assert!(said.contains("missing or damaged"), "{said}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 60\nRETRIES = 3\n",
        "nothing restored from a device"
    );

    // The objects folder replaced by a link out of the home: no checkpoint, no write.
    let outside = tempfile::tempdir().unwrap();
    std::fs::remove_dir_all(store.join("objects")).unwrap();
    std::os::unix::fs::symlink(outside.path(), store.join("objects")).unwrap();
    std::fs::write(ws.path().join("settings.py"), "TIMEOUT = 30\nRETRIES = 3\n").unwrap();
    let stopped = edit(&mut client, &session).await;
    assert_ne!(
        stopped.classification,
        talos_protocol::Classification::CompletedVerified,
        "{stopped:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n",
        "no checkpoint, no write"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written outside"
    );

    // The session's traces folder linked out of the home: the trace is not written there.
    let traces_outside = tempfile::tempdir().unwrap();
    let session_traces = home.join("traces").join(&session);
    std::fs::remove_dir_all(&session_traces).unwrap();
    std::os::unix::fs::symlink(traces_outside.path(), &session_traces).unwrap();
    let question = client
        .turn(&session, "What does settings.py configure?", "deny")
        .await;
    assert!(question.trace_path.is_none(), "{question:?}");
    assert_eq!(std::fs::read_dir(traces_outside.path()).unwrap().count(), 0);
}

//! The real `talos` binary on checkpoints: `talos checkpoints` lists the turn's checkpoint,
//! `talos undo` shows the restore's approval in the terminal and restores on `y`,
//! `talos checkpoint show` diffs a checkpoint against the disk, and `talos restore` denied at
//! the prompt changes nothing and exits 1.

use serde_json::Value;
use talos_tests::cli::{talos, text};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, timeout_workspace};

/// Proves the CLI round trip: run an edit, list its checkpoint, undo it with `y`, see the
/// safety checkpoint, and deny a restore of it (nothing changes, exit 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn talos_checkpoints_undo_show_and_a_denied_restore() {
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            read_call("settings.py"),
            Reply::ToolCalls(vec![(
                "talos.edit_file".into(),
                r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                    .into(),
            )]),
            Reply::Text("TIMEOUT is now 60.".into()),
        ]),
    )
    .await;
    let home = tempfile::Builder::new()
        .prefix("tr")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(
        home.path().join("config.yaml"),
        talos_tests::harness::offline(&TestDaemon::config_for(&llama.url, true)),
    )
    .unwrap();
    let ws = timeout_workspace();
    let ws_arg = ws.path().display().to_string();
    let h = home.path().to_path_buf();
    let w = ws_arg.clone();
    let settings = ws.path().join("settings.py");
    let (run, listed, undo, undone) = tokio::task::spawn_blocking(move || {
        let run = talos(
            &h,
            &[
                "run",
                "--workspace",
                &w,
                "In settings.py, change TIMEOUT from 30 to 60.",
            ],
            "y\n",
        );
        let listed = talos(&h, &["checkpoints", "--workspace", &w], "");
        let undo = talos(&h, &["undo", "--workspace", &w], "y\n");
        let undone = std::fs::read_to_string(&settings).unwrap();
        (run, listed, undo, undone)
    })
    .await
    .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let list = text(&listed.stdout);
    assert!(
        list.contains("talos.edit_file") && list.contains("settings.py"),
        "{list}"
    );
    let undo_err = text(&undo.stderr);
    assert_eq!(undo.status.code(), Some(0), "{undo_err}");
    assert!(
        undo_err.contains("approval required: restore turn"),
        "{undo_err}"
    );
    assert!(undo_err.contains("restored: settings.py"), "{undo_err}");
    assert_eq!(undone, "TIMEOUT = 30\nRETRIES = 3\n");

    let h = home.path().to_path_buf();
    let w = ws_arg.clone();
    let (listed, shown, denied) = tokio::task::spawn_blocking(move || {
        let listed = talos(&h, &["checkpoints", "--workspace", &w, "--json"], "");
        let json: Value = serde_json::from_slice(&listed.stdout).unwrap();
        let safety = json["checkpoints"][0]["checkpointId"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(json["checkpoints"][0]["trigger"], "talos.restore");
        let shown = talos(&h, &["checkpoint", "show", &safety], "");
        let denied = talos(&h, &["restore", &safety], "n\n");
        talos(&h, &["stop"], "");
        (listed, shown, denied)
    })
    .await
    .unwrap();
    assert_eq!(listed.status.code(), Some(0));
    let show = text(&shown.stdout);
    assert!(
        show.contains("-TIMEOUT = 30") && show.contains("+TIMEOUT = 60"),
        "{show}"
    );
    assert_eq!(denied.status.code(), Some(1), "{}", text(&denied.stderr));
    assert!(text(&denied.stdout).contains("restore denied; nothing changed"));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n"
    );
}

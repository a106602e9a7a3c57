//! The interactive `talos` (no subcommand) driven through a real pseudo-terminal: a request,
//! its approval answered `y` inline, `/checkpoints`, `/undo` approved and the file restored,
//! `/trace`, slash commands (`/help`, a typo, `/mode`), Ctrl-C at the prompt clearing the line,
//! Ctrl-C during a turn and at an approval cancelling it, the history file, and Ctrl-D leaving
//! with exit code 0. The screen and the disk are asserted.

use std::path::Path;
use std::time::Duration;

use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{TestDaemon, offline, timeout_workspace};
use talos_tests::pty::Terminal;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");
const WAIT: Duration = Duration::from_secs(30);

fn home_with(config: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new()
        .prefix("ti")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::write(home.path().join("config.yaml"), offline(config)).unwrap();
    home
}

/// `talos --workspace WS` on a pty, with its own home, daemon and history file.
fn interactive(home: &Path, workspace: &Path, extra: &[&str]) -> Terminal {
    let history = home.join("history");
    let mut args = vec!["--workspace", workspace.to_str().unwrap()];
    args.extend_from_slice(extra);
    Terminal::spawn(
        Path::new(TALOS),
        &args,
        &[
            ("TALOS_HOME", home),
            ("TALOS_DAEMON", Path::new(TALOSD)),
            ("TALOS_HISTORY", &history),
        ],
    )
}

fn stop(home: &Path) {
    let _ = std::process::Command::new(TALOS)
        .arg("stop")
        .env("TALOS_HOME", home)
        .output();
}

/// Proves a conversation on a terminal: the request streams, its approval is asked inline and
/// answered `y`, the file changes, slash commands answer (a typo names the closest command),
/// `/mode` changes the prompt, Ctrl-C at the prompt clears the line, the request is in the
/// history file, and Ctrl-D leaves with exit code 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_on_a_terminal() {
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            read_call("settings.py"),
            Reply::ToolCalls(vec![(
                "talos.edit_file".into(),
                r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                    .into(),
            )]),
            Reply::Text("unused: the runtime writes the summary".into()),
        ]),
    )
    .await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let (screen, code) = tokio::task::spawn_blocking(move || {
        let mut t = interactive(&home_path, &ws_path, &[]);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("In settings.py, change TIMEOUT from 30 to 60.\r");
        t.expect("approval required: write operation: talos.edit_file", WAIT);
        t.expect("-TIMEOUT = 30", WAIT);
        t.expect("Allow? [y=yes, a=yes for session, N=no] ", WAIT);
        t.type_keys("y\r");
        t.expect("settings.py was changed and read back as approved.", WAIT);
        t.expect("COMPLETE", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("/checkpoints\r");
        t.expect("settings.py", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("/undo\r");
        t.expect("approval required", WAIT);
        t.expect("restored: settings.py", WAIT);
        t.expect("Allow? [y=yes, N=no] ", WAIT);
        t.type_keys("y\r");
        t.expect("talos (agent)> ", WAIT);
        let restored = std::fs::read_to_string(ws_path.join("settings.py")).unwrap();
        assert_eq!(
            restored, "TIMEOUT = 30\nRETRIES = 3\n",
            "/undo restored the file"
        );
        t.type_keys("/trace\r");
        t.expect("In settings.py, change TIMEOUT", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("/undp\r");
        t.expect("unknown command /undp; did you mean /undo?", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("/help\r");
        t.expect("/checkpoints", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("/mode ask\r");
        t.expect("talos (ask)> ", WAIT);
        t.type_keys("half a line\x03");
        t.expect("talos (ask)> ", WAIT);
        t.type_keys("\x04");
        let screen = t.screen();
        (screen, t.wait(WAIT))
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{screen}");
    assert!(
        screen.contains("Allow? [y=yes, a=yes for session, N=no]"),
        "the change was approved inline"
    );
    let history = std::fs::read_to_string(home.path().join("history")).unwrap();
    assert!(
        history.contains("In settings.py, change TIMEOUT from 30 to 60."),
        "{history}"
    );
    assert!(
        !history.contains("half a line"),
        "a cleared line is not kept"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.path().join("history"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "only its owner reads the history");
    stop(home.path());
}

/// Proves Ctrl-C while a turn runs (the model's stream hangs) cancels that turn over
/// `turn/cancel`: the outcome is CANCELLED, the prompt comes back in the same session, and the
/// next request runs; Ctrl-C at an approval question denies it and cancels the turn, and
/// nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_the_running_turn_and_the_session_stays() {
    // Counts the requests that hang, so the test presses Ctrl-C only once the turn is waiting
    // on the model (no sleep to guess when).
    let hanging = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = hanging.clone();
    let llama = FakeLlama::start(
        true,
        std::sync::Arc::new(move |request: &serde_json::Value| {
            // The turn's own request: earlier turns come before it in the conversation.
            if talos_tests::fake_llama::last_user(request).contains("wait forever") {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Reply::Hang
            } else if talos_tests::fake_llama::tool_results(request) == 0 {
                read_call("settings.py")
            } else if talos_tests::fake_llama::tool_results(request) == 1 {
                Reply::ToolCalls(vec![(
                    "talos.edit_file".into(),
                    r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                        .into(),
                )])
            } else {
                Reply::Text("unused".into())
            }
        }),
    )
    .await;
    let home = home_with(&TestDaemon::config_for(&llama.url, true));
    let ws = timeout_workspace();
    let (home_path, ws_path) = (home.path().to_path_buf(), ws.path().to_path_buf());
    let (screen, code) = tokio::task::spawn_blocking(move || {
        let mut t = interactive(&home_path, &ws_path, &[]);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("Explain settings.py and wait forever\r");
        let deadline = std::time::Instant::now() + WAIT;
        while hanging.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the model was never asked"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        t.type_keys("\x03");
        t.expect("CANCELLED", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("In settings.py, change TIMEOUT from 30 to 60.\r");
        t.expect("Allow? [y=yes, a=yes for session, N=no] ", WAIT);
        t.type_keys("\x03");
        t.expect("CANCELLED", WAIT);
        t.expect("talos (agent)> ", WAIT);
        t.type_keys("/exit\r");
        let screen = t.screen();
        (screen, t.wait(WAIT))
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("settings.py")).unwrap(),
        "TIMEOUT = 30\nRETRIES = 3\n",
        "a cancelled approval writes nothing"
    );
    stop(home.path());
}

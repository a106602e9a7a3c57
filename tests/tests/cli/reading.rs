//! Issue 34, item 2, through the real binaries: `talos run` asks which reading an uncertain
//! request means on a terminal, like an approval (`Change config.py? [c=change, q=only answer a
//! question]`), and "c" makes the change; end of input there is no choice; `talos run --json`,
//! and `talos run` without a terminal, never ask and never guess: the turn ends
//! CONTRACT_AMBIGUOUS (exit 1) and the model is never called.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use talos_tests::cli::{talos, text};
use talos_tests::fake_llama::{FakeLlama, Reply, call, scripted};
use talos_tests::harness::{TestDaemon, offline};
use talos_tests::pty::Terminal;

const TALOSD: &str = env!("CARGO_BIN_EXE_e2e-talosd");
const TALOS: &str = env!("CARGO_BIN_EXE_e2e-talos");

/// Requests with a change verb and no imperative or question shape (as in
/// `tests/turns/reading.rs`): the first the daemon finds uncertain is the one used.
const HEDGED: [&str; 3] = [
    "I think DEBUG in config.py should change",
    "The DEBUG setting in config.py needs a change",
    "Maybe change DEBUG in config.py",
];

const CONFIG: &str = "DEBUG = True\n";

struct Setup {
    llama: FakeLlama,
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
}

/// A home whose fake model turns DEBUG off in config.py, and a workspace holding it.
async fn setup() -> Setup {
    let edit = call(
        true,
        "talos.edit_file",
        json!({"path": "config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}),
    );
    let llama = FakeLlama::start(true, scripted(vec![edit, Reply::Text("Done.".into())])).await;
    let home = tempfile::Builder::new()
        .prefix("tr")
        .tempdir_in("/tmp")
        .unwrap();
    let config = TestDaemon::config_reading_first(&llama.url, true);
    std::fs::write(home.path().join("config.yaml"), offline(&config)).unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("config.py"), CONFIG).unwrap();
    Setup { llama, home, ws }
}

/// `talos run --json` of `request`: its exit code and its outcome line.
async fn run_json(home: PathBuf, ws: &Path, request: &str) -> (Option<i32>, Value, String) {
    let args: Vec<String> = [
        "run",
        "--json",
        "--workspace",
        ws.to_str().unwrap(),
        request,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = talos_tests::cli::talos_async(home, args, "c\n").await;
    let stdout = text(&out.stdout);
    let outcome = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("outcome").cloned())
        .unwrap_or(Value::Null);
    (out.status.code(), outcome, stdout)
}

/// Proves `talos run --json` (and `talos run` without a terminal) is never asked: an uncertain
/// request ends CONTRACT_AMBIGUOUS with both readings named, exit 1, the model never called and
/// nothing changed, whatever stdin holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_an_uncertain_request_is_contract_ambiguous() {
    let s = setup().await;
    let mut found = None;
    for request in HEDGED {
        let (code, outcome, stdout) =
            run_json(s.home.path().to_path_buf(), s.ws.path(), request).await;
        assert!(!stdout.contains("contractChoose"), "{stdout}");
        if outcome["classification"] == "CONTRACT_AMBIGUOUS" {
            assert_eq!(code, Some(1), "{stdout}");
            assert_eq!(outcome["status"], "BLOCKED");
            let answer = outcome["finalAnswer"].as_str().unwrap();
            assert!(
                answer.contains(
                    "could mean: change config.py, or only answer a question about it; say which"
                ),
                "{answer}"
            );
            found = Some(request);
            break;
        }
    }
    let request = found.expect("an uncertain request ends CONTRACT_AMBIGUOUS under --json");
    // Human output without a terminal: the `c` on stdin is not taken as a choice.
    let out = talos(
        s.home.path(),
        &["run", "--workspace", s.ws.path().to_str().unwrap(), request],
        "c\ny\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("CONTRACT_AMBIGUOUS"),
        "{}",
        text(&out.stderr)
    );
    assert!(s.llama.requests().is_empty(), "the model was called");
    assert_eq!(
        std::fs::read_to_string(s.ws.path().join("config.py")).unwrap(),
        CONFIG
    );
    let _ = talos(s.home.path(), &["stop"], "");
}

/// Proves `talos run` on a terminal asks like an approval and "c" makes the change (then the
/// edit's own approval); Ctrl-D at the question is no choice: CONTRACT_AMBIGUOUS, the model
/// not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_the_person_chooses() {
    let s = setup().await;
    // The request the daemon finds uncertain, found without a terminal (no model call).
    let mut request = None;
    for candidate in HEDGED {
        let (_, outcome, _) = run_json(s.home.path().to_path_buf(), s.ws.path(), candidate).await;
        if outcome["classification"] == "CONTRACT_AMBIGUOUS" {
            request = Some(candidate);
            break;
        }
    }
    let request = request.expect("an uncertain request");
    let (home, ws) = (s.home.path().to_path_buf(), s.ws.path().to_path_buf());
    let screens = tokio::task::spawn_blocking(move || {
        let spawn = || {
            Terminal::spawn(
                Path::new(TALOS),
                &["run", "--workspace", ws.to_str().unwrap(), request],
                &[("TALOS_HOME", &home), ("TALOS_DAEMON", Path::new(TALOSD))],
            )
        };
        let wait = Duration::from_secs(30);
        let mut t = spawn();
        t.expect(
            "Change config.py? [c=change, q=only answer a question]",
            wait,
        );
        t.type_keys("\x04");
        t.expect("CONTRACT_AMBIGUOUS", wait);
        let declined = t.screen();
        let _ = t.wait(wait);
        let mut t = spawn();
        t.expect(
            "Change config.py? [c=change, q=only answer a question]",
            wait,
        );
        t.type_keys("c\r");
        t.expect("Allow?", wait);
        t.type_keys("y\r");
        t.expect("trace", wait);
        let changed = t.screen();
        let code = t.wait(wait);
        (declined, changed, code)
    })
    .await
    .unwrap();
    let (declined, changed, code) = screens;
    assert!(
        declined.contains("the request could mean a change or only a question"),
        "{declined}"
    );
    assert_eq!(code, Some(0), "{changed}");
    assert_eq!(
        std::fs::read_to_string(s.ws.path().join("config.py")).unwrap(),
        "DEBUG = False\n",
        "{changed}"
    );
    assert!(!s.llama.requests().is_empty());
    let _ = talos(s.home.path(), &["stop"], "");
}

/// Proves the interactive session asks with its line editor, and "c" makes the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_interactive_session_asks_too() {
    let s = setup().await;
    let mut request = None;
    for candidate in HEDGED {
        let (_, outcome, _) = run_json(s.home.path().to_path_buf(), s.ws.path(), candidate).await;
        if outcome["classification"] == "CONTRACT_AMBIGUOUS" {
            request = Some(candidate);
            break;
        }
    }
    let request = request.expect("an uncertain request");
    let (home, ws) = (s.home.path().to_path_buf(), s.ws.path().to_path_buf());
    let (screen, code) = tokio::task::spawn_blocking(move || {
        let wait = Duration::from_secs(30);
        let history = home.join("history");
        let mut t = Terminal::spawn(
            Path::new(TALOS),
            &["--workspace", ws.to_str().unwrap()],
            &[
                ("TALOS_HOME", &home),
                ("TALOS_DAEMON", Path::new(TALOSD)),
                ("TALOS_HISTORY", &history),
            ],
        );
        t.expect("talos (agent)> ", wait);
        t.type_keys(&format!("{request}\r"));
        t.expect(
            "Change config.py? [c=change, q=only answer a question]",
            wait,
        );
        t.type_keys("c\r");
        t.expect("Allow?", wait);
        t.type_keys("y\r");
        t.expect("talos (agent)> ", wait);
        t.type_keys("\x04");
        let screen = t.screen();
        (screen, t.wait(wait))
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(
        std::fs::read_to_string(s.ws.path().join("config.py")).unwrap(),
        "DEBUG = False\n",
        "{screen}"
    );
    let _ = talos(s.home.path(), &["stop"], "");
}

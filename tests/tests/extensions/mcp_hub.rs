//! The MCP hub (issue 28, item 2) against a real server nobody here wrote
//! (`@modelcontextprotocol/server-everything` from npm, installed by
//! `packaging/get-mcp-servers.sh`) and against the project's hostile one
//! (`hostile-mcp-server`): listing, calls, huge and malformed answers, timeouts, cancellation,
//! crashes and restarts, the environment a child gets, the bearer key of an HTTP server, and
//! the editor's servers.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use talos_tests::cli::wait_until_async;
use talosd::config::Config;
use talosd::mcp::{EditorServer, McpHub, Scope};
use tokio_util::sync::CancellationToken;

const HOSTILE: &str = env!("CARGO_BIN_EXE_hostile-mcp-server");

fn hub_of(yaml: &str) -> McpHub {
    let config = Config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e}"));
    McpHub::new(&config.mcp)
}

fn scope(dir: &Path) -> Scope {
    Scope {
        session_id: "s1".into(),
        workspace: dir.to_path_buf(),
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// A config with the hostile stdio server `bad` and `extra` settings for it.
fn hostile_yaml(extra: &str) -> String {
    format!("mcp:\n  servers:\n    bad:\n      command: [{HOSTILE}, stdio]\n{extra}")
}

async fn call(
    hub: &McpHub,
    s: &Scope,
    tool: &str,
    a: Value,
) -> Result<talosd::mcp::McpOutput, String> {
    hub.call(s, "bad", tool, args(a), CancellationToken::new())
        .await
}

/// Proves the hub lists and calls the tools of the reference server from npm (stdio).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_everything_lists_and_echoes() {
    let Some(main) = talos_tests::mcp_servers::everything() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "mcp:\n  servers:\n    everything:\n      command: [node, {}, stdio]\n      env_allow: [HOME, PATH]\n      timeout_secs: 60\n",
        main.display()
    );
    let hub = hub_of(&yaml);
    let s = scope(dir.path());
    let listing = hub.tools(&s, "everything").await.unwrap();
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo"), "{names:?}");
    eprintln!(
        "server-everything: {} tools, {} skipped",
        names.len(),
        listing.skipped.len()
    );
    let out = hub
        .call(
            &s,
            "everything",
            "echo",
            args(json!({"message": "hello from talos"})),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("hello from talos") && !out.is_error,
        "{out:?}"
    );
    let bad = hub
        .call(
            &s,
            "everything",
            "echo",
            args(json!({"wrong": 1})),
            CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(&bad, Ok(o) if o.is_error) || bad.is_err(),
        "{bad:?}"
    );
    hub.shutdown().await;
}

/// Proves the listing skips tools with unusable names (escaped in the reason), caps and escapes
/// descriptions, passes `readOnlyHint` through as the server's claim (the "read-only" tool
/// writes), and caps and escapes a 1 MB result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_listing_and_output_are_made_safe() {
    let dir = tempfile::tempdir().unwrap();
    let hub = hub_of(&hostile_yaml("      max_output_bytes: 65536\n"));
    let s = scope(dir.path());
    let listing = hub.tools(&s, "bad").await.unwrap();
    assert_eq!(listing.tools.len(), 10, "{:?}", listing.tools);
    assert_eq!(listing.skipped.len(), 4, "{:?}", listing.skipped);
    for reason in &listing.skipped {
        assert!(
            !reason.contains('\u{1b}') && !reason.contains('\u{202e}'),
            "{reason:?}"
        );
    }
    assert!(
        listing.skipped.iter().any(|r| r.contains("evil\\u{1b}[2J")),
        "{:?}",
        listing.skipped
    );
    for tool in &listing.tools {
        assert!(tool.description.len() <= 1024 && !tool.description.contains('\u{1b}'));
    }
    let writer = listing
        .tools
        .iter()
        .find(|t| t.name == "write_file")
        .unwrap();
    assert!(writer.read_only_hint);
    let out = call(
        &hub,
        &s,
        "write_file",
        json!({"path": "claimed-read-only.txt"}),
    )
    .await
    .unwrap();
    assert!(out.text.contains("true"), "{out:?}");
    assert!(
        dir.path().join("claimed-read-only.txt").is_file(),
        "the server runs in the workspace"
    );
    let big = call(&hub, &s, "big", json!({"bytes": 1_000_000}))
        .await
        .unwrap();
    assert!(
        big.truncated && big.text.len() <= 65536,
        "{}",
        big.text.len()
    );
    assert!(!big.text.contains('\u{1b}') && !big.text.contains('\u{202e}'));
    assert!(
        big.text.starts_with("\\u{1b}[31mstart"),
        "{}",
        &big.text[..40]
    );
    let unknown = call(&hub, &s, "evil\u{1b}[2J", json!({}))
        .await
        .unwrap_err();
    assert!(
        unknown.contains("offers no tool") && !unknown.contains('\u{1b}'),
        "{unknown}"
    );
    hub.shutdown().await;
}

/// Proves a 50 MB answer, a line that is not JSON and a crash each fail that call with a clear
/// error naming the server, and the next call starts the server again and works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_answers_fail_the_call_and_the_server_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hostile.log");
    let s = scope(dir.path());
    // An editor's server: its environment is exactly what the editor sent (HOSTILE_LOG).
    let hub = McpHub::new(&Config::default().mcp);
    hub.add_editor_servers(
        "s1",
        vec![EditorServer::Stdio {
            name: "bad".into(),
            command: HOSTILE.into(),
            args: vec!["stdio".into()],
            env: vec![("HOSTILE_LOG".into(), log.display().to_string())],
        }],
    )
    .unwrap();
    let rows = [
        ("huge", "larger than 4 MiB"),
        ("bad_json", "not JSON"),
        ("crash", "exited"),
    ];
    for (tool, want) in rows {
        let started = Instant::now();
        let error = call(&hub, &s, tool, json!({})).await.unwrap_err();
        eprintln!("{tool}: {error} ({:?})", started.elapsed());
        assert!(
            error.contains(want) && error.contains("bad"),
            "{tool}: {error}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{tool}: {:?}",
            started.elapsed()
        );
        let echo = call(&hub, &s, "echo", json!({"text": "again"}))
            .await
            .unwrap();
        assert_eq!(echo.text, "Echo: again", "after {tool}");
    }
    let starts = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        starts.lines().filter(|l| l.starts_with("start")).count(),
        4,
        "{starts}"
    );
    hub.shutdown().await;
}

/// Proves a tool that never answers is cut off at `timeout_secs` with `notifications/cancelled`
/// sent, a cancelled call ends at once, and the server stays usable after both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_tool_times_out_and_a_cancel_ends_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hostile.log");
    let hub = hub_with_timeout(&log);
    let s = scope(dir.path());
    let started = Instant::now();
    let error = call(&hub, &s, "hang", json!({})).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(error, "mcp.bad.hang timed out after 1 s");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(3),
        "{took:?}"
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = hub
        .call(&s, "bad", "hang", Map::new(), cancel)
        .await
        .unwrap_err();
    assert_eq!(error, "mcp.bad.hang was cancelled");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    let echo = call(&hub, &s, "echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(echo.text, "Echo: still here");
    let cancelled = || {
        let seen = std::fs::read_to_string(&log).unwrap();
        seen.lines().filter(|l| l.starts_with("cancelled")).count()
    };
    wait_until_async(
        "the server told of both cancels",
        Duration::from_secs(5),
        || cancelled() >= 2,
    )
    .await;
    assert_eq!(cancelled(), 2, "{}", std::fs::read_to_string(&log).unwrap());
    hub.shutdown().await;
}

/// A hub whose one server, `bad`, is the hostile one with `timeout_secs: 1`, started through a
/// script that sets HOSTILE_LOG (the test cannot set its own environment).
fn hub_with_timeout(log: &Path) -> McpHub {
    let script = log.with_extension("sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nHOSTILE_LOG={} exec {HOSTILE} stdio\n",
            log.display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let yaml = format!(
        "mcp:\n  servers:\n    bad:\n      command: [{}]\n      timeout_secs: 1\n",
        script.display()
    );
    hub_of(&yaml)
}

/// Proves a configured server's child sees only the `env_allow` variables (not even PATH), and
/// an editor's server exactly the variables the editor sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_gets_only_the_allowed_environment() {
    let dir = tempfile::tempdir().unwrap();
    let s = scope(dir.path());
    let hub = hub_of(&hostile_yaml(
        "      env_allow: [HOME, TALOS_SURELY_UNSET_VARIABLE]\n",
    ));
    let out = call(&hub, &s, "env", json!({})).await.unwrap();
    let home = std::env::var("HOME").unwrap();
    assert_eq!(out.text, format!("HOME={home}"));
    hub.shutdown().await;
    let editor = McpHub::new(&Config::default().mcp);
    let server = |name: &str| EditorServer::Stdio {
        name: name.into(),
        command: HOSTILE.into(),
        args: vec!["stdio".into()],
        env: vec![("ONLY".into(), "this".into())],
    };
    editor
        .add_editor_servers("s1", vec![server("bad")])
        .unwrap();
    let out = call(&editor, &s, "env", json!({})).await.unwrap();
    assert_eq!(out.text, "ONLY=this");
    let other = Scope {
        session_id: "s2".into(),
        workspace: dir.path().into(),
    };
    let error = editor
        .call(&other, "bad", "env", Map::new(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.contains("no MCP server is named `bad`"), "{error}");
    editor.forget_session("s1");
    let error = call(&editor, &s, "env", json!({})).await.unwrap_err();
    assert!(error.contains("no MCP server is named"), "{error}");
    let configured = hub_of(&hostile_yaml(""));
    let clash = configured
        .add_editor_servers("s1", vec![server("bad")])
        .unwrap_err();
    assert!(
        clash.contains("has the name of a configured server"),
        "{clash}"
    );
    let bad_name = configured
        .add_editor_servers("s1", vec![server("Bad.Name")])
        .unwrap_err();
    assert!(bad_name.contains("not a usable name"), "{bad_name}");
}

/// Proves an HTTP server receives the bearer key, a refusal that echoes the key is reported
/// without it, and an unset `api_key_env` is an error naming the setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_gets_the_bearer_key_and_errors_never_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let (port_file, auth_log) = (dir.path().join("port"), dir.path().join("auth.log"));
    let mut server = std::process::Command::new(HOSTILE)
        .args([
            "http",
            &port_file.display().to_string(),
            &auth_log.display().to_string(),
        ])
        .env("HOSTILE_EXPECTED_KEY", "sekrit-123")
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let port = loop {
        if let Ok(port) = std::fs::read_to_string(&port_file) {
            break port;
        }
        assert!(Instant::now() < deadline, "the HTTP server did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let s = scope(dir.path());
    let hub = McpHub::new(&Config::default().mcp);
    let editor = |name: &str, key: &str| EditorServer::Http {
        name: name.into(),
        url: url.clone(),
        headers: vec![("Authorization".into(), format!("Bearer {key}"))],
    };
    hub.add_editor_servers(
        "s1",
        vec![
            editor("good", "sekrit-123"),
            editor("wrong", "wrong-key-456"),
        ],
    )
    .unwrap();
    let out = hub
        .call(
            &s,
            "good",
            "echo",
            args(json!({"text": "over http"})),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: over http");
    let log = std::fs::read_to_string(&auth_log).unwrap();
    assert!(
        log.lines()
            .any(|l| l.starts_with("POST") && l.ends_with("Bearer sekrit-123")),
        "{log}"
    );
    let refused = hub.tools(&s, "wrong").await.unwrap_err();
    eprintln!("refused: {refused}");
    assert!(
        refused.starts_with("mcp.wrong: cannot connect"),
        "{refused}"
    );
    assert!(!refused.contains("wrong-key-456"), "{refused}");
    let unset = hub_of(&format!(
        "mcp:\n  servers:\n    web:\n      url: {url}\n      api_key_env: TALOS_SURELY_UNSET_KEY\n"
    ));
    let error = unset.tools(&s, "web").await.unwrap_err();
    assert!(error.contains("mcp.servers.web.api_key_env TALOS_SURELY_UNSET_KEY: the environment variable is not set"), "{error}");
    let _ = server.kill();
    let _ = server.wait();
}

/// Proves shutdown ends every stdio child (its whole process group).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_the_children() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hostile.log");
    let hub = hub_with_timeout(&log);
    let s = scope(dir.path());
    call(&hub, &s, "echo", json!({"text": "x"})).await.unwrap();
    let seen = std::fs::read_to_string(&log).unwrap();
    let pid: u32 = seen
        .lines()
        .find_map(|l| l.strip_prefix("start "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    hub.shutdown().await;
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|st| !st.contains(") Z "))
            .unwrap_or(false)
    };
    wait_until_async(
        &format!("the server {pid} ended at shutdown"),
        Duration::from_secs(5),
        || !alive(),
    )
    .await;
}

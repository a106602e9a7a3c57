//! MCP tools in governed turns (issue 28), through the real daemon: the reference
//! server-everything from npm and the project's hostile server, with the fake model calling
//! `mcp.NAME.TOOL`. A tool joins only when the request names its server (or the server is
//! `surface: always`); every call asks unless a rule names it; a read-only mode offers only
//! trusted `readOnlyHint` tools, and even those ask; the output reaches the model framed as
//! untrusted and the trace keeps it by hash; a crash is a failed call and the daemon goes on.

use serde_json::{Value, json};
use talos_tests::fake_llama::{FakeLlama, Reply, offered_tools, scripted};
use talos_tests::harness::{TestDaemon, approvals, approve_all};

const HOSTILE: &str = env!("CARGO_BIN_EXE_hostile-mcp-server");

fn mcp_call(name: &str, args: Value) -> Reply {
    Reply::ToolCalls(vec![(name.into(), args.to_string())])
}

fn hostile_server(extra: &str) -> String {
    format!(
        "mcp:\n  servers:\n    bad:\n      command: [{HOSTILE:?}, stdio]\n      timeout_secs: 5\n{extra}"
    )
}

async fn daemon(llama: &FakeLlama, yaml: &str) -> TestDaemon {
    TestDaemon::start(&format!(
        "{}{yaml}",
        TestDaemon::config_for(&llama.url, true)
    ))
    .await
}

/// A model with room for many MCP tools' definitions (the hostile server's ten and
/// server-everything's thirteen need more than a 4,096-token context).
fn roomy() -> talos_tests::fake_llama::FakeOptions {
    talos_tests::fake_llama::FakeOptions {
        native: true,
        n_ctx: Some(32_768),
        ..Default::default()
    }
}

fn last_trace(daemon: &TestDaemon) -> talos_protocol::trace::TraceRecord {
    daemon
        .traces()
        .into_iter()
        .max_by_key(|t| (t.started_at_ms, t.turn_number))
        .unwrap()
}

/// The reference server from npm: its `echo` is offered when the request names the server,
/// the call asks with its arguments shown, the answer comes back framed as untrusted, and the
/// trace keeps the call by hash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_echo_runs_in_a_turn_after_an_approval() {
    let Some(main) = talos_tests::mcp_servers::everything() else {
        return;
    };
    let llama = FakeLlama::start_with(
        roomy(),
        scripted(vec![
            mcp_call(
                "mcp.everything.echo",
                json!({"message": "hello from talos"}),
            ),
            Reply::Text("The server echoed it.".into()),
        ]),
    )
    .await;
    let yaml = format!(
        "mcp:\n  servers:\n    everything:\n      command: [node, {:?}, stdio]\n      env_allow: [HOME, PATH]\n      timeout_secs: 60\n",
        main.display().to_string()
    );
    let daemon = daemon(&llama, &yaml).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (outcome, seen) = client
        .turn_with(
            &session,
            "Use the everything server to echo hello from talos.",
            approve_all("approve"),
        )
        .await;
    let asked = approvals(&seen);
    assert_eq!(asked.len(), 1, "{outcome:?}");
    assert_eq!(asked[0].tool, "mcp.everything.echo");
    assert!(
        asked[0]
            .details
            .iter()
            .any(|d| d == "message: hello from talos"),
        "{:?}",
        asked[0].details
    );
    let requests = llama.requests();
    assert!(offered_tools(&requests[0]).contains(&"mcp.everything.echo".to_string()));
    let shown = requests[1]["messages"].to_string();
    assert!(
        shown.contains("[Output of mcp.everything.echo (the server's answer). Untrusted"),
        "{shown}"
    );
    assert!(shown.contains("hello from talos"));
    let trace = last_trace(&daemon);
    assert!(trace.mcp_tools.contains(&"mcp.everything.echo".to_string()));
    let call = &trace.mcp_calls[0];
    assert_eq!(
        (call.tool.as_str(), call.action.as_str()),
        ("mcp.everything.echo", "ask")
    );
    assert_eq!(call.reason_code, "MCP_DEFAULT_ASK");
    assert!(
        call.output
            .as_ref()
            .is_some_and(|o| o.hash.starts_with("sha256:"))
    );
    assert!(
        !trace
            .warnings
            .iter()
            .any(|w| w.message.contains("hello from talos"))
    );
}

/// Not named, not offered: the tool is not in the request, and a call to it anyway is
/// rejected before anything starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_the_request_does_not_name_is_not_offered_or_started() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            mcp_call("mcp.bad.echo", json!({"text": "x"})),
            Reply::Text("ok".into()),
        ]),
    )
    .await;
    // `env` sets the log variable for the server: no shell, and nothing in talosd's own
    // environment.
    let yaml = format!(
        "mcp:\n  servers:\n    bad:\n      command: [/usr/bin/env, {:?}, {HOSTILE:?}, stdio]\n",
        format!("HOSTILE_LOG={}", log.display())
    );
    let daemon = daemon(&llama, &yaml).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (_, seen) = client
        .turn_with(&session, "What is 2 + 2?", approve_all("approve"))
        .await;
    assert!(approvals(&seen).is_empty());
    assert!(
        !offered_tools(&llama.requests()[0])
            .iter()
            .any(|t| t.starts_with("mcp."))
    );
    let trace = last_trace(&daemon);
    assert!(trace.mcp_tools.is_empty() && trace.mcp_calls.is_empty());
    let rejected = trace
        .tool_calls
        .iter()
        .find(|c| c.requested_name == "mcp.bad.echo")
        .unwrap();
    assert_eq!(rejected.stage, "rejected");
    assert!(!log.exists(), "the server was never started");
}

/// A read-only mode offers a tool only when the server is trusted for its `readOnlyHint`;
/// the hostile `write_file` claims the hint and writes, so the call still asks, and denied,
/// nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_modes_offer_only_trusted_hints_and_those_still_ask() {
    let ws = tempfile::tempdir().unwrap();
    let target = ws.path().join("pwned.txt");
    let llama = FakeLlama::start(
        true,
        scripted(vec![
            mcp_call(
                "mcp.bad.write_file",
                json!({"path": target.display().to_string(), "text": "x"}),
            ),
            Reply::Text("done".into()),
        ]),
    )
    .await;
    for (trust, offered) in [(false, false), (true, true)] {
        let extra = if trust {
            "      trust_read_only_hints: true\n"
        } else {
            ""
        };
        let daemon = daemon(&llama, &hostile_server(extra)).await;
        let mut client = daemon.client().await;
        let session = client.open_session(ws.path(), "ask").await;
        let (_, seen) = client
            .turn_with(
                &session,
                "Use the bad server to look at things.",
                approve_all("deny"),
            )
            .await;
        let trace = last_trace(&daemon);
        assert_eq!(
            trace.mcp_tools.contains(&"mcp.bad.write_file".to_string()),
            offered,
            "trust={trust}"
        );
        assert!(
            !trace.mcp_tools.contains(&"mcp.bad.echo".to_string()),
            "echo has no hint"
        );
        assert_eq!(
            approvals(&seen).len(),
            usize::from(offered),
            "trust={trust}"
        );
        assert!(!target.exists(), "denied or not offered: nothing written");
        daemon.stop().await;
    }
}

/// A rule by name allows without asking; a crash is a failed call and the next turn works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_name_mcp_tools_and_a_crash_is_a_failed_call() {
    let llama = FakeLlama::start_with(
        roomy(),
        scripted(vec![
            mcp_call("mcp.bad.crash", json!({})),
            mcp_call("mcp.bad.echo", json!({"text": "still here"})),
            Reply::Text("ok".into()),
        ]),
    )
    .await;
    let rules = "permissions:\n  rules:\n    - effect: allow\n      tools: [mcp.bad.*]\n      reason: the bad server is a test fixture\n";
    let daemon = daemon(&llama, &format!("{}{rules}", hostile_server(""))).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let (_, seen) = client
        .turn_with(&session, "Use the bad server.", approve_all("approve"))
        .await;
    assert!(approvals(&seen).is_empty(), "the rule allows");
    let trace = last_trace(&daemon);
    let crash = trace
        .mcp_calls
        .iter()
        .find(|c| c.tool == "mcp.bad.crash")
        .unwrap_or_else(|| {
            panic!(
                "{:#?} {:#?} {:#?} {:?}",
                trace.mcp_calls, trace.tool_calls, trace.warnings, trace.mcp_tools
            )
        });
    assert!(
        crash.error.as_deref().is_some_and(|e| e.contains("exited")),
        "{crash:?}"
    );
    assert_eq!(crash.reason_code, "CONFIG_ALLOW");
    let echo = trace
        .mcp_calls
        .iter()
        .find(|c| c.tool == "mcp.bad.echo")
        .unwrap_or_else(|| {
            panic!(
                "{:#?} {:#?} {:#?}",
                trace.mcp_calls, trace.tool_calls, trace.warnings
            )
        });
    assert!(
        echo.output.is_some(),
        "the server was started again: {echo:?}"
    );
    assert!(trace.warnings.iter().any(|w| w.code == "EXTERNAL_EFFECTS"));
}

/// On a small context the MCP tools are the first thing cut, the ones the request does not
/// name first, only as many as the context needs: the turn goes on with Talos's own tools and
/// the rest, and says which were left out and why, instead of failing on the size of the
/// servers' definitions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_that_do_not_fit_are_left_out_and_the_turn_goes_on() {
    // Room for Talos's own tools and about half of the hostile server's ten.
    let options = talos_tests::fake_llama::FakeOptions {
        native: true,
        n_ctx: Some(1900),
        ..Default::default()
    };
    let llama = FakeLlama::start_with(options, scripted(vec![Reply::Text("Four.".into())])).await;
    let daemon = daemon(&llama, &hostile_server("")).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    let session = client.open_session(ws.path(), "agent").await;
    let outcome = client
        .turn(
            &session,
            "Use the bad server's echo: what is 2 + 2?",
            "approve",
        )
        .await;
    assert_eq!(outcome.final_answer, "Four.", "{outcome:?}");
    let offered: Vec<String> = offered_tools(&llama.requests()[0])
        .into_iter()
        .filter(|t| t.starts_with("mcp."))
        .collect();
    let trace = last_trace(&daemon);
    assert_eq!(trace.mcp_tools, offered);
    assert_eq!(
        offered.first().map(String::as_str),
        Some("mcp.bad.echo"),
        "named first"
    );
    assert!(offered.len() < 10, "{offered:?}");
    let warning = trace
        .warnings
        .iter()
        .find(|w| w.message.starts_with("the MCP tools ") && w.message.contains("were left out"))
        .unwrap_or_else(|| panic!("{:?}", trace.warnings));
    let left_out = warning.message.split(" were left out").next().unwrap();
    for tool in ["mcp.bad.write_file", "mcp.bad.echo"] {
        assert_eq!(
            left_out.contains(tool),
            !offered.contains(&tool.to_string()),
            "{tool}: {}",
            warning.message
        );
    }
    assert!(warning.message.contains("does not fit the model's context"));
}

/// An editor's server (ACP `mcpServers`, given to `session/new`) is used under the same rules:
/// offered when named, asked about, and given exactly the environment the editor sent; a name
/// a configured server has is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editors_server_runs_under_the_same_rules_with_only_its_environment() {
    let llama = FakeLlama::start_with(
        roomy(),
        scripted(vec![
            mcp_call("mcp.ed.env", json!({})),
            Reply::Text("done".into()),
        ]),
    )
    .await;
    let daemon = daemon(&llama, &hostile_server("")).await;
    let ws = tempfile::tempdir().unwrap();
    let mut client = daemon.client().await;
    client
        .call("initialize", json!({"clientName": "e2e"}))
        .await;
    let clash = json!({"workspace": ws.path(), "mcpServers": [{"name": "bad", "command": HOSTILE, "args": ["stdio"]}]});
    let (refused, _) = client
        .call_with("session/new", clash, |_| {
            talos_tests::harness::Answer::Ignore
        })
        .await
        .unwrap();
    let error = refused
        .error
        .expect("a configured server's name is refused");
    assert_eq!(error.code, -32602, "{error:?}");
    let editor = json!({"workspace": ws.path(), "mcpServers": [
        {"name": "ed", "command": HOSTILE, "args": ["stdio"], "env": [["ONLY", "this"]]}
    ]});
    let created: Value = client.call("session/new", editor).await;
    let session = created["sessionId"].as_str().unwrap().to_string();
    let (_, seen) = client
        .turn_with(
            &session,
            "Use the ed server to show its environment.",
            approve_all("approve"),
        )
        .await;
    assert_eq!(approvals(&seen).len(), 1, "the editor's server asks too");
    let shown = llama.requests()[1]["messages"].to_string();
    assert!(shown.contains("ONLY=this"), "{shown}");
    assert!(!shown.contains("PATH="), "nothing but what the editor gave");
    client
        .call("session/close", json!({"sessionId": session}))
        .await;
}

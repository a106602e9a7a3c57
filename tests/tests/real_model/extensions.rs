//! Issue 28 on the real model: an `AGENTS.md` and a configured MCP server (the reference
//! server-everything) beside an ordinary edit, on a 4,096-token slot. Shape only: the
//! instructions are sent and recorded, the edit still reaches its approval, the server's 13
//! tool definitions do not fit the slot and are cut first (the turn goes on), and a request that
//! names one tool offers just that one. What the 135M model then does is printed, not asserted.

use super::{ONE_AT_A_TIME, parts, trace_of};
use talos_tests::harness::approve_all;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(talos_real_model),
    ignore = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)"
)]
async fn instructions_and_an_mcp_server_on_the_real_model() {
    let Some(parts) = parts() else { return };
    let Some(everything) = talos_tests::mcp_servers::everything() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let mcp = format!(
        "mcp:\n  servers:\n    everything:\n      command: [node, {:?}, stdio]\n      env_allow: [HOME, PATH]\n      timeout_secs: 60\n",
        everything.display().to_string()
    );
    let (daemon, mut client, pid) = super::start_with(&parts, &mcp).await;
    let ws = talos_tests::harness::timeout_workspace();
    std::fs::write(
        ws.path().join("AGENTS.md"),
        "# Project notes\nSettings live in settings.py. Keep RETRIES at 3.\n",
    )
    .unwrap();
    let session = client.open_session(ws.path(), "agent").await;
    let (edit, seen) = client
        .turn_with(&session, super::EDIT_REQUEST, approve_all("deny"))
        .await;
    let first = &talos_tests::harness::events(&seen)[0];
    assert!(
        matches!(&first.event, talos_protocol::event::TurnEvent::Instructions { files } if files.len() == 1),
        "{first:?}"
    );
    let record = trace_of(&daemon, &edit);
    assert_eq!(record.instructions[0].path, "AGENTS.md");
    println!(
        "real edit with AGENTS.md: {:?} / {:?}, {} model calls, first prompt {:?} tokens, approvals {}",
        edit.status,
        edit.classification,
        record.model_calls.len(),
        record.model_calls.first().and_then(|c| c.prompt_tokens),
        record.approvals.len()
    );
    let named = super::turn(
        &mut client,
        &session,
        "Use the everything server to echo hello.",
    )
    .await;
    let record = trace_of(&daemon, &named);
    println!(
        "real turn naming the server: {:?}, MCP tools offered {:?}, warnings {:?}",
        named.status,
        record.mcp_tools,
        record
            .warnings
            .iter()
            .map(|w| w.code.as_str())
            .collect::<Vec<_>>()
    );
    // Compact definitions: all 13 fit a 4,096-token slot on the real tokenizer (the turn
    // completes); should some not, a warning names those left out.
    assert!(
        record.mcp_tools.len() == 13
            || record
                .warnings
                .iter()
                .any(|w| w.code == "CONTEXT_TOO_SMALL" && w.message.contains("were left out")),
        "{:?} {:?}",
        record.mcp_tools,
        record.warnings
    );
    assert_eq!(
        record.mcp_tools.first().map(String::as_str),
        Some("mcp.everything.echo"),
        "the tool the request names comes first"
    );
    let one = super::turn(&mut client, &session, "Call echo with the message hello.").await;
    let record = trace_of(&daemon, &one);
    assert_eq!(
        record.mcp_tools,
        ["mcp.everything.echo"],
        "the one tool named"
    );
    println!(
        "real turn naming one tool: {:?}, calls {:?}, MCP calls {:?}",
        one.status,
        record
            .tool_calls
            .iter()
            .map(|c| format!("{} -> {}", c.requested_name, c.stage))
            .collect::<Vec<_>>(),
        record
            .mcp_calls
            .iter()
            .map(|c| format!("{} {} {:?}", c.tool, c.action, c.approval))
            .collect::<Vec<_>>()
    );
    super::stop(daemon, pid).await;
}

//! `talos trace` (recent turns of a workspace), `talos trace show ID` (one turn for a person,
//! or its record with `--json`) and `talos gc` (apply the retention policy now). The daemon
//! reads the disk; the CLI only asks and renders (`trace_view`).

use talos_protocol::{
    DAEMON_GC, DaemonGcResult, TRACE_GET, TRACE_LIST, TraceGetParams, TraceGetResult,
    TraceListParams, TraceListResult,
};

use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;
use crate::render::Output;
use crate::trace_view;

fn call(
    client: &mut Client,
    method: &str,
    params: serde_json::Value,
) -> Result<serde_json::Value, Failure> {
    client.initialize()?;
    client.call(method, params, &mut ignore_messages)
}

fn invalid(method: &str, error: &serde_json::Error) -> Failure {
    Failure::Connection(format!("invalid {method} result: {error}"))
}

/// `talos trace`: the newest `limit` turns on `workspace`.
pub fn list(
    client: &mut Client,
    workspace: &str,
    limit: usize,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    let request = TraceListParams {
        session_id: None,
        workspace: Some(workspace.to_string()),
        limit: Some(limit),
    };
    let raw = call(client, TRACE_LIST, params(serde_json::to_value(request)))?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let result: TraceListResult =
        serde_json::from_value(raw).map_err(|e| invalid(TRACE_LIST, &e))?;
    output.out(&trace_view::list(&result.traces, output.stdout_palette))
}

/// `talos trace show ID`.
pub fn show(
    client: &mut Client,
    trace_id: &str,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    let request = TraceGetParams {
        trace_id: trace_id.to_string(),
    };
    let raw = call(client, TRACE_GET, params(serde_json::to_value(request)))?;
    if json {
        return output.out(&format!("{}\n", raw["trace"]));
    }
    let result: TraceGetResult = serde_json::from_value(raw).map_err(|e| invalid(TRACE_GET, &e))?;
    output.out(&trace_view::show(&result, output.stdout_palette))
}

/// `talos gc`.
pub fn gc(client: &mut Client, json: bool, output: &Output) -> Result<(), Failure> {
    let raw = call(client, DAEMON_GC, serde_json::json!({}))?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let result: DaemonGcResult = serde_json::from_value(raw).map_err(|e| invalid(DAEMON_GC, &e))?;
    output.out(&trace_view::gc(&result))
}

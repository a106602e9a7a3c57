//! `talos index [status|rebuild]` and `talos search "query"`: the workspace's search index
//! through the daemon (`index/*` methods), and ranked hits without the model.

use talos_protocol::{
    INDEX_REBUILD, INDEX_SEARCH, INDEX_STATUS, IndexRebuildResult, IndexSearchResult,
    IndexStatusResult,
};

use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;
use crate::render::{Output, printable};

fn call(
    client: &mut Client,
    method: &str,
    value: serde_json::Value,
) -> Result<serde_json::Value, Failure> {
    client.initialize()?;
    client.call(method, params(Ok(value)), &mut ignore_messages)
}

fn invalid(method: &str, e: serde_json::Error) -> Failure {
    Failure::Connection(format!("invalid {method} result: {e}"))
}

fn status_text(s: &IndexStatusResult) -> String {
    let updated = s
        .last_update_ms
        .map_or("never".to_string(), |ms| format!("{ms} ms since the epoch"));
    format!(
        "Index of {}: {}\n  files: {}\n  chunks: {}\n  bytes: {}\n  last update: {updated}\n",
        printable(&s.workspace),
        s.state,
        s.files,
        s.chunks,
        s.bytes
    )
}

/// `talos index status`.
pub fn status(
    client: &mut Client,
    workspace: &str,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    let raw = call(
        client,
        INDEX_STATUS,
        serde_json::json!({ "workspace": workspace }),
    )?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let result: IndexStatusResult =
        serde_json::from_value(raw).map_err(|e| invalid(INDEX_STATUS, e))?;
    output.out(&status_text(&result))
}

/// `talos index rebuild`. The daemon sends no progress yet: a line on stderr says it runs.
pub fn rebuild(
    client: &mut Client,
    workspace: &str,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    if !json {
        output.err_line("Rebuilding the index (this reads every file once)...");
    }
    let raw = call(
        client,
        INDEX_REBUILD,
        serde_json::json!({ "workspace": workspace }),
    )?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let result: IndexRebuildResult =
        serde_json::from_value(raw).map_err(|e| invalid(INDEX_REBUILD, e))?;
    output.out(&format!(
        "Indexed {} file(s), skipped {}.\n{}",
        result.indexed,
        result.skipped,
        status_text(&result.status)
    ))
}

/// `talos search "query"`.
pub fn search(
    client: &mut Client,
    workspace: &str,
    query: &str,
    limit: Option<usize>,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    let mut request = serde_json::json!({ "workspace": workspace, "query": query });
    if let Some(limit) = limit {
        request["limit"] = limit.into();
    }
    let raw = call(client, INDEX_SEARCH, request)?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let result: IndexSearchResult =
        serde_json::from_value(raw).map_err(|e| invalid(INDEX_SEARCH, e))?;
    if result.hits.is_empty() {
        return output.out(&format!("No matches for: {}\n", printable(query)));
    }
    let mut text = String::new();
    for (n, hit) in result.hits.iter().enumerate() {
        text.push_str(&format!(
            "{}. {}:{}-{} (line {})\n   {}\n",
            n + 1,
            printable(&hit.path),
            hit.start_line,
            hit.end_line,
            hit.line,
            printable(&hit.snippet)
        ));
    }
    output.out(&text)
}

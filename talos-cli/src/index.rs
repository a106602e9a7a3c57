//! `talos index [status|rebuild]` and `talos search "query"`: the workspace's search index
//! through the daemon (`index/*` methods), and ranked hits without the model. Names from the
//! workspace are shown with their control characters escaped, newlines included
//! (`printable_line`), so a file name cannot forge a line of the listing.

use std::io::IsTerminal;

use talos_protocol::{
    INDEX_PROGRESS, INDEX_REBUILD, INDEX_SEARCH, INDEX_STATUS, IndexRebuildResult,
    IndexSearchResult, IndexStatusResult,
};

use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;
use crate::render::{Output, printable_line};

fn call(
    client: &mut Client,
    method: &str,
    value: serde_json::Value,
) -> Result<serde_json::Value, Failure> {
    client.initialize()?;
    client.call(method, params(Ok(value)), &mut ignore_messages)
}

/// One progress line for `index/progress`: a bar of 30 cells and the counts.
fn bar(done: u64, total: u64) -> String {
    let filled = (done.min(total) * 30)
        .checked_div(total)
        .map_or(30, |cells| usize::try_from(cells).unwrap_or(30));
    format!(
        "\rIndexing [{}{}] {done}/{total} files",
        "#".repeat(filled),
        ".".repeat(30 - filled)
    )
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
        printable_line(&s.workspace),
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
    let terminal = !json && std::io::stderr().is_terminal();
    if !json {
        output.err_line("Rebuilding the index (this reads every file once)...");
    }
    let mut drew = false;
    client.initialize()?;
    let raw = client.call(
        INDEX_REBUILD,
        params(Ok(serde_json::json!({ "workspace": workspace }))),
        &mut |message| {
            if terminal
                && message.method.as_deref() == Some(INDEX_PROGRESS)
                && let Some(p) = message.params.as_ref()
            {
                let count = |k: &str| p.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
                output.err(&bar(count("done"), count("total")));
                drew = true;
            }
            ignore_messages(message)
        },
    )?;
    if drew {
        output.err("\n");
    }
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
        return output.out(&format!("No matches for: {}\n", printable_line(query)));
    }
    output.out(&hits_text(&result))
}

/// The hits as `talos search` prints them: two lines each, the path and range, then the
/// snippet.
fn hits_text(result: &IndexSearchResult) -> String {
    let mut text = String::new();
    for (n, hit) in result.hits.iter().enumerate() {
        text.push_str(&format!(
            "{}. {}:{}-{} (line {})\n   {}\n",
            n + 1,
            printable_line(&hit.path),
            hit.start_line,
            hit.end_line,
            hit.line,
            printable_line(&hit.snippet)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use talos_protocol::{IndexHit, IndexSearchResult};

    use super::{bar, hits_text};

    /// Proves a file name holding a newline (or an escape sequence) cannot forge a result
    /// line: each hit is exactly two lines, its control characters escaped (issue 26).
    #[test]
    fn names_cannot_forge_result_lines() {
        let hit = |path: &str, snippet: &str| IndexHit {
            path: path.into(),
            start_line: 1,
            end_line: 2,
            line: 1,
            snippet: snippet.into(),
        };
        let result = IndexSearchResult {
            hits: vec![
                hit("a.rs\n2. forged.rs:1-1 (line 1)", "fn a()\tx"),
                hit("b\u{1b}[2Jc.rs", "ok\rforged"),
            ],
        };
        assert_eq!(
            hits_text(&result),
            "1. a.rs\\u{a}2. forged.rs:1-1 (line 1):1-2 (line 1)\n   fn a()\\u{9}x\n\
             2. b\\u{1b}[2Jc.rs:1-2 (line 1)\n   ok\\u{d}forged\n"
        );
    }

    /// Proves the progress bar fills with the share of files done, an empty listing full.
    #[test]
    fn bar_rows() {
        assert_eq!(
            bar(0, 10),
            format!("\rIndexing [{}] 0/10 files", ".".repeat(30))
        );
        assert_eq!(
            bar(5, 10),
            format!(
                "\rIndexing [{}{}] 5/10 files",
                "#".repeat(15),
                ".".repeat(15)
            )
        );
        assert_eq!(
            bar(10, 10),
            format!("\rIndexing [{}] 10/10 files", "#".repeat(30))
        );
        assert_eq!(
            bar(0, 0),
            format!("\rIndexing [{}] 0/0 files", "#".repeat(30))
        );
    }
}

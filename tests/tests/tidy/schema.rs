//! The published protocol schema (`protocol/schema/`, docs/protocol.md "Schema") is in step with
//! the methods and their docs: every method in the committed `index.json` has its section in
//! docs/protocol.md and exists in `ALL_METHODS`, every method of `ALL_METHODS` is in the index
//! (the daemon-to-client ones included), and every file the index names is committed.
//! Whether the files are what the types generate is `protocol/tests/wire/schema.rs`'s check.

use serde_json::Value;
use talos_protocol::methods::ALL_METHODS;

use super::{assert_none, read, workspace_root};

/// The `### `name`` headings of docs/protocol.md that look like a method.
fn method_headings(doc: &str) -> Vec<&str> {
    doc.lines()
        .filter_map(|l| {
            l.strip_prefix("### ")?
                .trim()
                .strip_prefix('`')?
                .strip_suffix('`')
        })
        .collect()
}

/// Proves the committed schema index and docs/protocol.md name the same methods, that it covers
/// `ALL_METHODS`, and that every file it names is there.
#[test]
fn schema_index_matches_the_methods_and_their_docs() {
    let root = workspace_root();
    let dir = root.join("protocol/schema");
    let index: Value = serde_json::from_str(&read(&dir.join("index.json")))
        .unwrap_or_else(|e| panic!("protocol/schema/index.json is not JSON: {e}"));
    let doc = read(&root.join("docs/protocol.md"));
    let headings = method_headings(&doc);
    let entries = index["methods"].as_array().cloned().unwrap_or_default();
    let mut problems = Vec::new();
    let mut listed = Vec::new();
    for entry in &entries {
        let Some(method) = entry["method"].as_str() else {
            problems.push(format!("index entry without a method: {entry}"));
            continue;
        };
        listed.push(method);
        if !headings.contains(&method) {
            problems.push(format!(
                "`{method}` is in the schema index but docs/protocol.md has no \"### `{method}`\""
            ));
        }
        if !ALL_METHODS.contains(&method) {
            problems.push(format!(
                "`{method}` is in the schema index but not in ALL_METHODS"
            ));
        }
        for side in ["params", "result"] {
            if let Some(file) = entry[side].as_str()
                && !dir.join(file).is_file()
            {
                problems.push(format!("`{method}` {side}: {file} is not committed"));
            }
        }
    }
    for method in ALL_METHODS {
        if !listed.contains(&method) {
            problems.push(format!(
                "`{method}` is in ALL_METHODS but not in the schema index"
            ));
        }
    }
    for key in ["event", "traceRecord"] {
        match index[key].as_str() {
            Some(file) if dir.join(file).is_file() => {}
            other => problems.push(format!("index `{key}` names no committed file: {other:?}")),
        }
    }
    if !doc.contains("## Schema") || !doc.contains("protocol/schema/") {
        problems
            .push("docs/protocol.md has no \"## Schema\" section naming protocol/schema/".into());
    }
    assert_none(&problems, "protocol/schema/index.json is out of step");
}

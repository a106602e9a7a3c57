//! Errors cross modules as types, not text: no public product function returns
//! `Result<_, String>` except those in [`STRING_ERRORS`], a list that may only shrink. The test
//! fails when a public function not listed returns one, and when a listed one is gone or no
//! longer does (remove it). Give a new function a typed error (`thiserror`) instead.

use std::collections::BTreeSet;

use super::layering::non_test_sources;
use super::module_graph::{Literals, strip_source};
use super::{assert_none, read, relative, workspace_root};

/// The crates whose public functions are read: the product, not the tests.
const PRODUCT_SOURCES: [&str; 5] = [
    "protocol/src",
    "talosd/src",
    "talosd/core/src",
    "talosd/webcheck/src",
    "talos-cli/src",
];

/// Public functions that return `Result<_, String>` today: file and function. Give one a typed
/// error and remove its entry; never add one.
#[rustfmt::skip]
const STRING_ERRORS: &[(&str, &str)] = &[
    ("talos-cli/src/acp/prompt.rs", "parts"),
    ("talosd/core/src/proposal/mcp/approval.rs", "view"),
    ("talosd/core/src/request/custom_command.rs", "admit_path"),
    ("talosd/core/src/request/custom_command.rs", "parse"),
    ("talosd/core/src/request/instructions.rs", "admit_path"),
    ("talosd/core/src/turn/pins.rs", "admit"),
    ("talosd/core/src/turn/pins.rs", "pin"),
    ("talosd/src/checkpoint/job.rs", "checkpoint"),
    ("talosd/src/commands.rs", "locate"),
    ("talosd/src/commands.rs", "plan"),
    ("talosd/src/config.rs", "api_key"),
    ("talosd/src/config.rs", "ca_certificates"),
    ("talosd/src/gc.rs", "run_once"),
    ("talosd/src/index.rs", "rebuild"),
    ("talosd/src/index.rs", "reindex_file"),
    ("talosd/src/index.rs", "search"),
    ("talosd/src/index.rs", "update"),
    ("talosd/src/index/file.rs", "index_file"),
    ("talosd/src/index/requests.rs", "rebuild"),
    ("talosd/src/index/requests.rs", "rebuild_notifying"),
    ("talosd/src/index/requests.rs", "search"),
    ("talosd/src/index/tool.rs", "report"),
    ("talosd/src/mcp.rs", "add_editor_servers"),
    ("talosd/src/mcp.rs", "call"),
    ("talosd/src/mcp.rs", "probe"),
    ("talosd/src/mcp.rs", "tools"),
    ("talosd/src/mcp/connection.rs", "call"),
    ("talosd/src/mcp/connection.rs", "connect"),
    ("talosd/src/mcp/http.rs", "key"),
    ("talosd/src/mcp/http.rs", "transport"),
    ("talosd/src/mcp/offer.rs", "editor_servers"),
    ("talosd/src/mcp/stdio.rs", "start"),
    ("talosd/src/read_tools.rs", "grep"),
    ("talosd/src/read_tools.rs", "run"),
    ("talosd/src/supervisor.rs", "server_version"),
    ("talosd/src/turn/command.rs", "run"),
    ("talosd/src/turn/effects.rs", "read_current"),
    ("talosd/src/workspace/ops.rs", "apply"),
    ("talosd/src/workspace/ops.rs", "place"),
    ("talosd/src/workspace/ops.rs", "plan"),
    ("talosd/src/workspace/ops.rs", "verify"),
];

/// The public functions of `source` (test modules left out) whose return type is
/// `Result<_, String>`.
pub fn string_error_functions(source: &str) -> Vec<String> {
    let code = strip_source(source, Literals::BlankKeepingLines);
    let product = code
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or(&code);
    let mut found = Vec::new();
    let mut rest = product;
    while let Some(at) = next_pub_fn(rest) {
        let decl = &rest[at..];
        let end = decl.find(['{', ';']).unwrap_or(decl.len());
        let signature: String = decl[..end].split_whitespace().collect::<Vec<_>>().join(" ");
        let name = signature
            .split("fn ")
            .nth(1)
            .map(|n| {
                n.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .unwrap_or_default();
        let returns = signature.rsplit_once("->").map(|(_, r)| r.trim());
        if returns.is_some_and(|r| {
            r.starts_with("Result<") && r.replace(' ', "").replace(",>", ">").ends_with(",String>")
        }) {
            found.push(name);
        }
        rest = &decl[end..];
    }
    found
}

/// Where the next `pub fn` or `pub async fn` (not `pub(crate)`) starts a line.
fn next_pub_fn(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("pub fn ") || trimmed.starts_with("pub async fn ") {
            return Some(offset + line.len() - trimmed.len());
        }
        offset += line.len();
    }
    None
}

/// Proves no public product function returns `Result<_, String>` but the listed ones, and that
/// every listed one still does.
#[test]
fn string_errors_only_shrink() {
    let root = workspace_root();
    let mut measured: BTreeSet<(String, String)> = BTreeSet::new();
    for src in PRODUCT_SOURCES {
        for file in non_test_sources(&root.join(src)) {
            let shown = relative(&root, &file);
            for name in string_error_functions(&read(&file)) {
                measured.insert((shown.clone(), name));
            }
        }
    }
    let mut problems = Vec::new();
    for (file, name) in &measured {
        if !STRING_ERRORS.iter().any(|(f, n)| f == file && n == name) {
            problems.push(format!(
                "{file}: pub fn {name} returns Result<_, String>: give it a typed error (the list only shrinks)"
            ));
        }
    }
    for (file, name) in STRING_ERRORS {
        if !measured.contains(&(file.to_string(), name.to_string())) {
            problems.push(format!(
                "{file}: pub fn {name} no longer returns Result<_, String>: remove it from the list"
            ));
        }
    }
    assert_none(&problems, "string errors");
}

/// Proves the scan finds public functions returning a string error over several lines, and
/// leaves out crate-visible ones, other error types and test modules.
#[test]
fn string_error_functions_are_found_by_their_signature() {
    let source = "pub fn a() -> Result<u8, String> {\n}\npub(crate) fn b() -> Result<(), String> {}\n\
                  pub async fn c(\n    x: u8,\n) -> Result<\n    Vec<u8>,\n    String,\n> {\n}\n\
                  pub fn d() -> Result<(), Error> {}\npub fn e() -> String {}\n\
                  #[cfg(test)]\nmod tests {\n    pub fn f() -> Result<(), String> {}\n}\n";
    assert_eq!(string_error_functions(source), ["a", "c"]);
}

//! Repository invariants ("tidy"): rules from `docs/architecture.md` and `docs/testing.md` that
//! would otherwise be guarded only by prose. Each test checks one rule against the tree as it is
//! (cargo metadata, source text, docs) and fails with a message naming what broke it.
//!
//! Uses only std, serde_json and talos-protocol, so it cannot itself widen the dependency graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use talos_protocol::ErrorCode;
use talos_protocol::event::TurnEvent;
use talos_protocol::methods::ALL_METHODS;

/// The packages the dependency matrix knows. A new member must be added here, with its rules.
#[rustfmt::skip]
const KNOWN_MEMBERS: [&str; 6] = [
    "talos-protocol", "talos-core", "talos-webcheck", "talosd", "talos-cli", "talos-tests",
];

/// Normal (and build) dependencies each leaf or client package may have, and nothing else.
const ALLOWED_DEPS: [(&str, &[&str]); 4] = [
    ("talos-protocol", &["serde", "serde_json", "schemars"]),
    // regex-syntax: Unicode's property tables through its parser (pure, no IO; issue 26).
    (
        "talos-core",
        &["serde_json", "sha2", "similar", "regex-syntax"],
    ),
    ("talos-webcheck", &["scraper", "cssparser"]),
    (
        "talos-cli",
        &[
            "talos-protocol",
            "serde_json",
            "clap",
            "clap_complete",
            "clap_mangen",
            "rustix",
            "rustyline",
            "signal-hook",
            "agent-client-protocol-schema",
            "serde",
        ],
    ),
];

/// Crates that mean an async runtime, sockets or HTTP: never in the closure of the pure core,
/// the pure web verifier, the wire crate or the blocking CLI.
#[rustfmt::skip]
const NO_RUNTIME_OR_NETWORK: [&str; 14] = [
    "tokio", "tokio-util", "mio", "socket2", "reqwest", "hyper", "hyper-util", "h2", "async-std",
    "async-io", "smol", "futures-io", "interprocess", "talosd",
];

/// Source text that means IO, the clock, the environment, processes or threads in the pure
/// crates (talos-core, talos-webcheck).
#[rustfmt::skip]
const CORE_FORBIDDEN: [&str; 15] = [
    "std::fs", "std::net", "std::process", "std::env", "std::thread", "std::io",
    "std::time::SystemTime", "SystemTime", "Instant::now", "tokio", "println!", "eprintln!",
    "print!", "eprint!", "dbg!",
];

/// Names that must not appear inside a `use std::{...}` group in the pure crates.
#[rustfmt::skip]
const CORE_FORBIDDEN_STD_ITEMS: [&str; 8] = [
    "fs", "net", "process", "env", "thread", "io", "SystemTime", "Instant",
];

const MAX_LINES: usize = 1_000;
const SPLIT_WANTED_LINES: usize = 600;

const NOT_TAMPER_EVIDENT: &str = "Traces are not tamper-evident: a trace is a plain file with no \
                                  hash chain, signature or append-only enforcement.";

/// Proves the crate dependency matrix: protocol and core are leaves with fixed allow-lists, the
/// CLI depends on the wire only, and only talos-tests depends on talosd.
#[test]
fn crate_dependency_matrix_holds() {
    let metadata = cargo_metadata(true);
    let members = workspace_members(&metadata);
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED_DEPS.into_iter().collect();
    let mut problems = Vec::new();

    for (name, deps) in &members {
        if !KNOWN_MEMBERS.contains(&name.as_str()) {
            problems.push(format!(
                "workspace member `{name}` is not in the dependency matrix: add it to \
                 KNOWN_MEMBERS in tests/tests/tidy/main.rs and describe it in docs/architecture.md"
            ));
        }
        for (dep, kind) in deps {
            if dep == "talosd" && name != "talos-tests" {
                problems.push(format!(
                    "{name} -> talosd ({kind}): only talos-tests may depend on talosd"
                ));
            }
            if name == "talos-cli" && (dep == "tokio" || dep == "talos-core") {
                problems.push(format!(
                    "talos-cli -> {dep} ({kind}): the CLI is a blocking client of the wire only"
                ));
            }
            if kind == "dev" {
                continue;
            }
            if let Some(list) = allowed.get(name.as_str())
                && !list.contains(&dep.as_str())
            {
                problems.push(format!(
                    "{name} -> {dep} ({kind}): not in the allowed set {{{}}}; a new dependency \
                     needs a decision record in docs/decisions/",
                    list.join(", ")
                ));
            }
        }
    }
    for expected in KNOWN_MEMBERS {
        if !members.contains_key(expected) {
            problems.push(format!(
                "`{expected}` is no longer a workspace member: update the matrix"
            ));
        }
    }
    assert_none(&problems, "dependency matrix broken");
}

/// Proves the resolved closures of talos-core, talos-webcheck, talos-protocol and talos-cli hold
/// no async runtime, socket or HTTP crate, and that the others hold neither talosd nor talos-core.
#[test]
fn core_and_cli_pull_in_no_async_runtime_or_network_stack() {
    let metadata = cargo_metadata(false);
    let names: BTreeMap<&str, &str> = array(&metadata, "packages")
        .iter()
        .map(|p| (text(p, "id"), text(p, "name")))
        .collect();
    let resolve = metadata.get("resolve").unwrap_or(&Value::Null);
    let nodes: BTreeMap<&str, &Value> = array(resolve, "nodes")
        .iter()
        .map(|n| (text(n, "id"), n))
        .collect();
    let mut problems = Vec::new();
    for root in [
        "talos-core",
        "talos-webcheck",
        "talos-protocol",
        "talos-cli",
    ] {
        let root_id = names
            .iter()
            .find(|(_, name)| **name == root)
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("{root} is not in cargo metadata"));
        let mut forbidden: Vec<&str> = NO_RUNTIME_OR_NETWORK.to_vec();
        if root != "talos-core" {
            forbidden.push("talos-core");
        }
        for (via, dep_id) in normal_closure(&nodes, root_id) {
            let dep = names.get(dep_id).copied().unwrap_or(dep_id);
            if forbidden.contains(&dep) {
                let via = names.get(via).copied().unwrap_or(via);
                problems.push(format!("{root} pulls in {dep} (through {via})"));
            }
        }
    }
    assert_none(&problems, "forbidden crates in a dependency closure");
}

/// Proves the sources of talos-core and talos-webcheck name no filesystem, network, process,
/// environment, thread, stdio or clock API, and no tokio.
#[test]
fn core_source_does_no_io_and_reads_no_clock() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["talosd/core/src", "talosd/webcheck/src"] {
        let found = files_with_extension(&root.join(dir), "rs");
        assert!(!found.is_empty(), "no sources found under {dir}");
        files.extend(found);
    }
    let mut problems = Vec::new();
    for file in files {
        let code = strip_comments(&read(&file));
        let shown = relative(&root, &file);
        for (number, line) in code.lines().enumerate() {
            for needle in CORE_FORBIDDEN {
                if line.contains(needle) {
                    problems.push(format!("{shown}:{}: `{needle}`", number + 1));
                }
            }
        }
        for group in std_use_groups(&code) {
            for item in identifiers(&group) {
                if CORE_FORBIDDEN_STD_ITEMS.contains(&item) {
                    problems.push(format!("{shown}: `std::{{..{item}..}}` in a use group"));
                }
            }
        }
    }
    assert_none(
        &problems,
        "a pure crate is not pure (values in, values out)",
    );
}

/// Proves every Rust source file opens with a `//!` paragraph saying what it owns.
#[test]
fn every_source_file_opens_with_a_module_doc() {
    let root = workspace_root();
    let mut missing = Vec::new();
    for file in workspace_sources(&root) {
        let content = read(&file);
        let first = content.lines().map(str::trim).find(|l| !l.is_empty());
        if !first.is_some_and(|l| l.starts_with("//!")) {
            missing.push(relative(&root, &file));
        }
    }
    assert_none(&missing, "first non-empty line is not a `//!` module doc");
}

/// Proves no Rust source file is over 1,000 lines (files over 600 are listed when it fails).
#[test]
fn no_source_file_exceeds_the_size_budget() {
    let root = workspace_root();
    let mut sizes: Vec<(usize, String)> = workspace_sources(&root)
        .iter()
        .map(|f| (read(f).lines().count(), relative(&root, f)))
        .filter(|(lines, _)| *lines > SPLIT_WANTED_LINES)
        .collect();
    sizes.sort_by(|a, b| b.cmp(a));
    let listing: Vec<String> = sizes
        .iter()
        .map(|(lines, file)| {
            let verdict = if *lines > MAX_LINES {
                "must be split"
            } else {
                "wants splitting"
            };
            format!("{file}: {lines} lines ({verdict})")
        })
        .collect();
    assert!(
        sizes.iter().all(|(lines, _)| *lines <= MAX_LINES),
        "no source file may exceed {MAX_LINES} lines; files over {SPLIT_WANTED_LINES}:\n  {}",
        listing.join("\n  ")
    );
}

/// Proves docs/protocol.md has a section for every method, names no method that does not exist,
/// and lists every error code.
#[test]
fn protocol_doc_lists_every_method_and_error_code() {
    let doc = read(&workspace_root().join("docs/protocol.md"));
    let method_headings: Vec<&str> = doc
        .lines()
        .filter_map(|l| {
            l.strip_prefix("### ")?
                .trim()
                .strip_prefix('`')?
                .strip_suffix('`')
        })
        .filter(|name| is_method_like(name))
        .collect();
    let mut problems = Vec::new();
    for method in ALL_METHODS {
        match method_headings.iter().filter(|h| **h == method).count() {
            0 => problems.push(format!("no \"### `{method}`\" section")),
            1 => {}
            n => problems.push(format!("{n} \"### `{method}`\" sections")),
        }
    }
    for heading in &method_headings {
        if !ALL_METHODS.contains(heading) {
            problems.push(format!(
                "\"### `{heading}`\" names no method in talos_protocol::methods::ALL_METHODS"
            ));
        }
    }
    for code in ErrorCode::ALL {
        let number = code.code().to_string();
        if !contains_number(&doc, &number) {
            problems.push(format!("error code {number} ({code:?}) does not appear"));
        }
    }
    assert_none(&problems, "docs/protocol.md is out of step with the code");
}

/// Proves docs/protocol.md names every `TurnEvent` kind as the wire spells it.
#[test]
fn protocol_doc_lists_every_turn_event_kind() {
    let doc = read(&workspace_root().join("docs/protocol.md"));
    let samples = turn_event_samples();
    let covered: BTreeSet<usize> = samples.iter().map(variant_number).collect();
    assert_eq!(
        covered,
        (0..TURN_EVENT_VARIANTS).collect::<BTreeSet<_>>(),
        "turn_event_samples() in tidy/main.rs must hold one sample of every TurnEvent variant"
    );
    let mut problems = Vec::new();
    for event in &samples {
        let value = serde_json::to_value(event).unwrap_or(Value::Null);
        let kind = value["kind"].as_str().unwrap_or_default();
        assert!(!kind.is_empty(), "{event:?} serialised without a kind");
        if !doc.contains(&format!("`{kind}`")) {
            problems.push(format!("turn event kind `{kind}` is not listed"));
        }
    }
    assert_none(&problems, "docs/protocol.md is out of step with the code");
}

/// Proves the docs never claim traces resist tampering, keep the not-tamper-evident statement,
/// and say Talos is not an operating-system sandbox.
#[test]
fn docs_make_no_integrity_claims_they_cannot_keep() {
    let root = workspace_root();
    let readme = root.join("README.md");
    let mut all_docs = files_with_extension(&root.join("docs"), "md");
    let mut top_docs: Vec<PathBuf> = all_docs
        .iter()
        .filter(|p| p.parent() == Some(root.join("docs").as_path()))
        .cloned()
        .collect();
    // README.md is written separately; until it exists, the docs alone must carry the rules.
    if readme.is_file() {
        all_docs.push(readme.clone());
        top_docs.push(readme);
    }
    assert!(!all_docs.is_empty(), "no docs found");
    let mut problems = Vec::new();
    for file in &all_docs {
        let normal = normalise(&read(file)).to_lowercase();
        for claim in ["tamper-proof", "tamper proof", "tamperproof"] {
            if normal.contains(claim) {
                problems.push(format!(
                    "{} says \"{claim}\": traces are plain files, say what they do not guarantee",
                    relative(&root, file)
                ));
            }
        }
    }
    let traces = normalise(&read(&root.join("docs/traces.md")));
    if !traces.contains(&normalise(NOT_TAMPER_EVIDENT)) {
        problems.push(format!(
            "docs/traces.md lost the statement: \"{}\"",
            normalise(NOT_TAMPER_EVIDENT)
        ));
    }
    let says_not_a_sandbox = top_docs.iter().any(|file| {
        let normal = normalise(&read(file)).to_lowercase();
        normal.contains("not a sandbox") || normal.contains("not an operating-system sandbox")
    });
    if !says_not_a_sandbox {
        problems.push(
            "neither README.md nor docs/*.md says Talos is \"not an operating-system sandbox\""
                .into(),
        );
    }
    assert_none(&problems, "honesty rules broken");
}

/// Fails with `what` and one problem per line, unless there are none.
#[track_caller]
fn assert_none(problems: &[String], what: &str) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

// --- cargo metadata ---------------------------------------------------------------------------

fn workspace_root() -> PathBuf {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    root.canonicalize()
        .unwrap_or_else(|e| panic!("cannot resolve the workspace root {}: {e}", root.display()))
}

/// `cargo metadata --format-version 1`, offline first (everything is cached after a build),
/// then online if the offline attempt cannot resolve.
fn cargo_metadata(no_deps: bool) -> Value {
    let mut errors = Vec::new();
    for offline in [true, false] {
        let mut args = vec!["metadata", "--format-version", "1"];
        args.extend(no_deps.then_some("--no-deps"));
        args.extend(offline.then_some("--offline"));
        let output = Command::new(env!("CARGO"))
            .args(&args)
            .current_dir(workspace_root())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", env!("CARGO")));
        if output.status.success() {
            return serde_json::from_slice(&output.stdout)
                .unwrap_or_else(|e| panic!("cargo metadata printed invalid JSON: {e}"));
        }
        errors.push(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    panic!("cargo metadata failed:\n{}", errors.join("\n"));
}

/// Each workspace member's name and its declared dependencies as (package name, kind).
fn workspace_members(metadata: &Value) -> BTreeMap<String, Vec<(String, String)>> {
    let ids: BTreeSet<&str> = array(metadata, "workspace_members")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    array(metadata, "packages")
        .iter()
        .filter(|p| ids.contains(text(p, "id")))
        .map(|p| {
            let deps = array(p, "dependencies")
                .iter()
                .map(|d| {
                    let kind = d.get("kind").and_then(Value::as_str).unwrap_or("normal");
                    (text(d, "name").to_string(), kind.to_string())
                })
                .collect();
            (text(p, "name").to_string(), deps)
        })
        .collect()
}

/// Every package reachable from `root` through normal dependency edges, with the package that
/// brought it in.
fn normal_closure<'a>(
    nodes: &BTreeMap<&'a str, &'a Value>,
    root: &'a str,
) -> Vec<(&'a str, &'a str)> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let Some(node) = nodes.get(id) else { continue };
        for dep in array(node, "deps") {
            // Edges only for wasm32 are not in any build of Talos (Linux and Unix only): rmcp's
            // `futures` defaults otherwise put futures-io behind chrono's js-sys (issue 28).
            let normal = array(dep, "dep_kinds").iter().any(|k| {
                k.get("kind").is_none_or(Value::is_null)
                    && !k
                        .get("target")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.contains("target_arch = \"wasm32\""))
            });
            let pkg = text(dep, "pkg");
            if normal && seen.insert(pkg) {
                found.push((id, pkg));
                stack.push(pkg);
            }
        }
    }
    found
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

// --- source and docs --------------------------------------------------------------------------

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The Rust sources of every package, without build output.
fn workspace_sources(root: &Path) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = ["protocol", "talosd", "talos-cli", "tests"]
        .iter()
        .flat_map(|dir| files_with_extension(&root.join(dir), "rs"))
        .collect();
    assert!(
        !files.is_empty(),
        "no Rust sources found under {}",
        root.display()
    );
    files
}

/// Files under `dir` with `extension`, skipping `target/` and hidden folders.
fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if kind.is_file() && path.extension().is_some_and(|e| e == extension) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The source with each line cut at its first `//`, so comments (and doc comments) may name what
/// the code must not use. A `//` inside a string also cuts its line: rustfmt puts statements on
/// lines of their own, and a string can hide a needle but never add one.
fn strip_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text inside every `std::{ ... }` group (nested braces included).
fn std_use_groups(code: &str) -> Vec<String> {
    let mut groups = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find("std::{") {
        let body = &rest[start + "std::{".len()..];
        let mut depth = 1;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        groups.push(body[..end].to_string());
        rest = &body[end..];
    }
    groups
}

fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|s| !s.is_empty())
        .collect()
}

/// `initialize`, `session/new`, ...: what a method heading looks like.
fn is_method_like(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "/_-.".contains(c))
}

/// Whether `number` (e.g. `-32001`) occurs in `text` not as part of a longer number.
fn contains_number(text: &str, number: &str) -> bool {
    text.match_indices(number).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + number.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// Collapses whitespace (so line wrapping does not matter) and spells dash variants as `-`.
fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(
            ['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}'],
            "-",
        )
}

// --- turn events ------------------------------------------------------------------------------

const TURN_EVENT_VARIANTS: usize = 18;

/// One number per `TurnEvent` variant. No wildcard: a new variant is a compile error here, which
/// is the prompt to add a sample below and a row to the kinds table in docs/protocol.md.
fn variant_number(event: &TurnEvent) -> usize {
    match event {
        TurnEvent::Ok { .. } => 0,
        TurnEvent::Streamed { .. } => 1,
        TurnEvent::Error { .. } => 2,
        TurnEvent::Info { .. } => 3,
        TurnEvent::TrustedInfo { .. } => 4,
        TurnEvent::Table { .. } => 5,
        TurnEvent::StreamStart { .. } => 6,
        TurnEvent::StreamChunk { .. } => 7,
        TurnEvent::StreamEnd { .. } => 8,
        TurnEvent::ToolProgress { .. } => 9,
        TurnEvent::ApprovalRequested { .. } => 10,
        TurnEvent::ApprovalResolved { .. } => 11,
        TurnEvent::Outcome { .. } => 12,
        TurnEvent::Plan { .. } => 13,
        TurnEvent::Call { .. } => 14,
        TurnEvent::Progress { .. } => 15,
        TurnEvent::Usage { .. } => 16,
        TurnEvent::Instructions { .. } => 17,
    }
}

/// One sample of each variant, read from its wire form (so the kind names are checked too).
fn turn_event_samples() -> Vec<TurnEvent> {
    let outcome = json!({"turnId": "", "status": "FAILED", "classification": "FAILED",
        "finalAnswer": "", "traceId": "", "files": []});
    [
        json!({"kind": "ok", "text": ""}),
        json!({"kind": "streamed", "text": ""}),
        json!({"kind": "error", "message": ""}),
        json!({"kind": "info", "text": ""}),
        json!({"kind": "trusted_info", "text": ""}),
        json!({"kind": "table", "columns": [], "rows": []}),
        json!({"kind": "stream_start", "stream": ""}),
        json!({"kind": "stream_chunk", "stream": "", "text": ""}),
        json!({"kind": "stream_end", "stream": ""}),
        json!({"kind": "tool_progress", "tool": "", "callId": "", "message": ""}),
        json!({"kind": "approval_requested", "requestId": "", "tool": "", "description": ""}),
        json!({"kind": "approval_resolved", "requestId": "", "decision": "deny", "source": "client"}),
        json!({"kind": "outcome", "outcome": outcome}),
        json!({"kind": "plan", "steps": []}),
        json!({"kind": "call", "callId": "", "tool": "", "status": "running"}),
        json!({"kind": "progress", "modelCall": 0, "tokens": 0}),
        json!({"kind": "usage", "modelCall": 0, "promptTokens": 0, "contextTokens": 0}),
        json!({"kind": "instructions", "files": []}),
    ]
    .into_iter()
    .map(|sample| {
        serde_json::from_value(sample.clone())
            .unwrap_or_else(|e| panic!("{sample} is not a TurnEvent: {e}"))
    })
    .collect()
}

// === Only the Workspace handle touches workspace files (decision 0014) ===================
// docs/decisions/0014-workspace-capability.md. The lint (`disallowed-methods` in
// talosd/clippy.toml) denies the calls; these tests keep the exceptions few and named.

/// talosd sources (a file, or a folder ending in `/`) that may call the filesystem by path, each
/// for files that are not workspace files and each with `#[allow(clippy::disallowed_methods)]`
/// and a one-line reason. `lib.rs` carries the attribute for `webcheck` (the browser's scratch
/// folder).
#[rustfmt::skip]
const FS_ALLOWED: [&str; 15] = [
    // The two handles: the workspace's, and the home's (it makes its roots by path, once).
    "talosd/src/workspace.rs", "talosd/src/workspace/", "talosd/src/home.rs", "talosd/src/home/",
    // Loading config.yaml, the chat template, the key and CA files (the user's, by path).
    "talosd/src/config.rs", "talosd/src/config/ca.rs",
    // The log folder's first file before the daemon detaches, and the socket's folder.
    "talosd/src/main.rs", "talosd/src/socket.rs",
    // Moving logs and indexes from where earlier versions kept them, once, across roots.
    "talosd/src/paths.rs",
    // Launching llama-server (its log and launch record) and reading /proc.
    "talosd/src/supervisor.rs", "talosd/src/runner.rs",
    // The headless browser's scratch folder in the temp dir.
    "talosd/src/webcheck/",
    // `talosd --doctor` inspects the server binary, the model and the home's sizes by path.
    "talosd/src/doctor.rs", "talosd/src/doctor/",
    // A test file that builds hostile folders by path (`*/tests.rs` files are skipped).
    "talosd/src/index/walk_tests.rs",
];

/// Source text that means a path-based filesystem call.
const FS_NEEDLES: [&str; 6] = [
    "std::fs",
    "tokio::fs",
    "File::open",
    "File::create",
    "OpenOptions",
    "DirBuilder",
];

fn fs_allowed(shown: &str) -> bool {
    FS_ALLOWED
        .iter()
        .any(|allowed| shown == *allowed || (allowed.ends_with('/') && shown.starts_with(allowed)))
}

/// The talosd sources with their workspace-relative names.
fn daemon_sources() -> Vec<(String, String)> {
    let root = workspace_root();
    let files = files_with_extension(&root.join("talosd/src"), "rs");
    assert!(!files.is_empty(), "no sources found under talosd/src");
    files
        .iter()
        .map(|file| (relative(&root, file), read(file)))
        .collect()
}

/// Proves only the Workspace handle touches workspace files: outside the named exceptions, no
/// talosd source (test modules aside) uses `std::fs` or another path-based filesystem API.
#[test]
fn only_the_workspace_handle_touches_workspace_files() {
    let mut problems = Vec::new();
    for (shown, source) in daemon_sources() {
        if fs_allowed(&shown) || shown.ends_with("/tests.rs") {
            continue;
        }
        let code = strip_comments(&source);
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        for (number, line) in code.lines().enumerate() {
            for needle in FS_NEEDLES {
                if line.contains(needle) {
                    problems.push(format!("{shown}:{}: `{needle}`", number + 1));
                }
            }
        }
        for group in std_use_groups(code) {
            if identifiers(&group).contains(&"fs") {
                problems.push(format!("{shown}: `std::{{..fs..}}` in a use group"));
            }
        }
    }
    assert_none(
        &problems,
        "only the Workspace handle touches workspace files (use crate::workspace::Workspace, or \
         add a named exception to FS_ALLOWED and to docs/decisions/0014)",
    );
}

/// Proves every exception to the lint is in a named file (or in test code) and says why on the
/// line above.
#[test]
fn filesystem_lint_exceptions_are_named_and_give_a_reason() {
    let mut problems = Vec::new();
    for (shown, source) in daemon_sources() {
        let lines: Vec<&str> = source.lines().collect();
        // Test code may build hostile folders by path wherever it lives.
        let tests_from = if shown.ends_with("tests.rs") {
            0
        } else {
            lines
                .iter()
                .position(|line| line.trim() == "#[cfg(test)]")
                .unwrap_or(lines.len())
        };
        for (index, line) in lines.iter().enumerate() {
            if !line.contains("allow(clippy::disallowed_methods)") || line.trim().starts_with("//")
            {
                continue;
            }
            if !fs_allowed(&shown) && shown != "talosd/src/lib.rs" && index < tests_from {
                problems.push(format!(
                    "{shown}:{}: an exception outside FS_ALLOWED",
                    index + 1
                ));
            }
            let reason = index
                .checked_sub(1)
                .and_then(|above| lines.get(above))
                .is_some_and(|above| above.trim_start().starts_with("//"));
            if !reason {
                problems.push(format!(
                    "{shown}:{}: no one-line reason above the exception",
                    index + 1
                ));
            }
        }
    }
    assert_none(&problems, "filesystem lint exceptions");
}

/// Proves the daemon's clippy.toml (the one clippy reads for talosd) keeps every root setting
/// and denies the path-based filesystem calls.
#[test]
fn daemon_clippy_config_repeats_the_root_and_denies_filesystem_calls() {
    let root = workspace_root();
    let shared = read(&root.join("clippy.toml"));
    let daemon = read(&root.join("talosd/clippy.toml"));
    let daemon_lines: BTreeSet<&str> = daemon.lines().map(str::trim).collect();
    let mut problems: Vec<String> = shared
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter(|line| !daemon_lines.contains(line))
        .map(|line| format!("talosd/clippy.toml lacks the root setting `{line}`"))
        .collect();
    for method in [
        "std::fs::read",
        "std::fs::write",
        "std::fs::read_dir",
        "std::fs::canonicalize",
        "std::fs::symlink_metadata",
        "std::fs::rename",
        "std::fs::remove_dir_all",
        "std::fs::File::open",
        "std::fs::OpenOptions::open",
        "std::path::Path::exists",
    ] {
        if !daemon.contains(&format!("path = \"{method}\"")) {
            problems.push(format!("talosd/clippy.toml does not deny `{method}`"));
        }
    }
    assert_none(&problems, "the daemon's clippy configuration");
}
// === Layering: module cycles and ownership rules (docs/architecture.md) =======================
// The checks are in tests/tests/tidy/layering.rs, and the rules by which a module graph is read
// in tests/tests/tidy/module_graph.rs (kept out of this file, inside its own size budget).

mod config;
mod function_length;
mod layering;
mod module_graph;
mod schema;
mod string_errors;
mod turn_shape;

// === Trace warning codes are documented (docs/traces.md) =======================================

/// Proves every warning code the runtime can write (talos-core's `WarningCode`) is listed in
/// docs/traces.md, and that the doc lists no code the runtime does not have.
#[test]
fn every_trace_warning_code_is_documented() {
    let root = workspace_root();
    let source = read(&root.join("talosd/core/src/turn/record.rs"));
    let body = source
        .split("impl WarningCode")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .unwrap_or_default();
    let codes: BTreeSet<&str> = body
        .split("=> \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(
        codes.len() >= 10,
        "could not read the codes from record.rs: {codes:?}"
    );
    let doc = read(&root.join("docs/traces.md"));
    let section = doc
        .split("## Warning codes")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_default();
    let documented: BTreeSet<&str> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    let mut problems: Vec<String> = codes
        .difference(&documented)
        .map(|c| format!("{c} is written by the runtime but not listed in docs/traces.md"))
        .collect();
    problems.extend(
        documented
            .difference(&codes)
            .map(|c| format!("{c} is listed in docs/traces.md but the runtime has no such code")),
    );
    assert_none(&problems, "trace warning codes");
}

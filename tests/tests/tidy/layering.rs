//! The layering invariants of `docs/architecture.md`: the modules of every crate form a graph
//! without cycles; only the runner and the supervisor start processes; only
//! the engine speaks HTTP or opens network connections.
//!
//! How a module graph is read is written down in `module_graph.rs`.

use std::collections::BTreeSet;
use std::path::Path;

use super::module_graph::{
    Literals, cycles, module_graph, strip_comments_and_literals, strip_source,
    test_module_declarations, top_level_graph, without_test_modules,
};
use super::{assert_none, files_with_extension, read, relative, workspace_root};

/// Files of talosd, besides runner.rs and supervisor.rs, that may start a process, and why.
#[rustfmt::skip]
const SPAWN_EXCEPTIONS: [(&str, &str); 1] = [
    ("talosd/src/main.rs", "the binary, not a module: it starts its own detached daemon"),
];

/// Source text that starts a process or replaces this one.
const SPAWN_NEEDLES: [&str; 7] = [
    "Command::new",
    "tokio::process",
    "std::process::Command",
    "process::{Command",
    "CommandExt",
    ".exec()",
    "execv",
];

/// Source text that speaks HTTP or opens a network connection, with the files allowed to write
/// it besides engine.rs, and why.
#[rustfmt::skip]
const HTTP_NEEDLES: [(&str, &[&str]); 8] = [
    // mcp/http.rs: rmcp's streamable-HTTP client to MCP servers (docs/decisions/0056).
    // engine/body.rs and engine/stream.rs: the engine's own bounded reads of a response.
    ("reqwest", &["talosd/src/mcp/http.rs", "talosd/src/engine/body.rs", "talosd/src/engine/stream.rs"]),
    ("hyper", &[]),
    ("ureq", &[]),
    ("TcpStream", &[]),
    ("UdpSocket", &[]),
    // config.rs: the default `model.url` is a value, nothing is sent from there.
    ("\"http://", &["talosd/src/config.rs"]),
    ("\"https://", &[]),
    ("http://{", &[]),
];

/// Every crate's sources, each with a module its graph must hold (so an empty graph fails).
/// talosd is its library (`main.rs` beside `lib.rs` is the binary); talos-cli is a binary crate
/// whose root is `main`.
const CRATE_SOURCES: [(&str, &str, &str); 6] = [
    ("talos-protocol", "protocol/src", "methods"),
    ("talosd", "talosd/src", "connection"),
    ("talos-core", "talosd/core/src", "proposal/ladder"),
    ("talos-webcheck", "talosd/webcheck/src", "html"),
    ("talos-cli", "talos-cli/src", "failure"),
    ("talos-tests", "tests/src", "harness"),
];

/// talos-core's folders in the order a turn meets them, after the text every stage reads
/// (docs/architecture.md): each names only the folders before it; the turn, last, names any.
const CORE_FOLDERS: [&str; 6] = ["text", "request", "planning", "proposal", "ending", "turn"];

/// Proves the modules of every crate form a graph without cycles (rules in module_graph.rs):
/// in talosd, for one, the connection takes a handler instead of calling back into dispatch.
#[test]
fn no_crate_has_module_cycles() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for (name, src, sentinel) in CRATE_SOURCES {
        let graph = module_graph(&root.join(src));
        if !graph.contains_key(sentinel) {
            problems.push(format!(
                "{name}: the module graph of {src} lacks `{sentinel}`"
            ));
        }
        problems.extend(cycles(&graph).into_iter().map(|c| format!("{name}: {c}")));
        problems.extend(
            cycles(&top_level_graph(&graph))
                .into_iter()
                .map(|c| format!("{name} (top-level modules): {c}")),
        );
    }
    assert_none(&problems, "module cycles");
}

/// Proves talos-core's folders follow the order a turn meets them: a module in one folder names
/// modules of its own folder and of those before it in `CORE_FOLDERS`, never of one after it.
#[test]
fn core_folders_name_only_the_folders_before_them() {
    let graph = top_level_graph(&module_graph(&workspace_root().join("talosd/core/src")));
    let rank = |module: &str| CORE_FOLDERS.iter().position(|f| *f == module);
    for folder in CORE_FOLDERS {
        assert!(
            graph.contains_key(folder),
            "talos-core has no folder `{folder}`"
        );
    }
    let mut problems = Vec::new();
    for (from, to) in graph
        .iter()
        .flat_map(|(from, tos)| tos.iter().map(move |to| (from, to)))
    {
        if let (Some(a), Some(b)) = (rank(from), rank(to))
            && b > a
        {
            problems.push(format!("{from} names {to}, a folder after it"));
        }
    }
    assert_none(&problems, "talos-core folders out of order");
}

/// Proves only runner.rs and supervisor.rs start processes in talosd (exceptions named above).
#[test]
fn only_the_runner_and_the_supervisor_start_processes() {
    let root = workspace_root();
    let allowed = ["talosd/src/runner.rs", "talosd/src/supervisor.rs"];
    let mut problems = Vec::new();
    for file in non_test_sources(&root.join("talosd/src")) {
        let shown = relative(&root, &file);
        if allowed.contains(&shown.as_str()) {
            continue;
        }
        if SPAWN_EXCEPTIONS.iter().any(|(path, _)| *path == shown) {
            continue;
        }
        let code = without_test_modules(&strip_comments_and_literals(&read(&file)));
        for needle in SPAWN_NEEDLES {
            if code.contains(needle) {
                problems.push(format!(
                    "{shown}: `{needle}`: start processes through runner.rs (or supervisor.rs)"
                ));
            }
        }
    }
    assert_none(
        &problems,
        "a process is started outside the runner and the supervisor",
    );
}

/// Proves only engine.rs speaks HTTP or opens network connections in talosd.
#[test]
fn only_the_engine_speaks_http() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for file in non_test_sources(&root.join("talosd/src")) {
        let shown = relative(&root, &file);
        if shown == "talosd/src/engine.rs" {
            continue;
        }
        // URL literals are string contents: only comments and test modules are removed.
        let text = without_test_modules(&strip_source(&read(&file), Literals::Keep));
        let code = without_test_modules(&strip_comments_and_literals(&read(&file)));
        for (needle, exceptions) in HTTP_NEEDLES {
            let haystack = if needle.contains("http") {
                &text
            } else {
                &code
            };
            if haystack.contains(needle) && !exceptions.contains(&shown.as_str()) {
                problems.push(format!("{shown}: `{needle}`: HTTP belongs in engine.rs"));
            }
        }
    }
    assert_none(&problems, "HTTP spoken outside the engine");
}

/// The sources under `src`, without the files that are test modules (`#[cfg(test)] mod x;`).
pub fn non_test_sources(src: &Path) -> Vec<std::path::PathBuf> {
    let files = files_with_extension(src, "rs");
    let test_only: BTreeSet<std::path::PathBuf> = files
        .iter()
        .flat_map(|file| {
            let code = strip_comments_and_literals(&read(file));
            let dir = file.with_extension("");
            let dir = if file
                .file_name()
                .is_some_and(|n| n == "lib.rs" || n == "main.rs")
            {
                src.to_path_buf()
            } else {
                dir
            };
            test_module_declarations(&code)
                .into_iter()
                .map(move |child| dir.join(format!("{child}.rs")))
        })
        .collect();
    files
        .into_iter()
        .filter(|file| !test_only.contains(file))
        .collect()
}

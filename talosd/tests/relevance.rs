//! Relevance of the workspace index on this repository's own source (issue 16): twenty
//! questions a person might ask, each with the one file that answers it, written before the
//! results were looked at. Prints how many have the right file in the top 3 and fails below
//! a floor, so a regression in tokenisation or ranking shows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;

use talosd::index;
use talosd::workspace::Workspace;

const QUESTIONS: [(&str, &str); 20] = [
    (
        "how are sessions stored on disk and read back by a new daemon",
        "talosd/src/session_store.rs",
    ),
    (
        "landlock write confinement and network namespace with unshare",
        "talosd/src/contain.rs",
    ),
    (
        "which paths are protected: secrets, keys, VCS control files",
        "talosd/core/src/text/protected.rs",
    ),
    (
        "unified diff shown in an approval, capped body lines",
        "talosd/core/src/text/diff.rs",
    ),
    (
        "default socket path from XDG_RUNTIME_DIR",
        "protocol/src/socket.rs",
    ),
    (
        "Ctrl-C sends turn/cancel on a second connection",
        "talos-cli/src/interrupt.rs",
    ),
    (
        "wire spelling of protocol enums shown to people",
        "talos-cli/src/spelling.rs",
    ),
    (
        "fake llama server streamed chat completions",
        "tests/src/fake_llama.rs",
    ),
    (
        "managed llama-server launched on 127.0.0.1, port already has a listener",
        "talosd/src/supervisor.rs",
    ),
    (
        "checkpoint manifest completed with each path's state after the change",
        "talosd/src/checkpoint/manifest.rs",
    ),
    (
        "resolve a raw tool name: alias table and backend namespaces",
        "talosd/core/src/planning/tools/names.rs",
    ),
    (
        "JSON-RPC error codes and the message envelope",
        "protocol/src/rpc.rs",
    ),
    ("trace record schemaVersion", "protocol/src/trace.rs"),
    (
        "config.yaml that does not parse stops turns",
        "talosd/src/config.rs",
    ),
    (
        "retention age and size limits: which records to remove",
        "talosd/core/src/ending/retention.rs",
    ),
    (
        "openat2 RESOLVE_BENEATH workspace capability handle",
        "talosd/src/workspace.rs",
    ),
    (
        "camelCase and snake_case identifier split into search terms",
        "talosd/core/src/planning/retrieval.rs",
    ),
    (
        "zip member inflates past the size cap",
        "talosd/src/documents/parse.rs",
    ),
    (
        "extractor child limits address space and CPU seconds",
        "talosd/src/documents/child.rs",
    ),
    (
        "tantivy index writer commit and manifest of indexed files",
        "talosd/src/index.rs",
    ),
];

/// The floor: at least this many of the twenty must have the right file in the top 3.
const FLOOR: usize = 14;

#[test]
fn twenty_questions_on_this_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let home = tempfile::tempdir().unwrap();
    let workspace = Workspace::open(root).unwrap();
    let index_home =
        talosd::home::Store::new(talosd::home::Root::new(home.path().to_path_buf()), ".");
    let built = index::update(&index_home, &workspace, &|| false, &mut |_| {}).unwrap();
    assert!(built.indexed > 100, "{built:?}");
    let mut top3 = 0;
    let mut report = String::new();
    for (question, right) in QUESTIONS {
        let hits = index::search(&index_home, workspace.root(), question, 12).unwrap();
        let mut files: Vec<&str> = Vec::new();
        for hit in &hits {
            // This file holds the questions themselves: it would match every one.
            if hit.path == "talosd/tests/relevance.rs" {
                continue;
            }
            if !files.contains(&hit.path.as_str()) {
                files.push(&hit.path);
            }
        }
        let rank = files.iter().position(|f| *f == right);
        if rank.is_some_and(|r| r < 3) {
            top3 += 1;
        }
        report.push_str(&format!(
            "{:>5} {question} -> {right} (top: {})\n",
            rank.map_or("miss".to_string(), |r| format!("#{}", r + 1)),
            files.iter().take(3).copied().collect::<Vec<_>>().join(", ")
        ));
    }
    println!("{report}right file in the top 3: {top3}/20");
    assert!(top3 >= FLOOR, "{report}only {top3}/20 in the top 3");
}

//! The turn's shape (issue 23): the daemon's turn code stays an interpreter of the core's
//! machine. `talosd/src/turn*` holds at most [`MAX_DAEMON_TURN_LINES`] lines; no function in it,
//! or in `talosd/core/src/turn*`, is longer than [`MAX_FUNCTION_LINES`] lines; and the daemon
//! never writes into the core's record (`record_for_rows` is for table rows only). Lengths are
//! measured as `function_length.rs` measures them, and here no exception is allowed.

use std::path::Path;

use super::function_length::{MAX_FUNCTION_LINES, function_lengths};
use super::{files_with_extension, read, relative, workspace_root};

pub const MAX_DAEMON_TURN_LINES: usize = 1_200;

/// The `.rs` files of `talosd/src/turn.rs` + `turn/` (or the core's) under `root`.
fn turn_files(root: &Path, crate_src: &str) -> Vec<std::path::PathBuf> {
    let src = root.join(crate_src);
    let mut files = vec![src.join("turn.rs")];
    files.extend(files_with_extension(&src.join("turn"), "rs"));
    files
}

#[test]
fn the_daemons_turn_code_stays_small_and_its_functions_short() {
    let root = workspace_root();
    let daemon = turn_files(&root, "talosd/src");
    let total: usize = daemon.iter().map(|f| read(f).lines().count()).sum();
    assert!(
        total <= MAX_DAEMON_TURN_LINES,
        "talosd/src/turn* holds {total} lines, more than {MAX_DAEMON_TURN_LINES}: a decision there belongs in talos-core"
    );
    let mut long = Vec::new();
    for file in daemon
        .iter()
        .chain(turn_files(&root, "talosd/core/src").iter())
    {
        for (name, lines) in function_lengths(&read(file)) {
            if lines > MAX_FUNCTION_LINES {
                long.push(format!(
                    "{}: fn {name}: {lines} lines",
                    relative(&root, file)
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions longer than {MAX_FUNCTION_LINES} lines in the turn code:\n  {}",
        long.join("\n  ")
    );
}

#[test]
fn the_daemon_never_writes_into_the_cores_record() {
    let root = workspace_root();
    let offenders: Vec<String> = files_with_extension(&root.join("talosd/src"), "rs")
        .iter()
        .filter(|f| read(f).contains("record_for_rows"))
        .map(|f| relative(&root, f))
        .collect();
    assert!(
        offenders.is_empty(),
        "the daemon writes into the core's record: {offenders:?}"
    );
}

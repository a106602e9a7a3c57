//! The turn's shape (issue 23): the daemon's turn code stays an interpreter of the core's
//! machine. `talosd/src/turn*` holds at most [`MAX_DAEMON_TURN_LINES`] lines; no function in it,
//! or in `talosd/core/src/turn*`, is longer than [`MAX_FUNCTION_LINES`] lines; and the daemon
//! never writes into the core's record (`record_for_rows` is for table rows only).

use std::path::Path;

use super::{files_with_extension, read, relative, workspace_root};

pub const MAX_DAEMON_TURN_LINES: usize = 1_200;
pub const MAX_FUNCTION_LINES: usize = 80;

/// The `.rs` files of `talosd/src/turn.rs` + `turn/` (or the core's) under `root`.
fn turn_files(root: &Path, crate_src: &str) -> Vec<std::path::PathBuf> {
    let src = root.join(crate_src);
    let mut files = vec![src.join("turn.rs")];
    files.extend(files_with_extension(&src.join("turn"), "rs"));
    files
}

/// Each function's name and its length in lines, from `fn` to its closing brace (test modules
/// skipped). A function's body is found by counting braces from its first `{`; strings and
/// comments holding braces are rare enough in this code that the count is kept simple.
pub fn function_lengths(source: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut found = Vec::new();
    let mut i = 0;
    while i < end {
        let line = lines[i].trim_start();
        let is_fn = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "async fn ",
            "pub async fn ",
        ]
        .iter()
        .any(|p| line.starts_with(p));
        if !is_fn {
            i += 1;
            continue;
        }
        let name: String = line
            .split("fn ")
            .nth(1)
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut opened, mut j) = (0i64, false, i);
        while j < lines.len() {
            for c in lines[j].chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if lines[j].trim_end().ends_with(';') && !opened {
                break;
            }
            if opened && depth == 0 {
                break;
            }
            j += 1;
        }
        found.push((name, j - i + 1));
        i = j + 1;
    }
    found
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

#[test]
fn function_lengths_are_measured_from_fn_to_its_closing_brace() {
    let source = "fn a() {\n    x();\n}\n\npub fn b(\n    y: u8,\n) -> u8 {\n    if y { 1 } else { 2 }\n}\nfn c();\n#[cfg(test)]\nfn d() {\n}\n";
    assert_eq!(
        function_lengths(source),
        [
            ("a".to_string(), 3),
            ("b".to_string(), 5),
            ("c".to_string(), 1)
        ]
    );
}

//! Short functions (issue 30, item 4): no function in the product code (the non-test sources
//! of talos-protocol, talosd, talos-core, talos-webcheck and talos-cli) is longer than
//! [`MAX_FUNCTION_LINES`] lines, except those in [`LONG_FUNCTIONS`], a list that may only
//! shrink: each entry states its function's length today, and the test fails when a listed
//! function grew, shrank (lower the number) or fell to the limit or below (remove it), and when
//! a listed function is gone. [`function_lengths`] is how a length is measured; the turn's own
//! tighter rule (`turn_shape.rs`) uses it too.

use std::collections::BTreeMap;

use super::layering::non_test_sources;
use super::module_graph::{Literals, strip_source};
use super::{assert_none, read, relative, workspace_root};

/// The longest a product function may be, from `fn` to its closing brace.
pub const MAX_FUNCTION_LINES: usize = 80;

/// The crates whose functions are measured: the product, not the tests.
const PRODUCT_SOURCES: [&str; 5] = [
    "protocol/src",
    "talosd/src",
    "talosd/core/src",
    "talosd/webcheck/src",
    "talos-cli/src",
];

/// Functions longer than [`MAX_FUNCTION_LINES`] today: file, function, its length in lines.
/// Shorten one and lower (or remove) its entry; never add one.
#[rustfmt::skip]
const LONG_FUNCTIONS: &[(&str, &str, usize)] = &[
    ("talosd/core/src/proposal/ladder.rs", "decide", 116),
    ("talosd/core/src/planning/tools/catalogue.rs", "params", 152),
    ("talosd/core/src/planning/tools/normalise.rs", "normalise", 153),
    ("talosd/core/src/request/contract/cues.rs", "simple_listing_shape", 87),
    ("talosd/src/checkpoint.rs", "capture_entries", 90),
    ("talosd/src/checkpoint/restore.rs", "run", 93),
    ("talosd/src/index.rs", "search", 84),
    ("talosd/src/retention/scan.rs", "scan", 81),
    ("talosd/src/workspace/files.rs", "write_atomic", 84),
    ("talosd/src/workspace/resolve.rs", "follow", 102),
    ("talosd/webcheck/src/html.rs", "page_facts", 121),
    ("talosd/webcheck/src/lib.rs", "check_page", 93),
];

/// Each function's name and its length in lines, from `fn` to its closing brace. Comments and
/// the contents of string and char literals are blanked first (keeping their lines), so a brace
/// in them does not count; an item marked `#[cfg(test)]` (a test module, a test-only helper) is
/// skipped whole.
pub fn function_lengths(source: &str) -> Vec<(String, usize)> {
    let code = strip_source(source, Literals::BlankKeepingLines);
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if let Some(rest) = line.strip_prefix("#[cfg(test)]") {
            let item = if rest.trim().is_empty() { i + 1 } else { i };
            i = item_end(&lines, item) + 1;
            continue;
        }
        let Some(name) = function_name(line) else {
            i += 1;
            continue;
        };
        let end = item_end(&lines, i);
        found.push((name, end - i + 1));
        i = end + 1;
    }
    found
}

/// The name of the function a line declares (`pub(crate) async fn name<T>(…`), if it does.
fn function_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while words.peek().is_some_and(|w| {
        matches!(*w, "pub" | "const" | "async" | "unsafe" | "extern") || w.starts_with("pub(")
    }) {
        words.next();
    }
    if words.next() != Some("fn") {
        return None;
    }
    let name: String = words
        .next()?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The last line of the item starting at `start`: where its first `{` block closes, or the
/// line ending in `;` when it has no block.
fn item_end(lines: &[&str], start: usize) -> usize {
    let (mut depth, mut opened) = (0i64, false);
    for (j, line) in lines.iter().enumerate().skip(start) {
        for c in line.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if (!opened && line.trim_end().ends_with(';')) || (opened && depth <= 0) {
            return j;
        }
    }
    lines.len().saturating_sub(1)
}

/// Proves no product function is longer than the limit but the listed ones, and that the list
/// states each listed function's length today.
#[test]
fn product_functions_are_short_and_the_long_ones_are_listed() {
    let root = workspace_root();
    let mut measured: BTreeMap<(String, String), usize> = BTreeMap::new();
    for src in PRODUCT_SOURCES {
        for file in non_test_sources(&root.join(src)) {
            let shown = relative(&root, &file);
            for (name, lines) in function_lengths(&read(&file)) {
                let entry = measured.entry((shown.clone(), name)).or_default();
                *entry = (*entry).max(lines);
            }
        }
    }
    assert!(
        measured.len() > 500,
        "only {} functions measured: the scan looks broken",
        measured.len()
    );
    let mut problems = Vec::new();
    for ((file, name), lines) in &measured {
        let listed = LONG_FUNCTIONS
            .iter()
            .find(|(f, n, _)| f == file && n == name);
        match listed {
            None if *lines > MAX_FUNCTION_LINES => problems.push(format!(
                "{file}: fn {name}: {lines} lines, more than {MAX_FUNCTION_LINES}: split it"
            )),
            None => {}
            Some(_) if *lines <= MAX_FUNCTION_LINES => problems.push(format!(
                "{file}: fn {name}: {lines} lines now: remove it from the list"
            )),
            Some((_, _, was)) if lines > was => problems.push(format!(
                "{file}: fn {name}: grew from {was} to {lines} lines: the list only shrinks"
            )),
            Some((_, _, was)) if lines < was => problems.push(format!(
                "{file}: fn {name}: {lines} lines now: lower its entry from {was}"
            )),
            Some(_) => {}
        }
    }
    for (file, name, _) in LONG_FUNCTIONS {
        if !measured.contains_key(&(file.to_string(), name.to_string())) {
            problems.push(format!(
                "{file}: fn {name} is gone: remove it from the list"
            ));
        }
    }
    assert_none(&problems, "function lengths");
}

/// Proves a function is measured from `fn` to its closing brace, braces in strings, chars and
/// comments not counted, test items skipped.
#[test]
fn function_lengths_are_measured_from_fn_to_its_closing_brace() {
    let source = "fn a() {\n    x();\n}\n\npub fn b(\n    y: u8,\n) -> u8 {\n    if y { 1 } else { 2 }\n}\nfn c();\n\
                  #[cfg(test)]\nmod tests;\npub(crate) async fn e() {\n    let s = \"}\";\n    \
                  let c = '{';\n    // }\n}\n#[cfg(test)]\nfn d() {\n}\nconst fn f() {}\n";
    assert_eq!(
        function_lengths(source),
        [
            ("a".to_string(), 3),
            ("b".to_string(), 5),
            ("c".to_string(), 1),
            ("e".to_string(), 5),
            ("f".to_string(), 1),
        ]
    );
}

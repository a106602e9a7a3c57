//! The module graph of a crate's sources, read from the text, and its cycles.
//!
//! How a module graph is read. A module is a source file: `contract.rs` and
//! `contract/lexical.rs` are two nodes, named `contract` and `contract/lexical`. The crate root
//! is `lib` (`lib.rs`), or `main` for a binary crate without a `lib.rs`; beside a `lib.rs`,
//! `main.rs` and the files under `bin/` are other crates and are left out. An edge A -> B is any path in A's code
//! (comments, string and char literals and `#[cfg(test)]` modules removed) that names B: a `use`
//! of `crate::…`, `super::…`, `self::…` or of a child module A declares, and any qualified
//! `crate::b::…`, `super::…` or `child::…` path in an expression or a type. A path resolves to
//! the longest prefix that is a module file; `mod x;` itself is no edge. Two rules decide how a
//! parent and its children count:
//! - a child naming its own ancestor (`super::Isolation` in `command/profiles`) is no edge: a
//!   child is part of its parent's implementation and may use the parent's types. A parent
//!   naming its child (`use clauses::Clauses` in `intent`) is an edge. So siblings that use
//!   each other (`command/{grammar,profiles,workspace}`) form a cycle among themselves, while a
//!   parent that facades its children does not;
//! - naming another module's child (`crate::contract::lexical` from `targets`) is an edge to
//!   that child and to each of its ancestors that is not also an ancestor of the user: the path
//!   goes through the parent, so `targets` depended on `contract` as well.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{files_with_extension, read};

/// Checks the graph builder against small sources whose edges are known.
#[test]
fn module_graph_reads_the_edges_it_should() {
    let rows: [(&str, &[(&str, &str)], &str); 7] = [
        (
            "a sibling cycle through `super::` is found; the child -> parent edge is not",
            &[
                ("lib.rs", "mod p;"),
                ("p.rs", "mod a;\nmod b;\npub use a::X;\npub struct T;"),
                ("p/a.rs", "use super::b::Y;\nuse super::T;\npub struct X;"),
                ("p/b.rs", "use super::a::X;\npub struct Y;"),
            ],
            "p -> p/a\np/a -> p/b\np/b -> p/a\ncycle: p/a -> p/b -> p/a",
        ),
        (
            "reaching into another module's child goes through that parent",
            &[
                ("lib.rs", "mod c;\nmod t;"),
                ("c.rs", "pub mod lex;\nuse crate::t::Span;"),
                ("c/lex.rs", "pub struct Lex;"),
                ("t.rs", "use crate::c::lex::Lex;\npub struct Span;"),
            ],
            "c -> t\nt -> c, c/lex\ncycle: c -> t -> c",
        ),
        (
            "comments, strings and test modules name nothing",
            &[
                ("lib.rs", "mod a;\nmod b;"),
                (
                    "a.rs",
                    "// use crate::b;\nconst S: &str = \"crate::b::X\";\n\
                     #[cfg(test)]\nmod tests {\n    use crate::b::X;\n}",
                ),
                ("b.rs", "use crate::a;"),
            ],
            "b -> a",
        ),
        (
            "grouped and nested use trees and qualified paths all count",
            &[
                ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;"),
                (
                    "a.rs",
                    "use crate::{b::{self, X}, c::Y as Z};\nfn f() { crate::d::g(); }",
                ),
                ("b.rs", ""),
                ("c.rs", ""),
                ("d.rs", ""),
            ],
            "a -> b, c, d",
        ),
        (
            "a test-only file is no node",
            &[
                ("lib.rs", "mod a;"),
                ("a.rs", "#[cfg(test)]\nmod tests;"),
                ("a/tests.rs", "use crate::a::*;"),
            ],
            "",
        ),
        (
            "a binary crate's main.rs is its root, and its modules are read",
            &[
                ("main.rs", "mod a;\nmod b;\nfn main() { a::f(); }"),
                ("a.rs", "use crate::b::G;\npub fn f() {}"),
                ("b.rs", "pub struct G;\nfn g() { crate::a::f(); }"),
            ],
            "a -> b\nb -> a\nmain -> a\ncycle: a -> b -> a",
        ),
        (
            "beside a lib.rs, main.rs and bin/ are other crates",
            &[
                ("lib.rs", "pub mod a;"),
                ("a.rs", "pub fn f() {}"),
                ("main.rs", "mod x;\nuse crate::a;"),
                ("bin/tool.rs", "mod y;\nuse crate::a;"),
            ],
            "",
        ),
    ];
    for (row, (what, files, expected)) in rows.into_iter().enumerate() {
        check_module_graph(row, what, files, expected);
    }
}

/// Fails with `what` unless the graph of `files` (path, source) prints as `expected`: one
/// `node -> targets` line per node with edges, then one `cycle:` line per cycle.
#[track_caller]
fn check_module_graph(row: usize, what: &str, files: &[(&str, &str)], expected: &str) {
    let dir = std::env::temp_dir().join(format!("talos-tidy-graph-{}-{}", std::process::id(), row));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, source) in files {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        std::fs::write(&file, format!("//! test\n{source}\n"))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    let graph = module_graph(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let mut lines: Vec<String> = graph
        .iter()
        .filter(|(_, targets)| !targets.is_empty())
        .map(|(node, targets)| {
            let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
            format!("{node} -> {}", targets.join(", "))
        })
        .collect();
    lines.extend(cycles(&graph).into_iter().map(|c| format!("cycle: {c}")));
    assert_eq!(lines.join("\n"), expected, "{what}");
}

/// The module graph of the crate whose sources are under `src` (its root is `lib`, or `main`
/// for a binary crate; see the block comment above for the rules).
pub fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let root = if src.join("lib.rs").is_file() {
        "lib"
    } else {
        "main"
    };
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for file in files_with_extension(src, "rs") {
        let Ok(rel) = file.strip_prefix(src) else {
            continue;
        };
        let name = rel.with_extension("").to_string_lossy().replace('\\', "/");
        let other_crate = root == "lib" && (name == "main" || name.starts_with("bin/"));
        if !other_crate {
            sources.insert(name, strip_comments_and_literals(&read(&file)));
        }
    }
    let test_only: BTreeSet<String> = sources
        .iter()
        .flat_map(|(name, code)| {
            test_module_declarations(code)
                .into_iter()
                .map(move |child| {
                    [module_segments(name, root), vec![child]]
                        .concat()
                        .join("/")
                })
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = sources
        .keys()
        .filter(|name| !test_only.contains(*name))
        .map(|name| module_segments(name, root))
        .collect();
    let mut graph = BTreeMap::new();
    for (name, code) in &sources {
        if test_only.contains(name) {
            continue;
        }
        let me = module_segments(name, root);
        let code = without_test_modules(code);
        let children = declared_modules(&code);
        let mut targets = BTreeSet::new();
        for path in referenced_paths(&code, &children) {
            let Some(target) = resolve_module(&me, &path, &children, &modules) else {
                continue;
            };
            if target.is_empty() || me.starts_with(&target) {
                continue; // the crate root, the module itself, or one of its ancestors
            }
            for depth in 1..=target.len() {
                let through = &target[..depth];
                if depth == target.len() || !me.starts_with(through) {
                    targets.insert(through.join("/"));
                }
            }
        }
        graph.insert(node_name(&me, root), targets);
    }
    graph
}

fn module_segments(name: &str, root: &str) -> Vec<String> {
    if name == root {
        return Vec::new();
    }
    name.split('/').map(str::to_string).collect()
}

fn node_name(segments: &[String], root: &str) -> String {
    if segments.is_empty() {
        root.into()
    } else {
        segments.join("/")
    }
}

/// `mod x;` declarations (not inline `mod x { … }` blocks).
fn declared_modules(code: &str) -> BTreeSet<String> {
    let tokens = tokens(code);
    tokens
        .windows(3)
        .filter(|w| w[0] == "mod" && w[2] == ";")
        .map(|w| w[1].to_string())
        .collect()
}

/// The children declared as `#[cfg(test)] mod x;`.
pub fn test_module_declarations(code: &str) -> Vec<String> {
    let compact: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut found = Vec::new();
    let mut rest = compact.as_str();
    while let Some(at) = rest.find("#[cfg(test)] mod ") {
        let after = &rest[at + "#[cfg(test)] mod ".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if after[name.len()..].trim_start().starts_with(';') {
            found.push(name);
        }
        rest = after;
    }
    found
}

/// The code without `#[cfg(test)] mod x { … }` blocks.
pub fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let is_block = trimmed.starts_with("mod ")
            && trimmed
                .find(['{', ';'])
                .is_some_and(|i| trimmed.as_bytes()[i] == b'{');
        if !is_block {
            out.push_str("#[cfg(test)]");
            rest = after;
            continue;
        }
        let open = after.len() - trimmed.len() + trimmed.find('{').unwrap_or(0);
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every path a module names that can lead to another module of the crate: expanded `use`
/// trees, and qualified `crate::`, `super::`, `self::` and `child::` paths elsewhere.
fn referenced_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" {
            let end = tokens[i..]
                .iter()
                .position(|t| *t == ";")
                .map_or(tokens.len(), |p| i + p);
            expand_use_tree(&tokens[i + 1..end], &[], &mut paths);
            i = end + 1;
            continue;
        }
        let starts_path =
            matches!(tokens[i], "crate" | "super" | "self") || children.contains(tokens[i]);
        let qualified = i == 0 || tokens[i - 1] != "::";
        if starts_path && qualified && tokens.get(i + 1) == Some(&"::") {
            let mut path = vec![tokens[i].to_string()];
            let mut j = i + 1;
            while tokens.get(j) == Some(&"::") && tokens.get(j + 1).is_some_and(|t| is_ident(t)) {
                path.push(tokens[j + 1].to_string());
                j += 2;
            }
            paths.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
    paths
}

/// Expands one `use` tree (`a::{b, c::{self, D}}`) into its leaf paths.
fn expand_use_tree(tree: &[&str], prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < tree.len() {
        match tree[i] {
            "::" => i += 1,
            "{" => {
                let mut depth = 0usize;
                let mut start = i + 1;
                for j in i..tree.len() {
                    match tree[j] {
                        "{" => depth += 1,
                        "}" => depth -= 1,
                        "," if depth == 1 => {
                            expand_use_tree(&tree[start..j], &path, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                    if depth == 0 {
                        expand_use_tree(&tree[start..j], &path, out);
                        return;
                    }
                }
                return;
            }
            "as" => break,
            "self" | "*" if !path.is_empty() => i += 1,
            token if is_ident(token) => {
                path.push(token.to_string());
                i += 1;
            }
            _ => i += 1,
        }
    }
    if !path.is_empty() {
        out.push(path);
    }
}

/// The module (as segments from the crate root) that `path`, written in module `me`, names:
/// the longest prefix that is a module of the crate. `None` for paths outside the crate.
fn resolve_module(
    me: &[String],
    path: &[String],
    children: &BTreeSet<String>,
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let (mut full, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (me.to_vec(), &path[1..]),
        Some("super") => {
            let mut base = me.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        Some(first) if children.contains(first) => (me.to_vec(), path),
        _ => return None,
    };
    full.extend(rest.iter().cloned());
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|candidate| candidate.is_empty() || modules.contains(candidate))
}

/// Identifiers, `::` and single punctuation characters of already stripped code.
fn tokens(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(&code[start..i]);
        } else if code[i..].starts_with("::") {
            out.push("::");
            i += 2;
        } else if c.is_ascii_whitespace() || !c.is_ascii() {
            i += 1;
        } else {
            out.push(&code[i..=i]);
            i += 1;
        }
    }
    out
}

fn is_ident(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

/// Rust source without comments and without the contents of string and char literals (each
/// literal becomes `""` or `' '`), so neither can name a module or a needle.
pub fn strip_comments_and_literals(source: &str) -> String {
    strip_source(source, Literals::Blank)
}

/// What [`strip_source`] does with string and char literals.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Literals {
    Keep,
    Blank,
    /// Blanked, keeping their line breaks (and those of block comments), so that every line
    /// stays where it was: for counting lines.
    BlankKeepingLines,
}

/// Rust source without comments; string and char literals kept or blanked.
pub fn strip_source(source: &str, literals: Literals) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev = if i == 0 { None } else { Some(chars[i - 1]) };
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' && literals == Literals::BlankKeepingLines {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
            out.push(' ');
        } else if (c == 'r' || c == 'b')
            && !prev.is_some_and(ident)
            && raw_string_start(&chars, i).is_some()
        {
            let (hashes, body) = raw_string_start(&chars, i).unwrap_or((0, i));
            let mut j = body;
            while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            push_literal(&mut out, &chars[i..j.min(chars.len())], "\"\"", literals);
            i = j;
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            push_literal(
                &mut out,
                &chars[start..i.min(chars.len())],
                "\"\"",
                literals,
            );
        } else if c == '\'' && char_literal_len(&chars, i) > 0 {
            let start = i;
            i += char_literal_len(&chars, i);
            push_literal(&mut out, &chars[start..i.min(chars.len())], "' '", literals);
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn push_literal(out: &mut String, literal: &[char], blank: &str, literals: Literals) {
    match literals {
        Literals::Keep => out.extend(literal),
        Literals::Blank => out.push_str(blank),
        Literals::BlankKeepingLines => {
            out.push_str(blank);
            out.extend(literal.iter().filter(|c| **c == '\n'));
        }
    }
}

/// For a raw string (`r"…"`, `r#"…"#`, `br"…"`) starting at `at`: its `#` count and the index
/// just after the opening quote.
fn raw_string_start(chars: &[char], at: usize) -> Option<(usize, usize)> {
    let mut i = at;
    if chars.get(i) == Some(&'b') {
        i += 1;
    }
    if chars.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let hashes = chars[i..].iter().take_while(|c| **c == '#').count();
    (chars.get(i + hashes) == Some(&'"')).then_some((hashes, i + hashes + 1))
}

/// The length of a char literal starting at `at` (`'a'`, `'\n'`, `'\u{1F600}'`), or 0 for a
/// lifetime or label.
fn char_literal_len(chars: &[char], at: usize) -> usize {
    match (chars.get(at + 1), chars.get(at + 2)) {
        (Some('\\'), _) => chars[at + 2..]
            .iter()
            .position(|c| *c == '\'')
            .map_or(0, |p| p + 3),
        (Some(_), Some('\'')) => 3,
        _ => 0,
    }
}

/// The graph of the crate's top-level modules: each module stands for itself and everything
/// under it (`checkpoint` for `checkpoint/restore`), and an edge between two modules under
/// different top-level ones is an edge between those. A cycle here is two areas of the crate
/// that each reach into the other, though no two files do.
pub fn top_level_graph(
    graph: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let top = |node: &str| node.split('/').next().unwrap_or(node).to_string();
    let mut collapsed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (node, targets) in graph {
        let from = top(node);
        let entry = collapsed.entry(from.clone()).or_default();
        entry.extend(targets.iter().map(|t| top(t)).filter(|t| *t != from));
    }
    collapsed
}

/// Every cycle of the graph: one line per strongly connected component of two or more nodes,
/// spelled as one concrete cycle through all of it when there is one (`a -> b -> a`).
pub fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(node) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|node| (node, reach(node))).collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for node in graph.keys() {
        if done.contains(node) || !reachable[node].contains(node) {
            continue;
        }
        let component: BTreeSet<String> = reachable[node]
            .iter()
            .filter(|other| reachable.get(other).is_some_and(|r| r.contains(node)))
            .cloned()
            .collect();
        done.extend(component.iter().cloned());
        found.push(cycle_through(graph, node, &component));
    }
    found
}

/// A shortest cycle from `start` back to itself inside `component`, with the component's other
/// members appended when the cycle does not pass through them.
fn cycle_through(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    component: &BTreeSet<String>,
) -> String {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.to_string()]);
    let mut last = None;
    while let Some(node) = queue.pop_front() {
        for next in graph.get(&node).into_iter().flatten() {
            if !component.contains(next) {
                continue;
            }
            if next == start {
                last = Some(node.clone());
                break;
            }
            if !came_from.contains_key(next) {
                came_from.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
        if last.is_some() {
            break;
        }
    }
    let mut path = vec![start.to_string()];
    let mut node = last.unwrap_or_else(|| start.to_string());
    while node != start {
        path.insert(1, node.clone());
        node = came_from
            .get(&node)
            .cloned()
            .unwrap_or_else(|| start.to_string());
    }
    path.push(start.to_string());
    let others: Vec<&str> = component
        .iter()
        .filter(|n| !path.contains(n))
        .map(String::as_str)
        .collect();
    let mut line = path.join(" -> ");
    if !others.is_empty() {
        line.push_str(&format!(" (same cycle group: {})", others.join(", ")));
    }
    line
}

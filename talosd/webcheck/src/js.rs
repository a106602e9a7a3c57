//! JavaScript side of the static-web verifier: a small scan of string literals (JS is not
//! parsed), the element lookups among them, and the words every literal mentions.
//!
//! Comments are skipped; `'...'`, `"..."` and `` `...` `` literals are read with escapes. Regular
//! expression literals are not recognised, so a quote inside one can confuse the scan; the
//! checks built on it only report what they are sure of.

use std::collections::BTreeSet;

use super::css::selector_names;

/// One string literal found in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Literal {
    /// Byte offset of the opening quote.
    start: usize,
    /// Byte offset just past the closing quote.
    end: usize,
    /// The text between the quotes (escapes kept as written).
    value: String,
    /// A template literal with a `${...}` part.
    interpolated: bool,
}

/// What kind of element lookup a literal is the argument of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LookupKind {
    /// `getElementById("x")`.
    Id,
    /// `getElementsByClassName("x")`.
    Class,
    /// `querySelector(...)` / `querySelectorAll(...)`.
    Selector,
}

/// An element lookup with a constant argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lookup {
    /// Which call.
    pub kind: LookupKind,
    /// The literal argument.
    pub arg: String,
    /// Ids named by the argument.
    pub ids: Vec<String>,
    /// Classes named by the argument.
    pub classes: Vec<String>,
}

/// What the checks need from one script.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScriptFacts {
    /// Lookups whose only argument is one constant literal.
    pub lookups: Vec<Lookup>,
    /// Words (`[A-Za-z0-9_-]+`) of every literal that is not a lookup argument: names the
    /// script may give elements itself (`el.id = "x"`, `classList.add("open")`, markup).
    pub dynamic_words: BTreeSet<String>,
    /// Words of every literal, lookup arguments included.
    pub all_words: BTreeSet<String>,
    /// The script attaches handlers (`addEventListener(` or an `.onxxx =` assignment).
    pub attaches_handlers: bool,
}

/// Scan one script's source.
pub(crate) fn script_facts(src: &str) -> ScriptFacts {
    let mut facts = ScriptFacts {
        attaches_handlers: src.contains("addEventListener") || has_on_assignment(src),
        ..ScriptFacts::default()
    };
    for lit in literals(src) {
        add_words(&mut facts.all_words, &lit.value);
        match lookup_of(src, &lit) {
            Some(kind) if !lit.interpolated => {
                let (ids, classes) = match kind {
                    LookupKind::Id => (vec![lit.value.clone()], Vec::new()),
                    LookupKind::Class => (
                        Vec::new(),
                        lit.value.split_whitespace().map(str::to_string).collect(),
                    ),
                    LookupKind::Selector => {
                        let names = selector_names(&lit.value);
                        (names.ids, names.classes)
                    }
                };
                facts.lookups.push(Lookup {
                    kind,
                    arg: lit.value.clone(),
                    ids,
                    classes,
                });
            }
            _ => add_words(&mut facts.dynamic_words, &lit.value),
        }
    }
    facts
}

/// `.onclick =` style assignments (not `==`).
fn has_on_assignment(src: &str) -> bool {
    let bytes = src.as_bytes();
    let mut from = 0;
    while let Some(pos) = src[from..].find(".on") {
        let mut i = from + pos + 3;
        let name_start = i;
        while i < bytes.len() && bytes[i].is_ascii_lowercase() {
            i += 1;
        }
        let named = i > name_start;
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        if named && bytes.get(i) == Some(&b'=') && bytes.get(i + 1) != Some(&b'=') {
            return true;
        }
        from = from + pos + 3;
    }
    false
}

fn add_words(set: &mut BTreeSet<String>, text: &str) {
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
        if !word.is_empty() {
            set.insert(word.to_string());
        }
    }
}

/// Whether `lit` is the sole argument of a lookup call: `name(` before it, `)` after it.
fn lookup_of(src: &str, lit: &Literal) -> Option<LookupKind> {
    let before = src[..lit.start].trim_end();
    let before = before.strip_suffix('(')?.trim_end();
    let name_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .map_or(0, |i| i + 1);
    let kind = match &before[name_start..] {
        "getElementById" => LookupKind::Id,
        "getElementsByClassName" => LookupKind::Class,
        "querySelector" | "querySelectorAll" => LookupKind::Selector,
        _ => return None,
    };
    src[lit.end..].trim_start().starts_with(')').then_some(kind)
}

/// Every string literal of `src`, comments skipped.
fn literals(src: &str) -> Vec<Literal> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = src[i..].find('\n').map_or(bytes.len(), |n| i + n + 1);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = src[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            quote @ (b'\'' | b'"' | b'`') => {
                let start = i;
                i += 1;
                let mut interpolated = false;
                while i < bytes.len() && bytes[i] != quote {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if quote != b'`' && bytes[i] == b'\n' {
                        break;
                    } else if quote == b'`' && bytes[i] == b'$' && bytes.get(i + 1) == Some(&b'{') {
                        interpolated = true;
                    }
                    i += 1;
                }
                let end = (i + 1).min(bytes.len());
                let value = src.get(start + 1..i.min(bytes.len())).unwrap_or("");
                out.push(Literal {
                    start,
                    end,
                    value: value.to_string(),
                    interpolated,
                });
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_skip_comments_and_read_escapes() {
        let src = "// 'no'\n/* \"no\" */ a('x\\'y', \"z\", `t${v}`)";
        let lits: Vec<_> = literals(src).into_iter().map(|l| l.value).collect();
        assert_eq!(lits, vec!["x\\'y", "z", "t${v}"]);
    }

    /// Expected lookup: kind, ids, classes.
    type Want = Option<(LookupKind, &'static [&'static str], &'static [&'static str])>;

    #[test]
    fn lookups_table() {
        let rows: &[(&str, Want)] = &[
            (
                "document.getElementById('a')",
                Some((LookupKind::Id, &["a"], &[])),
            ),
            (
                "document.getElementById( \"a\" )",
                Some((LookupKind::Id, &["a"], &[])),
            ),
            (
                "q.querySelector('#a .b')",
                Some((LookupKind::Selector, &["a"], &["b"])),
            ),
            (
                "q.querySelectorAll(\".b\")",
                Some((LookupKind::Selector, &[], &["b"])),
            ),
            (
                "getElementsByClassName('c d')",
                Some((LookupKind::Class, &[], &["c", "d"])),
            ),
            ("document.getElementById('a' + n)", None),
            ("document.getElementById(`a${n}`)", None),
            ("el.classList.add('a')", None),
        ];
        for (src, want) in rows {
            let facts = script_facts(src);
            let got = facts
                .lookups
                .first()
                .map(|l| (l.kind, l.ids.clone(), l.classes.clone()));
            let want = want.map(|(k, ids, cls)| {
                let s = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
                (k, s(ids), s(cls))
            });
            assert_eq!(got, want, "src: {src}");
        }
    }

    #[test]
    fn handler_attachment_table() {
        let rows = [
            ("b.addEventListener('click', f)", true),
            ("b.onclick = f", true),
            ("if (b.onclick == f) {}", false),
            ("let x = 1", false),
        ];
        for (src, want) in rows {
            assert_eq!(script_facts(src).attaches_handlers, want, "src: {src}");
        }
    }

    #[test]
    fn dynamic_words_exclude_lookup_arguments() {
        let facts = script_facts("document.getElementById('a').classList.toggle('open-x')");
        assert!(facts.dynamic_words.contains("open-x"));
        assert!(!facts.dynamic_words.contains("a"));
        assert!(facts.all_words.contains("a"));
    }
}

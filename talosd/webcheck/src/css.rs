//! CSS side of the static-web verifier: the ids and classes that a stylesheet's rules (or a
//! JavaScript selector string) name, found with `cssparser`'s tokenizer.
//!
//! Only simple `#id` and `.class` parts at the top level of a selector are taken; the insides of
//! functional pseudo-classes (`:not(.x)`, `:is(...)`) and of attribute selectors (`[type=x]`)
//! are skipped, as are the bodies of at-rules other than grouping ones (`@media`, `@supports`,
//! `@layer`, `@container`, `@scope`, `@document`), so `@keyframes` percentages never count.

use cssparser::{ParseError, Parser, ParserInput, Token};

/// One qualified rule's selector and the ids/classes it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleNames {
    /// The selector text as written (trimmed).
    pub selector: String,
    /// `#id` parts.
    pub ids: Vec<String>,
    /// `.class` parts.
    pub classes: Vec<String>,
    /// Element-type parts (`p`, `card`), lowercased; `*` and pseudo-class names left out.
    pub types: Vec<String>,
}

/// At-rules whose block holds ordinary rules.
const GROUPING_AT_RULES: &[&str] = &[
    "media",
    "supports",
    "layer",
    "container",
    "scope",
    "document",
];

/// The selectors of every qualified rule of `css`, nested grouping at-rules included.
pub(crate) fn stylesheet_rules(css: &str) -> Vec<RuleNames> {
    let mut input = ParserInput::new(css);
    let mut parser = Parser::new(&mut input);
    let mut out = Vec::new();
    rules(&mut parser, &mut out);
    out
}

/// The ids and classes named by one selector string (as passed to `querySelector`).
pub(crate) fn selector_names(selector: &str) -> RuleNames {
    let mut input = ParserInput::new(selector);
    let mut parser = Parser::new(&mut input);
    let mut tokens = Vec::new();
    while let Ok(tok) = parser.next_including_whitespace() {
        tokens.push(tok.clone());
    }
    let (ids, classes) = names_of(&tokens);
    RuleNames {
        selector: selector.trim().to_string(),
        ids,
        classes,
        types: types_of(&tokens),
    }
}

fn rules<'i>(p: &mut Parser<'i, '_>, out: &mut Vec<RuleNames>) {
    let mut start = p.position();
    let mut prelude: Vec<Token<'i>> = Vec::new();
    let mut at_rule: Option<String> = None;
    loop {
        let tok = match p.next_including_whitespace() {
            Ok(tok) => tok.clone(),
            Err(_) => break,
        };
        match tok {
            Token::AtKeyword(ref name) if prelude.is_empty() && at_rule.is_none() => {
                at_rule = Some(name.to_ascii_lowercase());
            }
            Token::Semicolon => {
                prelude.clear();
                at_rule = None;
                start = p.position();
            }
            Token::CurlyBracketBlock => {
                match at_rule.take() {
                    Some(name) if GROUPING_AT_RULES.contains(&name.as_str()) => {
                        let _ = p.parse_nested_block(|nested| {
                            rules(nested, out);
                            Ok::<(), ParseError<'i, ()>>(())
                        });
                    }
                    Some(_) => {}
                    None => {
                        let text = p.slice_from(start);
                        let text = text.strip_suffix('{').unwrap_or(text).trim();
                        let (ids, classes) = names_of(&prelude);
                        out.push(RuleNames {
                            selector: text.to_string(),
                            ids,
                            classes,
                            types: types_of(&prelude),
                        });
                    }
                }
                prelude.clear();
                start = p.position();
            }
            Token::WhiteSpace(_) if prelude.is_empty() && at_rule.is_none() => {
                start = p.position();
            }
            other => prelude.push(other),
        }
    }
}

/// Top-level `#id` (an `IDHash` token) and `.class` (a `.` delimiter right before an
/// identifier) parts of a token list; nested blocks were skipped by the tokenizer.
fn names_of(tokens: &[Token<'_>]) -> (Vec<String>, Vec<String>) {
    let mut ids = Vec::new();
    let mut classes = Vec::new();
    for (i, tok) in tokens.iter().enumerate() {
        match tok {
            Token::IDHash(name) => push_unique(&mut ids, name),
            Token::Delim('.') => {
                if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                    push_unique(&mut classes, name);
                }
            }
            _ => {}
        }
    }
    (ids, classes)
}

/// Top-level element-type parts: an identifier not right after a `.` (a class) or a `:` (a
/// pseudo-class or pseudo-element), lowercased.
fn types_of(tokens: &[Token<'_>]) -> Vec<String> {
    let mut types = Vec::new();
    for (i, tok) in tokens.iter().enumerate() {
        if let Token::Ident(name) = tok {
            let after = i.checked_sub(1).and_then(|j| tokens.get(j));
            if !matches!(after, Some(Token::Delim('.' | '|') | Token::Colon)) {
                push_unique(&mut types, &name.to_ascii_lowercase());
            }
        }
    }
    types
}

fn push_unique(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|n| n == name) {
        list.push(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(css: &str) -> Vec<(Vec<String>, Vec<String>)> {
        stylesheet_rules(css)
            .into_iter()
            .map(|r| (r.ids, r.classes))
            .collect()
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rule_names_table() {
        let rows: &[(&str, Vec<(Vec<String>, Vec<String>)>)] = &[
            (
                "#a .b, p.c { color: red }",
                vec![(v(&["a"]), v(&["b", "c"]))],
            ),
            (".btn:hover { color: red }", vec![(v(&[]), v(&["btn"]))]),
            ("input[type=text] { x: y }", vec![(v(&[]), v(&[]))]),
            ("a:not(.x) { x: y }", vec![(v(&[]), v(&[]))]),
            (
                "@media (max-width: 600px) { .m { x: y } } .n { x: y }",
                vec![(v(&[]), v(&["m"])), (v(&[]), v(&["n"]))],
            ),
            ("@keyframes k { from { a: b } 50% { a: c } }", vec![]),
            (
                "@import url(x.css); /* c */ #z { a: b }",
                vec![(v(&["z"]), v(&[]))],
            ),
            ("body { color: #abc; }", vec![(v(&[]), v(&[]))]),
        ];
        for (css, want) in rows {
            assert_eq!(&names(css), want, "css: {css}");
        }
    }

    #[test]
    fn rule_types_table() {
        let rows: &[(&str, Vec<Vec<String>>)] = &[
            ("card { x: y }", vec![v(&["card"])]),
            (
                "P.c, Ul > li:hover::after { x: y }",
                vec![v(&["p", "ul", "li"])],
            ),
            (".a #b *:not(p) [type=x] { x: y }", vec![v(&[])]),
            ("@keyframes k { from { a: b } to { a: c } }", vec![]),
            ("@media print { nav { x: y } }", vec![v(&["nav"])]),
        ];
        for (css, want) in rows {
            let got: Vec<Vec<String>> =
                stylesheet_rules(css).into_iter().map(|r| r.types).collect();
            assert_eq!(&got, want, "css: {css}");
        }
    }

    #[test]
    fn selector_text_is_kept() {
        let rules = stylesheet_rules("  /* x */ .a > #b:hover {}\n.c{}");
        let texts: Vec<_> = rules.iter().map(|r| r.selector.as_str()).collect();
        assert_eq!(texts, vec![".a > #b:hover", ".c"]);
    }

    #[test]
    fn selector_string_names() {
        let r = selector_names("#menu .item, button.primary");
        assert_eq!(r.ids, v(&["menu"]));
        assert_eq!(r.classes, v(&["item", "primary"]));
    }
}

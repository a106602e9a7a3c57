//! Changes of whole lines a request names by what they hold: "Comment out the print statement
//! in main.py", "uncomment the line with DEBUG", "remove the line containing legacy". The
//! words after the verb name the line by a word it holds (the needle); the file's own comment
//! marker is the file's business (`crate::proposal::change_rule`).

use super::ChangeAsk;

/// Words that say what kind of line it is, not what it holds.
#[rustfmt::skip]
const LINE_NOUNS: &[&str] = &[
    "line", "lines", "statement", "statements", "call", "calls", "import", "entry", "setting",
    "row", "definition", "declaration",
];

const LINKS: &[&str] = &[
    "with",
    "containing",
    "holding",
    "that",
    "which",
    "has",
    "says",
    "for",
];

const SKIPPED: &[&str] = &["the", "a", "an", "this", "that", "out", "one"];

/// The line change the request names, if its words name the line by a word it holds.
pub(super) fn read(request: &str) -> Option<ChangeAsk> {
    let words: Vec<String> = request
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(c, ',' | '.' | ';' | '!' | '?' | ':' | '`' | '"' | '\'')
            })
            .to_string()
        })
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let verb = lower.iter().position(|w| {
        matches!(
            w.as_str(),
            "comment" | "uncomment" | "remove" | "delete" | "drop"
        )
    })?;
    let kind = lower[verb].as_str();
    if kind == "comment" && lower.get(verb + 1).map(String::as_str) != Some("out") {
        return None;
    }
    let mut k = verb + 1;
    let mut named_line = false;
    let mut needle: Option<&str> = None;
    while let Some(w) = lower.get(k) {
        if SKIPPED.contains(&w.as_str()) || LINKS.contains(&w.as_str()) {
            k += 1;
            continue;
        }
        if LINE_NOUNS.contains(&w.as_str()) {
            named_line = true;
            k += 1;
            continue;
        }
        if needle.is_some() || matches!(w.as_str(), "in" | "from" | "of" | "inside") {
            break;
        }
        needle = Some(words[k].as_str());
        k += 1;
    }
    let needle = needle
        .filter(|n| n.chars().any(char::is_alphanumeric))?
        .to_string();
    if needle.contains('.') && !needle.contains('(') && kind != "comment" && kind != "uncomment" {
        // "remove config.py" names a file, not a line.
        return None;
    }
    match kind {
        "comment" => Some(ChangeAsk::CommentOut { needle }),
        "uncomment" => Some(ChangeAsk::Uncomment { needle }),
        // "remove the logging" is not a line; "remove the line with logging" is.
        _ if named_line => Some(ChangeAsk::RemoveLine { needle }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves a line named by a word it holds is read, and a file or a vague thing is not.
    #[test]
    fn line_change_rows() {
        let comment = |n: &str| Some(ChangeAsk::CommentOut { needle: n.into() });
        let uncomment = |n: &str| Some(ChangeAsk::Uncomment { needle: n.into() });
        let remove = |n: &str| Some(ChangeAsk::RemoveLine { needle: n.into() });
        let rows: Vec<(&str, Option<ChangeAsk>)> = vec![
            (
                "Comment out the print statement in main.py",
                comment("print"),
            ),
            (
                "comment out the line with DEBUG in config.py",
                comment("DEBUG"),
            ),
            (
                "Uncomment the `console.log` line in app.js",
                uncomment("console.log"),
            ),
            (
                "uncomment the line containing log_level",
                uncomment("log_level"),
            ),
            (
                "Remove the line with legacy from flags.yaml",
                remove("legacy"),
            ),
            ("delete the import sys line in main.py", remove("sys")),
            ("Remove config.py", None),
            ("Remove the logging from app.py", None),
            ("Comment on this function", None),
        ];
        for (request, expected) in rows {
            assert_eq!(read(request), expected, "{request}");
        }
    }
}

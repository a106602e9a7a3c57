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

/// Words that place or describe a line rather than name what it holds ("line 42", "the last
/// line", "the unused import"): Talos cannot check them from the words, so nothing is pinned.
#[rustfmt::skip]
const DESCRIBED: &[&str] = &[
    "first", "second", "third", "fourth", "fifth", "last", "next", "previous", "empty",
    "blank", "unused", "duplicate", "duplicated", "extra", "other", "all", "every", "two",
    "three", "four", "five", "few", "some", "old", "broken", "commented", "top", "bottom",
];

/// The line change the request names, if its words name the line by a word it holds.
pub(super) fn read(request: &str) -> Option<ChangeAsk> {
    if let Some(ask) = quoted_needle(request) {
        return Some(ask);
    }
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
    let mut needle: Option<String> = None;
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
        if matches!(w.as_str(), "in" | "from" | "of" | "inside" | "at" | "on") {
            break;
        }
        if named_line && needle.is_none() && lower[k - 1] == "line" {
            // "the line DEBUG = True": the words after "line" are the line's text.
            let end = (k..lower.len())
                .find(|&j| matches!(lower[j].as_str(), "in" | "from" | "of" | "inside"))
                .unwrap_or(lower.len());
            let text = words[k..end].join(" ");
            needle = Some(text);
            k = end;
            break;
        }
        if needle.is_some() {
            // Two words that describe the line ("the debug print") do not say which word it
            // holds.
            return None;
        }
        needle = Some(words[k].clone());
        k += 1;
    }
    let needle = needle.filter(|n| n.chars().any(char::is_alphanumeric))?;
    let described = DESCRIBED.contains(&needle.to_lowercase().as_str())
        || needle.chars().all(|c| c.is_ascii_digit());
    // "… and the import above it" asks for a second line the words do not name.
    let more = lower[k..]
        .iter()
        .any(|w| matches!(w.as_str(), "and" | "also" | "then"));
    let file = needle.contains('.') && !needle.contains('(');
    if described || more || (file && !matches!(kind, "comment" | "uncomment")) {
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

/// "uncomment `import pdb`", "comment out the `console.log` calls": a quoted passage right
/// after the verb (and its determiner) is the text the line holds.
fn quoted_needle(request: &str) -> Option<ChangeAsk> {
    let lower = request.to_lowercase();
    let verbs = [
        "comment out ",
        "uncomment ",
        "remove the line ",
        "delete the line ",
        "remove the ",
        "delete the ",
    ];
    let (verb_end, kind) = verbs
        .iter()
        .find_map(|v| lower.find(v).map(|at| (at + v.len(), *v)))?;
    let rest = request[verb_end..].trim_start();
    let rest = rest.strip_prefix("the ").unwrap_or(rest);
    let quote = rest.chars().next().filter(|c| matches!(c, '`' | '"'))?;
    let inner = &rest[1..];
    let needle = inner[..inner.find(quote)?].trim().to_string();
    let after = inner[inner.find(quote)? + 1..].to_lowercase();
    let names_line = LINE_NOUNS
        .iter()
        .any(|n| after.split_whitespace().next() == Some(n));
    if needle.is_empty() {
        return None;
    }
    Some(match kind {
        "comment out " => ChangeAsk::CommentOut { needle },
        "uncomment " => ChangeAsk::Uncomment { needle },
        "remove the line " | "delete the line " => ChangeAsk::RemoveLine { needle },
        _ if names_line => ChangeAsk::RemoveLine { needle },
        _ => return None,
    })
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

//! The exact literal a request asks a file to hold ("Overwrite notes.txt with exactly AFTER"),
//! when Talos is sure of it. A quoted literal (double quotes or backticks) is kept as written,
//! with `\n` standing for a newline; a block after "exactly:" and a line break is taken whole.
//! An unquoted literal ends at the end of its sentence ("with exactly AFTER. Then tell me" is
//! `AFTER`), and it is certain only when it is one word: "with exactly two short lines" reads
//! as a description, so no literal is returned and the model's content is not corrected.

/// The markers an exact literal follows.
const MARKERS: [&str; 5] = [
    "with exactly",
    "to exactly",
    "containing exactly",
    "contain exactly",
    "content exactly",
];

/// The literal the request asks for, or `None` when there is none or Talos cannot be sure of it.
pub fn exact_literal(request: &str) -> Option<String> {
    let lower = request.to_lowercase();
    let marker = MARKERS
        .iter()
        .find_map(|m| lower.find(m).map(|i| i + m.len()))?;
    let after_marker = &request[marker..];
    let rest = after_marker.trim_start_matches([':', ' ']);
    if let Some(literal) = quoted(rest, '"').or_else(|| quoted(rest, '`')) {
        let literal = literal.replace("\\n", "\n");
        return (!literal.is_empty()).then_some(literal);
    }
    let colon_block =
        after_marker.trim_start_matches(' ').starts_with(':') && rest.starts_with(['\n', '\r']);
    if colon_block {
        let block = rest.trim_start_matches(['\n', '\r']).trim_end();
        return (!block.is_empty()).then(|| block.to_string());
    }
    let sentence = first_sentence(rest).trim();
    let one_word = !sentence.is_empty() && !sentence.contains(char::is_whitespace);
    one_word.then(|| sentence.to_string())
}

/// The text between a leading `q` and the next `q`.
fn quoted(rest: &str, q: char) -> Option<String> {
    rest.strip_prefix(q)
        .and_then(|r| r.find(q).map(|end| r[..end].to_string()))
}

/// `text` up to its first sentence end: a line break, or `.`, `!`, `?` followed by whitespace
/// or the end of the text.
fn first_sentence(text: &str) -> &str {
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '\n' || c == '\r' {
            return &text[..at];
        }
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, next)| next.is_whitespace())
        {
            return &text[..at];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(request: &str, expected: Option<&str>) {
        assert_eq!(exact_literal(request).as_deref(), expected, "{request}");
    }

    /// Proves a literal is taken when certain and left alone when it is not.
    #[test]
    fn exact_literal_rows() {
        for (request, expected) in [
            ("Overwrite index.html with exactly AFTER", Some("AFTER")),
            ("Overwrite index.html with exactly AFTER.", Some("AFTER")),
            (
                "Overwrite index.html with exactly AFTER. Then tell me what changed.",
                Some("AFTER"),
            ),
            (
                "Replace notes.txt with exactly AFTER! Thanks",
                Some("AFTER"),
            ),
            (
                "Set version.txt to exactly 1.2.3. Then stop.",
                Some("1.2.3"),
            ),
            (
                "Overwrite a.txt with exactly AFTER\nThen list files",
                Some("AFTER"),
            ),
            (
                "Overwrite notes.txt with exactly \"hello world\"",
                Some("hello world"),
            ),
            (
                "Overwrite notes.txt with exactly \"hi. there\". Then stop",
                Some("hi. there"),
            ),
            ("Overwrite notes.txt with exactly: `a\\nb`", Some("a\nb")),
            (
                "Overwrite notes.txt with exactly:\nline one\nline two\n",
                Some("line one\nline two"),
            ),
            (
                "Overwrite notes.txt with exactly two short lines about cats.",
                None,
            ),
            (
                "Overwrite notes.txt with exactly hello world. Then stop",
                None,
            ),
            ("Overwrite notes.txt with exactly", None),
            ("Overwrite notes.txt with exactly . Then stop", None),
            ("In settings.py, change TIMEOUT from 30 to 60.", None),
        ] {
            check(request, expected);
        }
    }
}

//! Lines of proposed content and what each one looks like: a fence, markdown commentary
//! (a heading, a list item, a rule, bold text, a quote, a link, or a sentence that opens an
//! explanation such as "This code ..." or "Let me know ..."), a plain English sentence, or
//! anything else, which is taken to be file content. Anything that could be code (a line
//! ending in `;`, `{`, `}`, `)` or `,`, an operator, an HTML tag, a comment marker, an
//! indented line that is not a list item) is content.

/// One line: where it starts, where the next one starts, and its text without terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Line<'a> {
    pub start: usize,
    pub next: usize,
    pub text: &'a str,
}

/// What a line looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Blank,
    /// A fence at column 0: three or more backticks and an optional language word.
    Fence,
    /// A line that opens or belongs to markdown commentary.
    Markdown,
    /// A plain English sentence.
    Prose,
    /// Anything else: file content.
    Content,
}

/// Phrases that open an explanation written after the file content.
const OPENERS: [&str; 58] = [
    "Explanation",
    "Explanations",
    "Note:",
    "Notes:",
    "Note that",
    "NOTE:",
    "Summary",
    "Changes",
    "Key changes",
    "Key Changes",
    "Key points",
    "Key Points",
    "Improvements",
    "Usage:",
    "How it works",
    "How to use",
    "What changed",
    "What's changed",
    "Important:",
    "Warning:",
    "Tip:",
    "Remember",
    "Please ",
    "To use",
    "To run",
    "To test",
    "This code",
    "This version",
    "This file",
    "This script",
    "This implementation",
    "This update",
    "This change",
    "This will",
    "This should",
    "This ",
    "These ",
    "The above",
    "The code",
    "The updated",
    "The changes",
    "The file",
    "Here is",
    "Here's",
    "Here are",
    "I have",
    "I've",
    "I updated",
    "I added",
    "I changed",
    "I made",
    "I fixed",
    "I removed",
    "I replaced",
    "I hope",
    "Hope this",
    "Let me know",
    "Feel free",
];

/// Splits content into lines; a final line without terminator is a line too.
pub(super) fn split(content: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    while start < content.len() {
        let next = content[start..]
            .find('\n')
            .map_or(content.len(), |i| start + i + 1);
        let text = content[start..next]
            .strip_suffix('\n')
            .unwrap_or(&content[start..next]);
        let text = text.strip_suffix('\r').unwrap_or(text);
        lines.push(Line { start, next, text });
        start = next;
    }
    lines
}

/// A fence at column 0 with an optional language word after it.
pub(super) fn is_fence(text: &str) -> bool {
    let info = text.trim_end().trim_start_matches('`');
    text.len() - text.trim_start_matches('`').len() >= 3
        && info
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.' | '#'))
}

/// A fence at column 0 with nothing after it: what closes a block.
pub(super) fn is_bare_fence(text: &str) -> bool {
    let text = text.trim_end();
    text.len() >= 3 && text.bytes().all(|b| b == b'`')
}

/// What a line looks like; `headings` says whether `# Title` can be commentary (it is a
/// comment or directive in some languages).
pub(super) fn classify(text: &str, headings: bool) -> Kind {
    let trimmed = text.trim_end();
    if trimmed.trim_start().is_empty() {
        return Kind::Blank;
    }
    if is_fence(trimmed) {
        return Kind::Fence;
    }
    let indent = trimmed.len() - trimmed.trim_start_matches(' ').len();
    let body = &trimmed[indent..];
    if body.starts_with('\t') {
        return Kind::Content;
    }
    if let Some(item) = list_item(body) {
        return if indent <= 6 && !code_like(item) && words(item) >= 2 {
            Kind::Markdown
        } else {
            Kind::Content
        };
    }
    if indent > 0 || code_like(body) {
        return Kind::Content;
    }
    if is_rule(body) || (headings && heading(body)) || markdown_start(body) || opener(body) {
        return Kind::Markdown;
    }
    if sentence(body) {
        return Kind::Prose;
    }
    Kind::Content
}

/// Phrases only an assistant writes after file content: they may open commentary that has
/// no fence before it. Generic ones ("This ...", "Note:", "Usage:") also open docstrings.
const ASSISTANT_OPENERS: [&str; 31] = [
    "Explanation",
    "Explanations",
    "Key changes",
    "Key Changes",
    "What changed",
    "What's changed",
    "Changes made",
    "This code",
    "This version",
    "This updated",
    "This implementation",
    "The above",
    "The updated",
    "The changes",
    "Here is",
    "Here's",
    "Here are",
    "I have",
    "I've",
    "I updated",
    "I added",
    "I changed",
    "I made",
    "I fixed",
    "I removed",
    "I replaced",
    "I hope",
    "Hope this",
    "Let me know",
    "Feel free",
    "Summary of changes",
];

/// Whether a line opens commentary written without a fence: assistant-speak, plain or in
/// bold (`**Explanation:**`), shaped as a sentence or a label and not like code.
pub(super) fn opens_assistant_commentary(text: &str) -> bool {
    let body = text.trim_end();
    let inner = body.strip_prefix("**").unwrap_or(body);
    classify(body, false) == Kind::Markdown
        && ASSISTANT_OPENERS.iter().any(|phrase| {
            inner.strip_prefix(phrase).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with([' ', ':', ',', '*', '.', '!'])
            })
        })
}

/// A horizontal rule: `---`, `***` or `___`.
pub(super) fn is_rule(body: &str) -> bool {
    let body = body.trim_end();
    body.len() >= 3
        && ['-', '*', '_']
            .iter()
            .any(|mark| body.chars().all(|c| c == *mark))
}

fn heading(body: &str) -> bool {
    let level = body.len() - body.trim_start_matches('#').len();
    (1..=6).contains(&level) && body[level..].starts_with(' ') && words(&body[level..]) >= 1
}

/// The text of a list item (`- x`, `* x`, `+ x`, `1. x`, `2) x`).
fn list_item(body: &str) -> Option<&str> {
    if let Some(rest) = body
        .strip_prefix("- ")
        .or_else(|| body.strip_prefix("* "))
        .or_else(|| body.strip_prefix("+ "))
    {
        return Some(rest);
    }
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if !(1..=2).contains(&digits) {
        return None;
    }
    body[digits..]
        .strip_prefix(". ")
        .or_else(|| body[digits..].strip_prefix(") "))
}

/// Bold text, a quote, a link or an image at the start of the line.
fn markdown_start(body: &str) -> bool {
    let bold = ["**", "__"].iter().any(|mark| {
        body.strip_prefix(mark)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_alphanumeric()))
    });
    let quote = body.strip_prefix("> ").is_some_and(|rest| words(rest) >= 2);
    let link = body.starts_with('[') && body.contains("](");
    bold || quote || link || body.starts_with("![")
}

/// An opener phrase that is written as a sentence or a label.
fn opener(body: &str) -> bool {
    OPENERS.iter().any(|phrase| {
        body.strip_prefix(phrase).is_some_and(|rest| {
            phrase.ends_with([' ', ':']) || rest.is_empty() || rest.starts_with([' ', ':', ','])
        })
    }) && (sentence(body) || body.trim_end().ends_with(':'))
}

/// A plain sentence: a capital letter, two or more words, and closing punctuation.
fn sentence(body: &str) -> bool {
    let body = body.trim_end();
    body.starts_with(|c: char| c.is_uppercase())
        && body.ends_with(['.', '!', '?', ':'])
        && words(body) >= 2
}

fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|word| word.chars().any(char::is_alphabetic))
        .count()
}

/// Whether a line could be code: after inline `code` spans are removed, it ends like a
/// statement or block, holds an operator or tag, or starts like a comment.
pub(super) fn code_like(text: &str) -> bool {
    let mut plain = String::new();
    for (index, part) in text.split('`').enumerate() {
        if index % 2 == 0 {
            plain.push_str(part);
        }
    }
    let plain = plain.trim();
    let comment = ["//", "/*", "*/", "#!", "<!--", "-->", "--"]
        .iter()
        .any(|marker| plain.starts_with(marker))
        && !is_rule(plain);
    let operators = [
        " = ", "==", "=>", "->", "::", "&&", "||", "();", "{", "}", "<",
    ]
    .iter()
    .any(|op| plain.contains(op));
    comment || operators || plain.ends_with([';', '{', '}', '(', ')', '[', ']', ',', '\\', '='])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves the line classes, code first.
    #[test]
    fn classify_rows() {
        let rows: [(&str, bool, Kind); 24] = [
            ("", false, Kind::Blank),
            ("```", false, Kind::Fence),
            ("```python", false, Kind::Fence),
            ("``` not a fence", false, Kind::Content),
            ("## Summary", true, Kind::Markdown),
            ("## Summary", false, Kind::Content),
            ("- Added error handling", false, Kind::Markdown),
            ("  - nested item here", false, Kind::Markdown),
            ("- x = 1;", false, Kind::Content),
            ("1. First change.", false, Kind::Markdown),
            ("---", false, Kind::Markdown),
            ("**Explanation:**", false, Kind::Markdown),
            ("> Quoted remark here", false, Kind::Markdown),
            ("This code does X.", false, Kind::Markdown),
            ("Let me know if you need more.", false, Kind::Markdown),
            ("Explanation:", false, Kind::Markdown),
            ("I updated `main()` to return 0.", false, Kind::Markdown),
            ("It now returns early.", false, Kind::Prose),
            ("    return x", false, Kind::Content),
            ("}", false, Kind::Content),
            ("# comment", false, Kind::Content),
            ("// This code does X.", false, Kind::Content),
            ("<div>Hello there.</div>", false, Kind::Content),
            ("print(\"This code does X.\")", false, Kind::Content),
        ];
        for (text, headings, kind) in rows {
            assert_eq!(classify(text, headings), kind, "{text:?}");
        }
    }
}

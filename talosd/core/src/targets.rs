//! Target extraction from a request: the file names a person wrote, the ones they excluded,
//! kept exactly as written (plural and singular alike).

/// File extensions that make a token a file target.
const TARGET_EXTENSIONS: &[&str] = &[
    "html",
    "htm",
    "css",
    "js",
    "jsx",
    "ts",
    "tsx",
    "java",
    "py",
    "md",
    "txt",
    "json",
    "yaml",
    "yml",
    "xml",
    "properties",
    "gradle",
    "kts",
    "toml",
    "ini",
    "env",
    "csv",
    "rs",
    "go",
    "c",
    "h",
    "cpp",
    "hpp",
    "rb",
    "php",
    "sh",
    "sql",
    "cfg",
    "conf",
    "lock",
    "tmp",
];

/// Extensionless file names recognised as targets.
const BARE_TARGETS: &[&str] = &[
    "README",
    "LICENSE",
    "NOTICE",
    "CHANGELOG",
    "CONTRIBUTING",
    "AUTHORS",
    "Makefile",
    "Dockerfile",
];

/// Phrases that open a span whose file targets are forbidden.
const NEGATION_OPENERS: &[&str] = &[
    "do not change",
    "do not edit",
    "do not modify",
    "do not write",
    "do not touch",
    "do not create",
    "do not update",
    "do not delete",
    "don't change",
    "don't edit",
    "don't modify",
    "don't write",
    "don't touch",
    "don't create",
    "don't update",
    "don't delete",
    "dont change",
    "dont edit",
    "dont modify",
    "dont touch",
    "dont write",
    "without changing",
    "without touching",
    "without modifying",
    "never change",
    "never touch",
    "leave",
    "avoid",
];

/// The file targets named in `text`, in order of first appearance, deduplicated.
pub fn file_targets(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ',' | ';' | '(' | ')' | '"' | '`' | '\'' | '[' | ']' | '{' | '}' | '<' | '>'
            )
    }) {
        let token = normalise_token(raw);
        if token.is_empty() || !is_target(&token) {
            continue;
        }
        if !out.contains(&token) {
            out.push(token);
        }
    }
    out
}

/// The targets the person excluded: file targets inside a negated span ("Do not change
/// index.html or scripts.js."), each span cut at the end of its sentence.
pub fn forbidden_targets(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    for opener in NEGATION_OPENERS {
        let mut from = 0;
        while let Some(found) = lower[from..].find(opener) {
            let start = from + found;
            from = start + opener.len();
            if !word_boundary_before(&lower, start) {
                continue;
            }
            let span_end = sentence_end(text, from);
            let span = &text[from..span_end];
            if *opener == "leave"
                && !span.to_lowercase().contains("alone")
                && !span.to_lowercase().contains("unchanged")
                && !span.to_lowercase().contains("as is")
            {
                continue;
            }
            for target in file_targets(span) {
                if !out.contains(&target) {
                    out.push(target);
                }
            }
        }
    }
    out
}

fn word_boundary_before(text: &str, index: usize) -> bool {
    index == 0
        || text[..index]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_alphanumeric())
}

/// The index just past the sentence that starts at `from`: a `.`, `!`, `?` or `;` followed by
/// whitespace or the end, or a newline.
fn sentence_end(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' || b == b';' || b == b'!' || b == b'?' {
            return i;
        }
        if b == b'.' && (i + 1 == bytes.len() || bytes[i + 1].is_ascii_whitespace()) {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

fn normalise_token(raw: &str) -> String {
    let mut token = raw.replace('\\', "/");
    while let Some(stripped) = token.strip_prefix("./") {
        token = stripped.to_string();
    }
    token
        .trim_end_matches(['.', ',', ':', '!', '?', ';'])
        .to_string()
}

fn is_target(token: &str) -> bool {
    if BARE_TARGETS.contains(&token) {
        return true;
    }
    let name = token.rsplit('/').next().unwrap_or(token);
    if name == ".env" || name.starts_with(".env.") {
        return true;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if stem.is_empty() && !name.starts_with('.') {
        return false;
    }
    let valid_chars = token
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    valid_chars && TARGET_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(text: &str, expected: &[&str], forbidden: &[&str]) {
        assert_eq!(file_targets(text), expected, "targets of {text:?}");
        assert_eq!(forbidden_targets(text), forbidden, "forbidden of {text:?}");
    }

    #[test]
    fn targets_rows() {
        check(
            "In settings.py, change TIMEOUT from 30 to 60.",
            &["settings.py"],
            &[],
        );
        check(
            "Fix only styles.css. Do not change index.html or scripts.js.",
            &["styles.css", "index.html", "scripts.js"],
            &["index.html", "scripts.js"],
        );
        check(
            "update ./src/app.js and README",
            &["src/app.js", "README"],
            &[],
        );
        check("what is in notes.txt?", &["notes.txt"], &[]);
        check("edit config\\app.yaml", &["config/app.yaml"], &[]);
        check(
            "Leave main.rs alone; fix lib.rs",
            &["main.rs", "lib.rs"],
            &["main.rs"],
        );
        check("version 1.2 is out", &[], &[]);
        check("write ../outside.txt", &["../outside.txt"], &[]);
        check(
            "Rewrite style.css without touching index.html.",
            &["style.css", "index.html"],
            &["index.html"],
        );
    }
}

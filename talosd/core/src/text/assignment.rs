//! Where a file assigns a key, and the same line with a new value in the file's own spelling:
//! `TIMEOUT = 30`, `"version": "1.0.0",`, `beta: false`, `#define MAX_USERS 10`, `CC = gcc`,
//! `const port = 3000;`, `color: red;`. A key named in words ("the log level", "the port")
//! matches an identifier spelled with any case and any of `_`, `-` or nothing between its
//! words (`LOG_LEVEL`, `logLevel`, `log-level`), or the longest run of those words that the
//! file spells.

/// One assignment of a key on a line: the line, and the byte range of its value in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub line: String,
    pub value_start: usize,
    pub value_end: usize,
}

impl Assignment {
    pub fn value(&self) -> &str {
        &self.line[self.value_start..self.value_end]
    }

    /// The line with its value replaced by `value` in the old value's spelling.
    pub fn with_value(&self, value: &str) -> String {
        let spelled = spelled_like(self.value(), value);
        format!(
            "{}{}{}",
            &self.line[..self.value_start],
            spelled,
            &self.line[self.value_end..]
        )
    }
}

/// The lines of `text` that assign the key named by `key` (words or an identifier), for the
/// longest run of the key's words the file spells as an assigned identifier. Empty when none.
pub fn assignments(text: &str, key: &str) -> Vec<Assignment> {
    let words: Vec<String> = key_words(key);
    if words.is_empty() {
        return Vec::new();
    }
    // The longest run first: "log level" is `log_level` before `level`.
    for len in (1..=words.len()).rev() {
        let mut found = Vec::new();
        for start in 0..=words.len() - len {
            let wanted: String = words[start..start + len].concat();
            for line in text.split('\n') {
                let line = line.trim_end_matches('\r');
                if let Some(a) = assignment_in(line, &wanted)
                    && !found.contains(&a)
                {
                    found.push(a);
                }
            }
        }
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// Whether `line` holds `name` as an identifier (any case, `_` and `-` ignored).
pub fn names_key(line: &str, key: &str) -> bool {
    let words = key_words(key);
    let wanted: String = words.concat();
    !wanted.is_empty()
        && identifiers(line)
            .iter()
            .any(|(_, _, id)| squash(id) == wanted || words.iter().any(|w| squash(id) == *w))
}

/// `value` spelled like `old`: a boolean in the old value's family and case (True/False,
/// true/false, on/off, yes/no, 1/0, enabled/disabled); anything else as given.
pub fn spelled_like(old: &str, value: &str) -> String {
    const FAMILIES: &[(&str, &str)] = &[
        ("true", "false"),
        ("on", "off"),
        ("yes", "no"),
        ("enabled", "disabled"),
        ("enable", "disable"),
        ("1", "0"),
    ];
    let Some(truth) = truth_of(value) else {
        return value.to_string();
    };
    let lower = old.to_ascii_lowercase();
    let Some((yes, no)) = FAMILIES
        .iter()
        .find(|(yes, no)| lower == *yes || lower == *no)
    else {
        return value.to_string();
    };
    let word = if truth { *yes } else { *no };
    if old.chars().all(|c| !c.is_alphabetic() || c.is_uppercase())
        && old.chars().any(char::is_alphabetic)
    {
        word.to_ascii_uppercase()
    } else if old.chars().next().is_some_and(char::is_uppercase) {
        let mut chars = word.chars();
        chars
            .next()
            .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default()
    } else {
        word.to_string()
    }
}

/// Whether two values are the same setting: equal, or the same truth value in any spelling.
pub fn same_value(a: &str, b: &str) -> bool {
    a == b || truth_of(a).is_some_and(|t| truth_of(b) == Some(t))
}

fn truth_of(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "enabled" | "enable" | "1" => Some(true),
        "false" | "off" | "no" | "disabled" | "disable" | "0" => Some(false),
        _ => None,
    }
}

/// The key's words, lowercased, without `_`/`-` ("MAX_USERS" is one word `maxusers`, "log
/// level" two).
fn key_words(key: &str) -> Vec<String> {
    key.split_whitespace()
        .map(squash)
        .filter(|w| !w.is_empty())
        .collect()
}

fn squash(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The identifiers of a line with their byte ranges (letters, digits, `_`, `-` inside).
fn identifiers(line: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let bytes: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(at, c)) in bytes.iter().enumerate() {
        let inner_dash = c == '-'
            && start.is_some()
            && bytes.get(k + 1).is_some_and(|(_, n)| n.is_alphanumeric());
        if c.is_alphanumeric() || c == '_' || inner_dash {
            start.get_or_insert(at);
        } else if let Some(s) = start.take() {
            out.push((s, at, &line[s..at]));
        }
    }
    if let Some(s) = start {
        out.push((s, line.len(), &line[s..]));
    }
    out
}

/// The assignment of `wanted` (a squashed key) on `line`, if the line assigns it.
fn assignment_in(line: &str, wanted: &str) -> Option<Assignment> {
    let trimmed = line.trim_start();
    let comment = ["#", "//", ";", "--", "/*", "*"]
        .iter()
        .any(|c| trimmed.starts_with(c))
        && !trimmed.starts_with("#define");
    if comment {
        return None;
    }
    for (_, end, id) in identifiers(line) {
        if squash(id) != wanted {
            continue;
        }
        let define = trimmed.starts_with("#define");
        let mut rest_at = end;
        // A quoted key ("version": ...) closes its quote first.
        if line[rest_at..].starts_with(['"', '\'']) {
            rest_at += 1;
        }
        let after = &line[rest_at..];
        let gap = after.len() - after.trim_start().len();
        let after_gap = &after[gap..];
        let op_len = [":=", "?=", "=>", "=", ":"]
            .iter()
            .find(|op| after_gap.starts_with(**op) && !after_gap.starts_with("=="))
            .map(|op| op.len());
        let value_from = match op_len {
            Some(len) => rest_at + gap + len,
            None if define && gap > 0 => rest_at + gap,
            None => continue,
        };
        let tail = &line[value_from..];
        let lead = tail.len() - tail.trim_start().len();
        let value_at = value_from + lead;
        let (start, end) = value_span(line, value_at)?;
        return Some(Assignment {
            line: line.to_string(),
            value_start: start,
            value_end: end,
        });
    }
    None
}

/// The value starting at `at`: inside its quotes when quoted, else up to a blank, `;`, `,`,
/// a closing bracket or a comment.
fn value_span(line: &str, at: usize) -> Option<(usize, usize)> {
    let rest = &line[at..];
    let first = rest.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let close = rest[1..].find(first)?;
        return Some((at + 1, at + 1 + close));
    }
    let len = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | ')' | '}' | ']' | '#'))
        .unwrap_or(rest.len());
    (len > 0).then_some((at, at + len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves each common syntax's assignment is found and rewritten in the file's spelling.
    #[test]
    fn assignment_rows() {
        let rows: [(&str, &str, &str, &[&str]); 12] = [
            (
                "TIMEOUT = 30\nRETRIES = 3\n",
                "TIMEOUT",
                "60",
                &["TIMEOUT = 60"],
            ),
            (
                "TIMEOUT = 30\nRETRY_DELAY = 30\n",
                "the timeout",
                "60",
                &["TIMEOUT = 60"],
            ),
            (
                "DEBUG = True\nPORT = 8000\n",
                "DEBUG",
                "off",
                &["DEBUG = False"],
            ),
            (
                "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\"\n}\n",
                "version",
                "1.2.0",
                &["  \"version\": \"1.2.0\""],
            ),
            ("beta: false\nlegacy: true\n", "beta", "on", &["beta: true"]),
            (
                "#define MAX_USERS 10\n#define MAX_ROOMS 4\n",
                "MAX_USERS",
                "50",
                &["#define MAX_USERS 50"],
            ),
            (
                "CC = gcc\n\nall:\n\t$(CC) main.c\n",
                "CC",
                "clang",
                &["CC = clang"],
            ),
            (
                "const port = 3000;\napp.listen(port);\n",
                "port",
                "8080",
                &["const port = 8080;"],
            ),
            (
                "body { color: red; }\n",
                "color",
                "blue",
                &["body { color: blue; }"],
            ),
            (
                "log:\n  level: debug\n",
                "log level",
                "info",
                &["  level: info"],
            ),
            (
                "LOG_LEVEL=debug\n",
                "log level",
                "info",
                &["LOG_LEVEL=info"],
            ),
            ("# TIMEOUT = 10\nx = 1\n", "TIMEOUT", "60", &[]),
        ];
        for (text, key, value, expected) in rows {
            let got: Vec<String> = assignments(text, key)
                .iter()
                .map(|a| a.with_value(value))
                .collect();
            assert_eq!(got, expected, "{key} in {text:?}");
        }
    }
}

//! Lenient JSON for tool calls written as text. The only leniency is the one models need
//! for multi-line file content: raw control characters (a literal newline or tab) inside a
//! string literal are escaped by a tiny scanner before serde_json sees the text. Everything
//! else must be plain JSON. The same string-aware scanning finds where an object ends, so a
//! fence or a closing tag inside a string value never ends a block early.

use std::borrow::Cow;

use serde_json::Value;

use super::markers::{NAME_KEYS, xml_tag_at};

/// Keys that may open an object that means to be a tool call.
const OPENING_KEYS: [&str; 15] = [
    "name",
    "function",
    "function_name",
    "tool_name",
    "tool",
    "parameters",
    "arguments",
    "args",
    "params",
    "tool_call",
    "function_call",
    "id",
    "type",
    "call_id",
    "tool_call_id",
];

/// Escapes raw control characters (U+0000 to U+001F) that sit inside JSON string literals;
/// text outside string literals is left alone. A backslash keeps its next character as it
/// is, so a backslash followed by a raw newline stays invalid.
pub(crate) fn escape_control_chars(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if !in_string {
            in_string = c == '"';
            out.push(c);
            continue;
        }
        if escaped {
            escaped = false;
            out.push(c);
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                out.push(c);
            }
            '"' => {
                in_string = false;
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Parses one JSON value after escaping raw control characters inside strings.
pub(crate) fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(&escape_control_chars(text))
}

/// The end (exclusive) of the object or array that opens at `start`, skipping brackets inside
/// string literals; `None` when it never closes.
pub(crate) fn container_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (index, &byte) in bytes.iter().enumerate().skip(start) {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(index + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// How far an object that never closes reaches: up to the first later line, outside any
/// string literal, that starts a fence, a tool-call tag or another object; else to the end.
pub(crate) fn unclosed_extent(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut in_string = false;
    let mut escaped = false;
    for (index, &byte) in bytes.iter().enumerate().skip(start) {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'\n' => {
                let line = text[index + 1..].trim_start_matches([' ', '\t']);
                if line.starts_with("```") || line.starts_with('{') || xml_tag_at(line).is_some() {
                    return index + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// Whether text that is not valid JSON clearly means to be a tool call: it opens an object
/// whose first key is a protocol key, and it has a tool-name key somewhere.
pub(crate) fn looks_like_call(fragment: &str) -> bool {
    opens_like_call(fragment) && NAME_KEYS.iter().any(|key| has_key(fragment, key))
}

/// Whether the text opens an object whose first key is a protocol key.
pub(crate) fn opens_like_call(fragment: &str) -> bool {
    fragment
        .trim_start()
        .strip_prefix('{')
        .and_then(first_key)
        .is_some_and(|first| OPENING_KEYS.contains(&first))
}

/// The first quoted key (double or single quotes) after optional whitespace.
fn first_key(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    let end = body.find(quote)?;
    Some(&body[..end])
}

/// Whether `"key"` or `'key'` appears followed by optional whitespace and a colon.
fn has_key(text: &str, key: &str) -> bool {
    ['"', '\''].iter().any(|quote| {
        let needle = format!("{quote}{key}{quote}");
        text.match_indices(&needle)
            .any(|(at, _)| text[at + needle.len()..].trim_start().starts_with(':'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves raw control characters are escaped inside strings only, and escapes survive.
    #[test]
    fn escape_rows() {
        let rows: [(&str, &str); 6] = [
            ("{\"a\": \"x\ny\"}", "{\"a\": \"x\\ny\"}"),
            ("{\n\"a\":\t\"\t\"}", "{\n\"a\":\t\"\\t\"}"),
            ("{\"a\": \"q\\\"\n\"}", "{\"a\": \"q\\\"\\n\"}"),
            ("{\"a\": \"\u{1}\"}", "{\"a\": \"\\u0001\"}"),
            ("{\"a\": \"plain\"}", "{\"a\": \"plain\"}"),
            ("{\"a\": \"\\\n\"}", "{\"a\": \"\\\n\"}"),
        ];
        for (input, expected) in rows {
            assert_eq!(escape_control_chars(input), expected, "{input:?}");
        }
    }

    /// Proves the end of an object skips brackets and fences inside strings.
    #[test]
    fn container_end_rows() {
        let rows: [(&str, Option<usize>); 5] = [
            ("{\"a\": \"}\"} tail", Some(10)),
            ("{\"a\": {\"b\": [1, 2]}}", Some(20)),
            ("{\"a\": \"\\\"}\"}", Some(12)),
            ("{\"a\": 1", None),
            ("{\"a\": 1]}", Some(8)),
        ];
        for (input, expected) in rows {
            assert_eq!(container_end(input, 0), expected, "{input:?}");
        }
    }

    /// Proves broken JSON counts as a call attempt only when it opens like one.
    #[test]
    fn looks_like_call_rows() {
        let rows: [(&str, bool); 7] = [
            ("{\"name\": \"talos.read_file\", \"parameters\": {", true),
            ("{'name': 'talos.read_file'}", true),
            ("{\"id\": 1, \"name\" : \"x\"", true),
            ("{ is an opening brace, \"name\": 1", false),
            ("{\"title\": \"name\"}", false),
            ("{\"data\": {\"name\": \"x\"}", false),
            ("[\"name\"]", false),
        ];
        for (input, expected) in rows {
            assert_eq!(looks_like_call(input), expected, "{input:?}");
        }
    }
}

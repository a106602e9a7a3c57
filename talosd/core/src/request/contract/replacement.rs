//! The replacement a request names ("change TIMEOUT from 30 to 60"): where its old and new
//! values sit in the request's text. One reading for the plan, which pins the edit, and for a
//! revert follow-up, which asks for the same change the other way round ("change it back").
//! Values are single tokens; quotes around them are not part of the value.

use std::ops::Range;

/// The old and new values of "… from A to B", when both are single tokens.
pub fn replacement(request: &str) -> Option<(String, String)> {
    let (from, to) = spans(request)?;
    let value = |range: Range<usize>| request[range].trim_matches(['"', '\'', '`']).to_string();
    Some((value(from), value(to)))
}

/// The request with its replacement the other way round ("from 30 to 60" becomes "from 60
/// to 30"), the rest of its words kept, so the reversed request names the same key and file.
pub fn reversed(request: &str) -> Option<String> {
    let (from, to) = spans(request)?;
    with_values(request, &request[to], &request[from])
}

/// The request with the values of its replacement replaced by `from` and `to`.
pub fn with_values(request: &str, from: &str, to: &str) -> Option<String> {
    let (old_from, old_to) = spans(request)?;
    Some(format!(
        "{}{from}{}{to}{}",
        &request[..old_from.start],
        &request[old_from.end..old_to.start],
        &request[old_to.end..]
    ))
}

/// The byte ranges of A and B in "… from A to B" (the first " from ", then the first " to "
/// after it); B ends at whitespace or at a trailing `.`, `,`, `!` or `;`.
fn spans(request: &str) -> Option<(Range<usize>, Range<usize>)> {
    // ASCII lowercase keeps every byte offset of `request`.
    let lower = request.to_ascii_lowercase();
    let from_start = lower.find(" from ")? + " from ".len();
    let to_at = from_start + lower[from_start..].find(" to ")?;
    let from = trimmed(request, from_start..to_at);
    let after_to = to_at + " to ".len();
    let rest = &request[after_to..];
    let lead = rest.len() - rest.trim_start().len();
    let token_start = after_to + lead;
    let token_len = request[token_start..]
        .find(char::is_whitespace)
        .unwrap_or(request.len() - token_start);
    let token =
        request[token_start..token_start + token_len].trim_end_matches(['.', ',', '!', ';']);
    let to = token_start..token_start + token.len();
    let single = |range: &Range<usize>| {
        let value = &request[range.clone()];
        !value.is_empty() && !value.contains(char::is_whitespace)
    };
    (single(&from) && single(&to)).then_some((from, to))
}

/// `range` without the whitespace at either end.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row: the request's replacement, and the request with it reversed.
    fn check(request: &str, expected: Option<(&str, &str)>, reversed_text: Option<&str>) {
        assert_eq!(
            replacement(request),
            expected.map(|(a, b)| (a.to_string(), b.to_string())),
            "{request}"
        );
        assert_eq!(reversed(request).as_deref(), reversed_text, "{request}");
    }

    /// Proves the values are read as the plan reads them and reversed in place.
    #[test]
    fn replacement_rows() {
        check(
            "In settings.py, change TIMEOUT from 30 to 60.",
            Some(("30", "60")),
            Some("In settings.py, change TIMEOUT from 60 to 30."),
        );
        check(
            "change the port From 8080 To 9090 in server.js",
            Some(("8080", "9090")),
            Some("change the port From 9090 To 8080 in server.js"),
        );
        check(
            "In config.py, change DEBUG from \"true\" to \"false\"!",
            Some(("true", "false")),
            Some("In config.py, change DEBUG from \"false\" to \"true\"!"),
        );
        check(
            "In settings.py, change TIMEOUT from 60 to 30.\n\nRevert follow-up: change it back",
            Some(("60", "30")),
            Some(
                "In settings.py, change TIMEOUT from 30 to 60.\n\nRevert follow-up: change it back",
            ),
        );
        check("change the heading from Hello World to Welcome", None, None);
        check("Set TIMEOUT to 60 in settings.py", None, None);
        check("change it from 30 to", None, None);
        check(
            "İn settings.py change X from 1 to 2",
            Some(("1", "2")),
            Some("İn settings.py change X from 2 to 1"),
        );
    }
}

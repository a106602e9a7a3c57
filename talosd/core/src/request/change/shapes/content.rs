//! The content a request gives a file in words: "containing 2.0.0", "with the content: hello
//! world", "with the lines target/ and *.log", "that says hi", "write "hello" to x.txt".

use super::tokens::{Tok, tokens};

/// The content a request gives in words for a file: "containing 2.0.0", "with the content:
/// hello world", "with the lines target/ and *.log", "that says hi". A colon makes the rest of
/// the sentence the literal; without one the value must be quoted or one word, so "containing
/// a list of names" stays a description.
pub fn content_in_words(request: &str) -> Option<String> {
    let toks = tokens(request);
    for i in 0..toks.len() {
        let Some((len, lines)) = content_marker(&toks, i) else {
            continue;
        };
        let first = i + len;
        let marker_colon = toks[first - 1].colon;
        if lines {
            let items = list_values(&toks[first..])?;
            return (!items.is_empty()).then(|| items.join("\n") + "\n");
        }
        if marker_colon {
            let rest = sentence_from(request, &toks, first)?;
            return (!rest.is_empty()).then_some(rest);
        }
        let value = toks.get(first)?;
        // "with 1.0.0 in it": the value, then words that point back at the file.
        let in_it = toks.get(first + 1).is_some_and(|t| t.lower == "in")
            && toks
                .get(first + 2)
                .is_some_and(|t| t.lower == "it" && (t.ends || toks.get(first + 3).is_none()));
        let single = value.quoted || value.ends || toks.get(first + 1).is_none() || in_it;
        return (single && !value.text.is_empty()).then(|| value.text.clone());
    }
    write_to(&toks)
}

/// "write "hello" to greeting.txt": a quoted passage written into a file.
fn write_to(toks: &[Tok]) -> Option<String> {
    (0..toks.len()).find_map(|k| {
        let verb = !toks[k].quoted && matches!(toks[k].lower.as_str(), "write" | "put");
        let text = toks.get(k + 1).filter(|t| t.quoted)?;
        let into = toks
            .get(k + 2)
            .is_some_and(|t| !t.quoted && matches!(t.lower.as_str(), "to" | "into" | "in"));
        (verb && into && !text.text.is_empty()).then(|| text.text.clone())
    })
}

/// At token `i`, a content marker: its length in tokens, and whether a list of lines follows.
fn content_marker(toks: &[Tok], i: usize) -> Option<(usize, bool)> {
    let w = |k: usize| toks.get(k).map_or("", |t| t.lower.as_str());
    if toks.get(i).is_some_and(|t| t.quoted) {
        return None;
    }
    match w(i) {
        "containing" | "contains" => Some((1, false)),
        // The file says it ("hello.txt that says hello", "README.md saying …"), not a part of
        // it ("so the title says Home").
        "saying" | "says" | "reads" | "reading" => {
            let before = i.checked_sub(1).and_then(|k| toks.get(k));
            let about_file = before.is_some_and(|t| {
                matches!(t.lower.as_str(), "that" | "which" | "it" | "file")
                    || t.text.contains('.')
                    || t.text.chars().all(|c| !c.is_lowercase())
            });
            about_file.then_some((1, false))
        }
        "with" => {
            let mut k = i + 1;
            if matches!(w(k), "the" | "a" | "just") {
                k += 1;
            }
            match w(k) {
                "content" | "contents" | "text" => Some((k - i + 1, false)),
                "line" => Some((k - i + 1, true)),
                "lines" => Some((k - i + 1, true)),
                // "with 1.0.0 in it"
                _ if w(i + 2) == "in" && w(i + 3) == "it" => Some((1, false)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The values of a list ("A and B", "A, B and C", "A, B, C"), one token each; `None` when a
/// line holds several words ("User-agent: * and Disallow: /admin" is no list of tokens).
fn list_values(toks: &[Tok]) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut k = 0;
    while let Some(t) = toks.get(k) {
        if t.lower == "and" && !t.quoted {
            k += 1;
            continue;
        }
        out.push(t.text.clone());
        if t.colon && toks.get(k + 1).is_some() {
            return None;
        }
        if (t.ends && !t.comma) || out.len() == 20 {
            break;
        }
        k += 1;
    }
    Some(out)
}

/// The request's text from token `first` to the end of its sentence (a line break, or `.` `!`
/// `?` followed by a blank or the end).
fn sentence_from(request: &str, toks: &[Tok], first: usize) -> Option<String> {
    let needle = &toks.get(first)?.text;
    let start = request.find(needle.as_str())?;
    let rest = &request[start..];
    let mut end = rest.len();
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    for (k, &(at, c)) in chars.iter().enumerate() {
        let next_blank = chars.get(k + 1).is_none_or(|(_, n)| n.is_whitespace());
        if c == '\n' || (matches!(c, '.' | '!' | '?') && next_blank) {
            end = at;
            break;
        }
    }
    Some(rest[..end].trim().to_string())
}

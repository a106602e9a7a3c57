//! The raw-text count of opening and closing tags of a page, because html5ever recovers from
//! stray closing tags silently.
//!
//! Written by hand (this crate has no regex dependency) with the semantics of the patterns it
//! replaced, each named on the function that ports it: comments are dropped, the insides of
//! `<script>` and `<style>` are emptied, then every `<name ...>` and `</name ...>` is counted.
//! The same cleaning (keeping line breaks, so lines can be named) finds closing tags that are
//! never terminated by `>`.

use std::collections::BTreeMap;

/// Elements that never have a closing tag.
const VOID_ELEMENTS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Tag names whose closing tags outnumber their opening tags in the raw source (comments and
/// the insides of `<script>`/`<style>` left out), with the two counts.
pub(crate) fn unmatched_closing_tags(source: &str) -> Vec<(String, usize, usize)> {
    let cleaned = strip_raw_text(source, false);
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (closing, name) in tags(&cleaned) {
        let name = name.to_ascii_lowercase();
        if VOID_ELEMENTS.contains(&name.as_str()) {
            continue;
        }
        let entry = counts.entry(name).or_default();
        if closing {
            entry.1 += 1;
        } else {
            entry.0 += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(_, (open, close))| close > open)
        .map(|(name, (open, close))| (name, open, close))
        .collect()
}

/// Closing tags (`</name` followed by `<` or the end of the file before any `>`) in the raw
/// source, comments and the insides of `<script>`/`<style>` left out: each as (name, 1-based
/// line).
pub(crate) fn unterminated_closing_tags(source: &str) -> Vec<(String, usize)> {
    let cleaned = strip_raw_text(source, true);
    let bytes = cleaned.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = cleaned[from..].find("</").map(|i| from + i) {
        let start = at + 2;
        let run = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        from = start;
        if !bytes.get(start).is_some_and(u8::is_ascii_alphabetic) {
            continue;
        }
        let end = start + run;
        let terminated = cleaned[end..]
            .find(['>', '<'])
            .is_some_and(|i| bytes[end + i] == b'>');
        if !terminated {
            let line = cleaned[..at].matches('\n').count() + 1;
            out.push((cleaned[start..end].to_ascii_lowercase(), line));
        }
    }
    out
}

/// The source without comments and with empty `<script>`/`<style>` bodies; `keep_lines` keeps
/// the line breaks of what was removed.
fn strip_raw_text(source: &str, keep_lines: bool) -> String {
    let without_comments = drop_comments(source, keep_lines);
    let without_scripts = empty_element(&without_comments, "script", keep_lines);
    empty_element(&without_scripts, "style", keep_lines)
}

/// The line breaks of removed text, when they are kept.
fn removed_lines(out: &mut String, removed: &str, keep_lines: bool) {
    if keep_lines {
        out.extend(removed.chars().filter(|c| *c == '\n'));
    }
}

/// `(?s)<!--.*?-->` replaced by nothing: each comment up to the first `-->` after its `<!--`;
/// an unclosed comment is kept.
fn drop_comments(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        let Some(close) = rest[open + 4..].find("-->") else {
            break;
        };
        out.push_str(&rest[..open]);
        removed_lines(&mut out, &rest[open..open + 4 + close + 3], keep_lines);
        rest = &rest[open + 4 + close + 3..];
    }
    out.push_str(rest);
    out
}

/// `(?is)(<name\b[^>]*>).*?(</name\s*>)` replaced by `$1$2`: the body of each element emptied,
/// its opening and closing tags kept; an element that is never closed is kept whole.
fn empty_element(text: &str, name: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find('<').map(|i| from + i) {
        let after_name = match literal_end(text, at + 1, name) {
            Some(end) if !text[end..].chars().next().is_some_and(is_word_char) => end,
            _ => {
                from = at + 1;
                continue;
            }
        };
        let Some(open_end) = text[after_name..].find('>').map(|i| after_name + i + 1) else {
            break;
        };
        let Some((close_start, close_end)) = closing_tag(text, open_end, name) else {
            break;
        };
        out.push_str(&text[copied..open_end]);
        removed_lines(&mut out, &text[open_end..close_start], keep_lines);
        out.push_str(&text[close_start..close_end]);
        copied = close_end;
        from = close_end;
    }
    out.push_str(&text[copied..]);
    out
}

/// The first `</name\s*>` (case-insensitive) at or after `from`, as (start, end).
fn closing_tag(text: &str, from: usize, name: &str) -> Option<(usize, usize)> {
    let mut search = from;
    while let Some(at) = text[search..].find("</").map(|i| search + i) {
        if let Some(end) = literal_end(text, at + 2, name) {
            let spaces: usize = text[end..]
                .chars()
                .take_while(|c| c.is_whitespace())
                .map(char::len_utf8)
                .sum();
            if text[end + spaces..].starts_with('>') {
                return Some((at, end + spaces + 1));
            }
        }
        search = at + 2;
    }
    None
}

/// Where `literal` (ASCII lowercase) ends if it starts at byte `at` of `text`, compared as the
/// regex crate's `(?i)` does: ASCII case, plus U+017F (long s) for `s` and U+212A (Kelvin) for
/// `k`, the two non-ASCII characters whose simple case folding is an ASCII letter.
fn literal_end(text: &str, at: usize, literal: &str) -> Option<usize> {
    let mut chars = text.get(at..)?.char_indices();
    for want in literal.chars() {
        let (_, got) = chars.next()?;
        if !folds_to(got, want) {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(i, _)| at + i))
}

fn folds_to(got: char, want: char) -> bool {
    got.to_ascii_lowercase() == want
        || (want == 's' && got == '\u{17F}')
        || (want == 'k' && got == '\u{212A}')
}

/// The regex crate's Unicode `\w` without its tables: letters, digits and `_`, the combining
/// mark blocks, the other connector punctuation and the two join controls. It differs only on
/// digits outside `Nd` (`²`, `½`, `①`: word characters here, not there) and on combining marks
/// outside those blocks that are not letters (there, not here).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c,
            '_' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}'
            | '\u{FE4D}'..='\u{FE4F}' | '\u{FF3F}' | '\u{200C}' | '\u{200D}'
            | '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}' | '\u{FE20}'..='\u{FE2F}')
}

/// `<(/?)([A-Za-z][A-Za-z0-9-]*)\b[^>]*>`, leftmost and without overlap: each tag as
/// (closing, name). The name is the longest run of name characters after which a word boundary
/// holds (so `<a->` names `a`), and the tag runs to the next `>`.
fn tags(text: &str) -> Vec<(bool, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find('<').map(|i| from + i) {
        let closing = bytes.get(at + 1) == Some(&b'/');
        let start = at + 1 + usize::from(closing);
        if !bytes.get(start).is_some_and(u8::is_ascii_alphabetic) {
            from = at + 1;
            continue;
        }
        let run = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        let next_is_word = |end: usize| text[end..].chars().next().is_some_and(is_word_char);
        let name_end = (start + 1..=start + run)
            .rev()
            .find(|&end| (bytes[end - 1] != b'-') != next_is_word(end));
        let Some(name_end) = name_end else {
            from = at + 1;
            continue;
        };
        let Some(close) = text[name_end..].find('>') else {
            break;
        };
        out.push((closing, &text[start..name_end]));
        from = name_end + close + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmatched_closing_tags_table() {
        let rows: &[(&str, &[&str])] = &[
            ("<div><p>a</p></div>", &[]),
            ("<div>a</div></div>", &["div"]),
            ("<p>a<p>b</p>", &[]),
            ("<br></br><img src=x>", &[]),
            ("<script>let s = '</div>';</script>", &[]),
            ("<!-- </section> --><span>a</span></span>", &["span"]),
            ("<DIV>a</div></Div >", &["div"]),
            ("<SCRIPT type=module>'</p>'</script\n>", &[]),
            ("<style>a::after{content:'</b>'}</STYLE>", &[]),
            ("<scripts></scripts><b>x</b>", &[]),
            ("<script>'</i>'", &["i"]),
            ("<!-- </i> <p>x</p>", &["i"]),
            ("<a->x</a-></a->", &["a"]),
            ("<div\nclass=x>y</div></div", &[]),
            ("< /div></div>", &["div"]),
            ("</1div><div></div>", &[]),
            ("<div\u{301}></div>", &["div"]),
            ("<script\u{301}>'</b>'</script>", &["b", "script"]),
        ];
        for (src, want) in rows {
            let got: Vec<_> = unmatched_closing_tags(src)
                .into_iter()
                .map(|t| t.0)
                .collect();
            assert_eq!(got, *want, "src: {src}");
        }
    }

    #[test]
    fn unterminated_closing_tags_table() {
        let rows: &[(&str, &[(&str, usize)])] = &[
            ("<div><p>a</p></div>", &[]),
            ("<div>a</div", &[("div", 1)]),
            ("<div>a</div\n<p>b</p>", &[("div", 1)]),
            ("<div>a</div\r\n</body>", &[("div", 1)]),
            ("<p>\n<div>a</DIV</body>", &[("div", 2)]),
            ("<div>a</div\n  >", &[]),
            ("<div>a</div >", &[]),
            ("<!-- </div\n --><p>a</p>\n</p", &[("p", 3)]),
            ("<script>if (a </b) {}\n</script><p>x</p>", &[]),
            ("<p>a < b</p>", &[]),
            ("<p>1</2</p>", &[]),
        ];
        for (src, want) in rows {
            let got = unterminated_closing_tags(src);
            let got: Vec<(&str, usize)> = got.iter().map(|(n, l)| (n.as_str(), *l)).collect();
            assert_eq!(got, *want, "src: {src:?}");
        }
    }
}

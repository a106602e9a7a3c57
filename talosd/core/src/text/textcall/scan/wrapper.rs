//! The deprecated XML wrappers around a call: `<tool_call>`, `<function_call>`, `<tool>` and
//! `<function>`, each holding JSON. Valid JSON is read string-aware, so a closing tag inside
//! a string never ends the wrapper; broken JSON is bounded by the first closing tag found by
//! plain search, unless another wrapper or call opens first. `<tool>` and `<function>` around
//! text that is not JSON are prose; the two explicit tags around it are a malformed call.

use crate::text::textcall::markers::xml_tag_at;

use super::{
    Block, Source, Verdict, all_parse, next_call_line, object_run, object_verdict, parse_json,
    skip_whitespace, unclosed_extent,
};

/// Where the next wrapper tag opens, from `from`.
pub(super) fn next_xml(text: &str, from: usize) -> Option<usize> {
    text[from..]
        .match_indices('<')
        .map(|(i, _)| from + i)
        .find(|at| xml_tag_at(&text[*at..]).is_some())
}

/// What an XML wrapper turned out to be.
pub(super) enum XmlRead {
    Block(Block),
    /// Plain text up to this position.
    Text(usize),
}

pub(super) fn read_xml(text: &str, start: usize) -> XmlRead {
    let Some(tag) = xml_tag_at(&text[start..]) else {
        return XmlRead::Text(start + 1);
    };
    let content_start = start + tag.len() + 2;
    let close = format!("</{tag}>");
    // A closing tag found by plain search, unless another wrapper or call opens first.
    let close_after = |from: usize| {
        let at = from + text[from..].find(&close)?;
        let limit = next_call_line(text, from).min(next_xml(text, from).unwrap_or(text.len()));
        (at < limit).then_some(at)
    };
    let explicit = matches!(tag, "tool_call" | "function_call");
    let (objects, stop, unclosed) = object_run(text, content_start);
    let first = skip_whitespace(text, content_start);
    let (verdicts, end) = if !objects.is_empty() && !unclosed && all_parse(text, &objects) {
        let mut verdicts: Vec<Verdict> = objects
            .iter()
            .filter_map(|range| object_verdict(text, range.clone(), true))
            .collect();
        let junk_until = close_after(stop);
        let end = match (text[stop..].starts_with(&close), junk_until, objects.last()) {
            (true, _, _) => stop + close.len(),
            (false, Some(at), _) => {
                verdicts.push(Verdict::Malformed(format!(
                    "a <{tag}> block that holds text that is not a JSON object"
                )));
                at + close.len()
            }
            (false, None, last) => last.map_or(stop, |last| last.end),
        };
        (verdicts, end)
    } else if objects.is_empty() && !unclosed {
        // Not JSON at all: a call attempt only inside an explicit, closed wrapper; plain
        // text (skipped whole when it closes) otherwise.
        return match (close_after(first), explicit) {
            (Some(at), true) => XmlRead::Block(Block {
                span: start..at + close.len(),
                source: Source::Xml,
                verdicts: vec![Verdict::Malformed(format!(
                    "a <{tag}> block that holds no JSON object"
                ))],
            }),
            (Some(at), false) => XmlRead::Text(at + close.len()),
            (None, _) => XmlRead::Text(start + 1),
        };
    } else {
        // Broken JSON: the first closing tag bounds it, since a lost quote makes strings
        // unreliable; without one, the next wrapper or call, or as far as an unclosed object
        // reaches.
        let (body_end, end) = match close_after(first) {
            Some(at) => (at, at + close.len()),
            None => {
                let extent = unclosed_extent(text, first)
                    .min(next_call_line(text, first))
                    .min(next_xml(text, content_start).unwrap_or(text.len()));
                (extent, extent)
            }
        };
        let reason = match parse_json(text[content_start..body_end].trim()) {
            Err(e) => format!("the tool-call JSON is not valid: {e}"),
            Ok(_) => format!("a <{tag}> block that holds no single JSON object"),
        };
        (vec![Verdict::Malformed(reason)], end)
    };
    XmlRead::Block(Block {
        span: start..end,
        source: Source::Xml,
        verdicts,
    })
}

/// Wrappers one after another from `from`, each holding only usable calls: where they stop.
pub(super) fn xml_run(text: &str, from: usize) -> Option<usize> {
    let mut at = skip_whitespace(text, from);
    let mut any = false;
    while xml_tag_at(&text[at..]).is_some() {
        match read_xml(text, at) {
            XmlRead::Block(block)
                if block
                    .verdicts
                    .iter()
                    .all(|verdict| matches!(verdict, Verdict::Call(..))) =>
            {
                at = skip_whitespace(text, block.span.end);
                any = true;
            }
            XmlRead::Block(_) | XmlRead::Text(_) => return None,
        }
    }
    any.then_some(at)
}

/// The verdicts of the wrappers in a fenced body, read one after another (text between them
/// is dropped with the block); nothing here reads fences, so nesting stays one level deep.
pub(super) fn wrapped_verdicts(body: &str) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let mut at = 0;
    while let Some(found) = next_xml(body, at) {
        match read_xml(body, found) {
            XmlRead::Block(block) => {
                at = block.span.end.max(found + 1);
                verdicts.extend(block.verdicts);
            }
            XmlRead::Text(end) => at = end.max(found + 1),
        }
    }
    verdicts
}

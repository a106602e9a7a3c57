//! One left-to-right pass over a model's answer that finds the blocks meaning to be tool
//! calls: fenced blocks (```` ```json ````, ```` ```tool_call ````, unlabelled), the deprecated
//! XML wrappers (`<tool_call>`, `<function_call>`, `<tool>`, `<function>`) and bare objects at
//! a line start (or right after another such object). Whichever opens first is read first,
//! and a block is read string-aware, so a fence or tag inside a JSON string never ends it.
//! A block that merely shows code or data is not returned: it stays prose.

use std::ops::Range;

use super::ParsedCall;
use super::lenient::{container_end, looks_like_call, parse as parse_json, unclosed_extent};
use super::shape::{Shape, classify};

/// The deprecated XML wrappers, matched exactly as `<tag>`.
const XML_TAGS: [&str; 4] = ["tool_call", "function_call", "tool", "function"];
/// Fence languages whose body may be a tool call.
const CALL_LANGS: [&str; 5] = ["", "json", "jsonc", "json5", "tool_call"];

/// Where a block was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Fence,
    Xml,
    Bare,
}

/// What one object in a block turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A usable call, with the byte range of the JSON it was read from.
    Call(ParsedCall, Range<usize>),
    /// A call attempt that cannot be used, with the reason.
    Malformed(String),
}

/// A stretch of the answer that is tool-call protocol, to be removed from the prose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub span: Range<usize>,
    pub source: Source,
    pub verdicts: Vec<Verdict>,
}

/// The tag of a deprecated XML wrapper opening at the start of `text`.
pub(crate) fn xml_tag_at(text: &str) -> Option<&'static str> {
    let rest = text.strip_prefix('<')?;
    XML_TAGS.into_iter().find(|tag| {
        rest.strip_prefix(tag)
            .is_some_and(|after| after.starts_with('>'))
    })
}

/// Every tool-call block of `text`, in order.
pub(crate) fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut adjacent: Option<usize> = None;
    let mut fence = Lookahead::default();
    let mut xml = Lookahead::default();
    let mut bare = Lookahead::default();
    while pos < text.len() {
        let next_fence = fence.get(pos, |from| next_fence(text, from));
        let next_xml = xml.get(pos, |from| next_xml(text, from));
        let next_bare = adjacent
            .take()
            .or_else(|| bare.get(pos, |from| next_bare(text, from)));
        let starts = [next_fence.map(|f| f.start), next_xml, next_bare];
        let Some(first) = starts.iter().flatten().min().copied() else {
            break;
        };
        if next_fence.is_some_and(|f| f.start == first) {
            let Some(open) = next_fence else { break };
            let (block, end) = read_fence(text, open);
            out.extend(block);
            pos = end.max(first + 1);
        } else if next_xml == Some(first) {
            match read_xml(text, first) {
                Some(block) => {
                    pos = block.span.end.max(first + 1);
                    out.push(block);
                }
                None => pos = first + 1,
            }
        } else {
            let (block, end) = read_bare(text, first);
            if let Some(block) = block {
                let after = skip_whitespace(text, block.span.end);
                if text[after..].starts_with('{') {
                    adjacent = Some(after);
                }
                out.push(block);
            }
            pos = end.max(first + 1);
        }
    }
    out
}

/// The next occurrence of something, remembered until the scan passes it.
#[derive(Debug)]
struct Lookahead<T> {
    found: Option<T>,
    searched_from: Option<usize>,
}

impl<T> Default for Lookahead<T> {
    fn default() -> Self {
        Lookahead {
            found: None,
            searched_from: None,
        }
    }
}

trait At {
    fn at(&self) -> usize;
}

impl At for usize {
    fn at(&self) -> usize {
        *self
    }
}

impl At for FenceOpen {
    fn at(&self) -> usize {
        self.start
    }
}

impl<T: At + Copy> Lookahead<T> {
    fn get(&mut self, pos: usize, search: impl FnOnce(usize) -> Option<T>) -> Option<T> {
        let stale = match (self.searched_from, self.found) {
            (None, _) => true,
            (Some(_), Some(found)) => found.at() < pos,
            (Some(_), None) => false,
        };
        if stale {
            self.found = search(pos);
            self.searched_from = Some(pos);
        }
        self.found
    }
}

/// An opening fence: where it starts, how many backticks, and where its info line ends.
#[derive(Debug, Clone, Copy)]
struct FenceOpen {
    start: usize,
    ticks: usize,
    info: (usize, usize),
}

fn next_fence(text: &str, from: usize) -> Option<FenceOpen> {
    let mut search = from;
    while let Some(found) = text[search..].find("```") {
        let start = search + found;
        let ticks = text[start..].bytes().take_while(|b| *b == b'`').count();
        let info_start = start + ticks;
        let line_end = text[info_start..]
            .find('\n')
            .map_or(text.len(), |i| info_start + i);
        let info = &text[info_start..line_end];
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let at_line_start = text[line_start..start].trim_matches([' ', '\t']).is_empty();
        let single_word = !info.trim().contains(char::is_whitespace) && line_end < text.len();
        if !info.contains('`') && (at_line_start || single_word) {
            return Some(FenceOpen {
                start,
                ticks,
                info: (info_start, line_end),
            });
        }
        search = info_start;
    }
    None
}

fn next_xml(text: &str, from: usize) -> Option<usize> {
    text[from..]
        .match_indices('<')
        .map(|(i, _)| from + i)
        .find(|at| xml_tag_at(&text[*at..]).is_some())
}

fn next_bare(text: &str, from: usize) -> Option<usize> {
    let mut line_start = if from == 0 || text.as_bytes().get(from - 1) == Some(&b'\n') {
        from
    } else {
        from + text[from..].find('\n')? + 1
    };
    loop {
        let rest = &text[line_start..];
        let indent = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if rest[indent..].starts_with('{') {
            return Some(line_start + indent);
        }
        line_start += rest.find('\n')? + 1;
    }
}

fn skip_whitespace(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    from + rest.len() - rest.trim_start().len()
}

/// Objects one after another from `from`, with only whitespace between them: their ranges,
/// where the run stopped, and whether it stopped at an object that never closes.
fn object_run(text: &str, from: usize) -> (Vec<Range<usize>>, usize, bool) {
    let mut objects = Vec::new();
    let mut at = skip_whitespace(text, from);
    while text[at..].starts_with('{') {
        match container_end(text, at) {
            Some(end) => {
                objects.push(at..end);
                at = skip_whitespace(text, end);
            }
            None => return (objects, at, true),
        }
    }
    (objects, at, false)
}

/// What one complete object is, when `insistent` says the block can only be a call.
fn object_verdict(text: &str, range: Range<usize>, insistent: bool) -> Option<Verdict> {
    let slice = &text[range.clone()];
    match parse_json(slice) {
        Ok(value) => match classify(value) {
            Shape::Call(call) => Some(Verdict::Call(call, range)),
            Shape::Broken(reason) => Some(Verdict::Malformed(reason)),
            Shape::NotACall if insistent => Some(Verdict::Malformed(
                "the tool-call object names no tool".into(),
            )),
            Shape::NotACall => None,
        },
        Err(e) if insistent || looks_like_call(slice) => Some(Verdict::Malformed(format!(
            "the tool-call JSON is not valid: {e}"
        ))),
        Err(_) => None,
    }
}

fn read_fence(text: &str, open: FenceOpen) -> (Option<Block>, usize) {
    let (info_start, info_end) = open.info;
    let lang = text[info_start..info_end]
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let body_start = (info_end + 1).min(text.len());
    let closing = "`".repeat(open.ticks);
    let (objects, stop, unclosed) = object_run(text, body_start);
    // A JSON body closes at the fence right after its last object, wherever that fence sits.
    let (body_end, end) = if !objects.is_empty() && !unclosed && text[stop..].starts_with(&closing)
    {
        (
            stop,
            stop + text[stop..].bytes().take_while(|b| *b == b'`').count(),
        )
    } else {
        closing_fence_line(text, body_start, open.ticks).unwrap_or((text.len(), text.len()))
    };
    if !CALL_LANGS.contains(&lang.as_str()) {
        return (None, end);
    }
    let insistent = lang == "tool_call";
    let verdicts = fence_verdicts(text, body_start..body_end, insistent);
    if verdicts.is_empty() {
        return (None, end);
    }
    let block = Block {
        span: open.start..end,
        source: Source::Fence,
        verdicts,
    };
    (Some(block), end)
}

/// The next line made only of at least `ticks` backticks: where it starts and ends.
fn closing_fence_line(text: &str, from: usize, ticks: usize) -> Option<(usize, usize)> {
    let mut line_start = from;
    while line_start < text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map_or(text.len(), |i| line_start + i);
        let line = text[line_start..line_end].trim();
        if line.len() >= ticks && line.bytes().all(|b| b == b'`') {
            return Some((line_start, line_end));
        }
        line_start = line_end + 1;
    }
    None
}

fn fence_verdicts(text: &str, body: Range<usize>, insistent: bool) -> Vec<Verdict> {
    let inner = &text[body.clone()];
    let trimmed = inner.trim();
    let offset = body.start + (inner.len() - inner.trim_start().len());
    if trimmed.is_empty() {
        return Vec::new();
    }
    if xml_tag_at(trimmed).is_some() {
        return blocks(trimmed)
            .into_iter()
            .flat_map(|block| block.verdicts)
            .map(|verdict| match verdict {
                Verdict::Call(call, range) => {
                    Verdict::Call(call, range.start + offset..range.end + offset)
                }
                Verdict::Malformed(reason) => Verdict::Malformed(reason),
            })
            .collect();
    }
    let (objects, stop, unclosed) = object_run(text, body.start);
    if !objects.is_empty() && !unclosed && stop >= body.end {
        let verdicts: Vec<Verdict> = objects
            .into_iter()
            .filter_map(|range| object_verdict(text, range, insistent))
            .collect();
        return verdicts;
    }
    let whole = offset..offset + trimmed.len();
    if trimmed.starts_with('[') {
        return array_verdicts(text, whole, insistent);
    }
    if trimmed.starts_with('{') {
        return object_verdict(text, whole, insistent).into_iter().collect();
    }
    if insistent {
        return vec![Verdict::Malformed(
            "a tool_call block that holds no JSON object".into(),
        )];
    }
    Vec::new()
}

/// A fenced array is a list of calls only when every element is one.
fn array_verdicts(text: &str, range: Range<usize>, insistent: bool) -> Vec<Verdict> {
    let slice = &text[range.clone()];
    let intent =
        insistent || looks_like_call(slice.trim_start_matches(['[', ' ', '\t', '\r', '\n']));
    let items = match parse_json(slice) {
        Ok(serde_json::Value::Array(items)) => items,
        Ok(_) => return Vec::new(),
        Err(e) if intent => {
            return vec![Verdict::Malformed(format!(
                "the tool-call JSON is not valid: {e}"
            ))];
        }
        Err(_) => return Vec::new(),
    };
    let shapes: Vec<Shape> = items.into_iter().map(classify).collect();
    if shapes.is_empty() || shapes.iter().all(|s| matches!(s, Shape::NotACall)) {
        return Vec::new();
    }
    let mut verdicts = Vec::new();
    for shape in shapes {
        match shape {
            Shape::Call(call) => verdicts.push(Verdict::Call(call, range.clone())),
            Shape::Broken(reason) => return vec![Verdict::Malformed(reason)],
            Shape::NotACall => {
                return vec![Verdict::Malformed(
                    "a list of tool calls holds an entry that is not a call".into(),
                )];
            }
        }
    }
    verdicts
}

fn read_xml(text: &str, start: usize) -> Option<Block> {
    let tag = xml_tag_at(&text[start..])?;
    let content_start = start + tag.len() + 2;
    let close = format!("</{tag}>");
    let close_after = |from: usize| text[from..].find(&close).map(|i| from + i);
    let (objects, stop, unclosed) = object_run(text, content_start);
    let mut verdicts: Vec<Verdict> = objects
        .iter()
        .filter_map(|range| object_verdict(text, range.clone(), true))
        .collect();
    let end = if unclosed {
        let reason = match parse_json(&text[stop..close_after(stop).unwrap_or(text.len())]) {
            Err(e) => format!("the tool-call JSON is not valid: {e}"),
            Ok(_) => format!("the JSON inside <{tag}> never closes"),
        };
        verdicts.push(Verdict::Malformed(reason));
        close_after(stop).map_or_else(|| unclosed_extent(text, stop), |at| at + close.len())
    } else if text[stop..].starts_with(&close) {
        if objects.is_empty() && !matches!(tag, "tool_call" | "function_call") {
            return None;
        }
        if objects.is_empty() {
            verdicts.push(Verdict::Malformed(format!("an empty <{tag}> block")));
        }
        stop + close.len()
    } else {
        // Text that is not an object follows: inside the same wrapper it breaks the block.
        let junk_until = close_after(stop).filter(|at| !text[stop..*at].contains('<'));
        match (junk_until, objects.last()) {
            (Some(at), _)
                if !objects.is_empty() || matches!(tag, "tool_call" | "function_call") =>
            {
                verdicts.push(Verdict::Malformed(format!(
                    "a <{tag}> block that holds text that is not a JSON object"
                )));
                at + close.len()
            }
            (_, Some(last)) => last.end,
            (_, None) => return None,
        }
    };
    Some(Block {
        span: start..end,
        source: Source::Xml,
        verdicts,
    })
}

fn read_bare(text: &str, start: usize) -> (Option<Block>, usize) {
    let Some(end) = container_end(text, start) else {
        let extent = unclosed_extent(text, start);
        if !looks_like_call(&text[start..extent]) {
            return (None, start + 1);
        }
        let reason = match parse_json(&text[start..extent]) {
            Err(e) => format!("the tool-call JSON is not valid: {e}"),
            Ok(_) => "the tool-call object never closes".into(),
        };
        let block = Block {
            span: start..extent,
            source: Source::Bare,
            verdicts: vec![Verdict::Malformed(reason)],
        };
        return (Some(block), extent);
    };
    let valid = parse_json(&text[start..end]).is_ok();
    match object_verdict(text, start..end, false) {
        Some(verdict) => {
            let block = Block {
                span: start..end,
                source: Source::Bare,
                verdicts: vec![verdict],
            };
            (Some(block), end)
        }
        // Valid data is skipped whole; broken text may hide a call on a later line.
        None if valid => (None, end),
        None => (None, start + 1),
    }
}

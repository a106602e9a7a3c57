//! One left-to-right pass over a model's answer that finds the blocks meaning to be tool
//! calls: fenced blocks (```` ```json ````, ```` ```tool_call ````, unlabelled), the deprecated
//! XML wrappers (`<tool_call>`, `<function_call>`, `<tool>`, `<function>`) and bare objects at
//! a line start (or right after another such object). Whichever opens first is read first,
//! and a valid block is read string-aware, so a fence or tag inside a JSON string never ends
//! it. Broken JSON cannot be read that way (a lost quote turns strings inside out), so a
//! broken block ends at its closing fence or tag by plain search, and never reaches past a
//! line that plainly opens another call. A block that merely shows code or data is not
//! returned: it stays prose. After 64 costly misses the rest of the answer is prose, which
//! keeps degenerate output (thousands of unclosed braces) linear.

use std::ops::Range;

use super::ParsedCall;
use super::lenient::{
    container_end, looks_like_call, opens_like_call, parse as parse_json, unclosed_extent,
};
use super::markers::xml_tag_at;
use super::shape::{Shape, classify};

mod wrapper;

use wrapper::{XmlRead, next_xml, read_xml, wrapped_verdicts, xml_run};

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

/// How many costly misses (broken or unclosed JSON, unclosed wrappers: each may cost a scan
/// to the end of the text) the scan allows before it leaves the rest of the answer as prose.
/// Valid data and ordinary code blocks are cheap and do not count.
const MAX_COSTLY_MISSES: usize = 64;

/// Every tool-call block of `text`, in order.
pub(crate) fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut adjacent: Option<usize> = None;
    let mut fence = Lookahead::default();
    let mut xml = Lookahead::default();
    let mut bare = Lookahead::default();
    let mut misses = 0;
    while pos < text.len() && misses <= MAX_COSTLY_MISSES {
        let next_fence = fence.get(pos, |from| next_fence(text, from));
        let next_xml = xml.get(pos, |from| next_xml(text, from));
        let next_bare = adjacent
            .take()
            .or_else(|| bare.get(pos, |from| next_bare(text, from)));
        let starts = [next_fence.map(|f| f.start), next_xml, next_bare];
        let Some(first) = starts.iter().flatten().min().copied() else {
            break;
        };
        let costly_miss = if let Some(open) = next_fence.filter(|f| f.start == first) {
            let (block, end, costly) = read_fence(text, open);
            pos = end.max(first + 1);
            out.extend(block);
            costly
        } else if next_xml == Some(first) {
            match read_xml(text, first) {
                XmlRead::Block(block) => {
                    pos = block.span.end.max(first + 1);
                    let miss = !has_call(&block);
                    out.push(block);
                    miss
                }
                XmlRead::Text(end) => {
                    pos = end.max(first + 1);
                    end <= first + 1
                }
            }
        } else {
            let (block, end) = read_bare(text, first);
            pos = end.max(first + 1);
            match block {
                Some(block) => {
                    let after = skip_whitespace(text, block.span.end);
                    if text[after..].starts_with('{') {
                        adjacent = Some(after);
                    }
                    let miss = !has_call(&block);
                    out.push(block);
                    miss
                }
                None => end <= first + 1,
            }
        };
        misses += usize::from(costly_miss);
    }
    out
}

fn has_call(block: &Block) -> bool {
    block
        .verdicts
        .iter()
        .any(|verdict| matches!(verdict, Verdict::Call(..)))
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
        // Mid-line, a fence must follow a space and hold a language word, or nothing, before
        // its line ends.
        let after_space = text[..start].ends_with([' ', '\t']);
        let single_word = info
            .trim()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+' | '.'))
            && line_end < text.len();
        if !info.contains('`') && (at_line_start || (after_space && single_word)) {
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

fn all_parse(text: &str, objects: &[Range<usize>]) -> bool {
    objects
        .iter()
        .all(|range| parse_json(&text[range.clone()]).is_ok())
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

/// A fenced block: the block when it holds a call attempt, where it ends, and whether it was
/// a costly miss (a call-language body that opens like JSON but yields no call).
fn read_fence(text: &str, open: FenceOpen) -> (Option<Block>, usize, bool) {
    let (info_start, info_end) = open.info;
    let lang = text[info_start..info_end]
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let body_start = (info_end + 1).min(text.len());
    let prose_end =
        || closing_fence_line(text, body_start, open.ticks).map_or(text.len(), |(_, end)| end);
    if !CALL_LANGS.contains(&lang.as_str()) {
        return (None, prose_end(), false);
    }
    let closing = "`".repeat(open.ticks);
    // A valid body (objects, or wrappers holding calls) closes at the fence right after it,
    // wherever that fence sits; any other body at the next fence line, since a lost quote
    // makes strings unreliable.
    let (objects, stop, unclosed) = object_run(text, body_start);
    let structural = if !objects.is_empty() && !unclosed && all_parse(text, &objects) {
        Some(stop)
    } else {
        xml_run(text, body_start)
    };
    let (body_end, end) = match structural.filter(|stop| text[*stop..].starts_with(&closing)) {
        Some(stop) => (
            stop,
            stop + text[stop..].bytes().take_while(|b| *b == b'`').count(),
        ),
        None => {
            closing_fence_line(text, body_start, open.ticks).unwrap_or((text.len(), text.len()))
        }
    };
    let verdicts = fence_verdicts(text, body_start..body_end, lang == "tool_call");
    let opens_json = text[body_start..body_end]
        .trim_start()
        .starts_with(['{', '[', '<']);
    if verdicts.is_empty() {
        return (None, end, opens_json);
    }
    let block = Block {
        span: open.start..end,
        source: Source::Fence,
        verdicts,
    };
    let miss = !has_call(&block);
    (Some(block), end, miss)
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
        return wrapped_verdicts(trimmed)
            .into_iter()
            .map(|verdict| match verdict {
                Verdict::Call(call, range) => {
                    Verdict::Call(call, range.start + offset..range.end + offset)
                }
                Verdict::Malformed(reason) => Verdict::Malformed(reason),
            })
            .collect();
    }
    // Objects filling the body, and not running past its closing fence, are read one by one.
    let (objects, _, unclosed) = object_run(text, body.start);
    let fills_body = objects
        .last()
        .is_some_and(|last| last.end <= body.end && text[last.end..body.end].trim().is_empty());
    if !unclosed && fills_body {
        return objects
            .into_iter()
            .filter_map(|range| object_verdict(text, range, insistent))
            .collect();
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

fn read_bare(text: &str, start: usize) -> (Option<Block>, usize) {
    let end = container_end(text, start);
    if let Some(end) = end
        && let Ok(value) = parse_json(&text[start..end])
    {
        let verdict = match classify(value) {
            Shape::Call(call) => Verdict::Call(call, start..end),
            Shape::Broken(reason) => Verdict::Malformed(reason),
            // Valid data is skipped whole.
            Shape::NotACall => return (None, end),
        };
        let block = Block {
            span: start..end,
            source: Source::Bare,
            verdicts: vec![verdict],
        };
        return (Some(block), end);
    }
    // Broken: it reaches to its end, or as far as an unclosed object does, but never past a
    // line that plainly opens another call, since a lost quote makes strings unreliable.
    let extent = end
        .unwrap_or_else(|| unclosed_extent(text, start))
        .min(next_call_line(text, start));
    if !looks_like_call(&text[start..extent]) {
        // Broken text that is no call may hide one on a later line.
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
    (Some(block), extent)
}

/// The start of the first line after the one holding `from` that plainly opens a call,
/// strings or not: a fence labelled for calls, a wrapper tag, or an object whose first key
/// is a protocol key. The end of the text when there is none.
fn next_call_line(text: &str, from: usize) -> usize {
    let mut line_start = match text[from..].find('\n') {
        Some(i) => from + i + 1,
        None => return text.len(),
    };
    while line_start < text.len() {
        let line = text[line_start..].trim_start_matches([' ', '\t']);
        let fence_lang = line.strip_prefix("```").map(|rest| {
            rest.lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        let next_line = line
            .split_once('\n')
            .map_or("", |(_, next)| next)
            .trim_start();
        let call_follows = xml_tag_at(next_line).is_some()
            || (next_line.starts_with('{') && opens_like_call(next_line));
        let opens = fence_lang.is_some_and(|lang| {
            CALL_LANGS.contains(&lang.as_str()) && (!lang.is_empty() || call_follows)
        }) || xml_tag_at(line).is_some()
            || (line.starts_with('{') && opens_like_call(line));
        if opens {
            return line_start;
        }
        line_start += text[line_start..].find('\n').map_or(text.len(), |i| i + 1);
    }
    text.len()
}

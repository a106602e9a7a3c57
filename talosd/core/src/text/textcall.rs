//! Tool calls: arguments from native `tool_calls`, and calls written as text in a model's
//! answer. Either way the result is only a proposal.
//!
//! Text calls are found in one left-to-right pass (`scan`): fenced blocks (```` ```json ````,
//! ```` ```tool_call ````, unlabelled), the deprecated XML wrappers (`<tool_call>`,
//! `<function_call>`, `<tool>`, `<function>`), and bare objects at a line start or right after
//! another one. Bare objects are not proposed when a fenced block holds a call attempt (the
//! model wrapped and also bare-emitted): they are set aside in [`TextCalls::ignored`]. The JSON
//! is lenient in one way only (`lenient`): raw control characters inside strings. The shapes
//! a call may take are in `shape`: an object with a name key is a call only when it holds
//! nothing but protocol keys or names a `talos.` tool, so JSON data stays prose. A block that
//! means to be a call but cannot be used makes the answer `malformed` and is removed from the
//! prose, so raw protocol is never echoed.

mod lenient;
mod markers;
mod scan;
mod shape;

use std::collections::BTreeMap;
use std::ops::Range;

use scan::{Source, Verdict};

/// A tool call as the model proposed it, before any check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCall {
    pub name: String,
    pub args: BTreeMap<String, String>,
}

/// What a model's text held.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextCalls {
    pub calls: Vec<ParsedCall>,
    /// For each call, the byte range of the JSON text it was read from.
    pub call_spans: Vec<Range<usize>>,
    /// A block that looked like a tool call but was not valid JSON, had no usable name, or
    /// had arguments that are not an object.
    pub malformed: bool,
    /// Why the first malformed block was unusable.
    pub malformed_reason: Option<String>,
    /// Bare calls written beside fenced ones: not proposed, and removed from the prose.
    pub ignored: Vec<ParsedCall>,
    /// The text with every tool-call block removed: what a person may be shown.
    pub prose: String,
}

/// Why a call's arguments could not be read as a flat map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsJsonError {
    /// The parser's message.
    NotJson(String),
    /// What the arguments were instead ("an array", "a number", …).
    NotAnObject(&'static str),
}

impl std::fmt::Display for ArgsJsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgsJsonError::NotJson(e) => write!(f, "tool-call arguments are not valid JSON: {e}"),
            ArgsJsonError::NotAnObject(kind) => {
                write!(f, "tool-call arguments must be a JSON object, got {kind}")
            }
        }
    }
}

impl std::error::Error for ArgsJsonError {}

/// Parses native-call arguments (a JSON object, or a string holding one). Raw control
/// characters inside strings are accepted, as for calls written as text.
pub fn args_from_json(arguments: &str) -> Result<BTreeMap<String, String>, ArgsJsonError> {
    let trimmed = arguments.trim();
    if trimmed.is_empty() {
        return Ok(BTreeMap::new());
    }
    let value = lenient::parse(trimmed).map_err(|e| ArgsJsonError::NotJson(e.to_string()))?;
    shape::args_from_value(value, 0)
}

/// Finds tool calls written as text in a model's answer.
pub fn parse(text: &str) -> TextCalls {
    let blocks = scan::blocks(text);
    let fenced_attempt = blocks.iter().any(|block| block.source == Source::Fence);
    let mut out = TextCalls::default();
    for block in &blocks {
        for verdict in &block.verdicts {
            match (verdict, block.source) {
                (Verdict::Call(call, _), Source::Bare) if fenced_attempt => {
                    out.ignored.push(call.clone());
                }
                (Verdict::Call(call, span), Source::Bare | Source::Fence | Source::Xml) => {
                    out.calls.push(call.clone());
                    out.call_spans.push(span.clone());
                }
                (Verdict::Malformed(reason), Source::Bare | Source::Fence | Source::Xml) => {
                    out.malformed = true;
                    out.malformed_reason.get_or_insert_with(|| reason.clone());
                }
            }
        }
    }
    let spans: Vec<Range<usize>> = blocks.into_iter().map(|block| block.span).collect();
    out.prose = prose_without(text, &spans);
    out
}

/// The text with `removed` cut out (each cut closes up to a paragraph break, a space or
/// nothing, by the whitespace around it), trailing stray fences dropped, trimmed.
fn prose_without(text: &str, removed: &[Range<usize>]) -> String {
    let mut out = String::new();
    let mut cursor = 0;
    let mut gap: Option<Gap> = None;
    for span in removed {
        push_kept(&mut out, &text[cursor..span.start.max(cursor)], &mut gap);
        let trimmed_len = out.trim_end().len();
        gap.get_or_insert(Gap::default())
            .absorb(&out[trimmed_len..]);
        out.truncate(trimmed_len);
        cursor = cursor.max(span.end);
    }
    push_kept(&mut out, &text[cursor.min(text.len())..], &mut gap);
    drop_trailing_stray_fences(out.trim())
}

/// The whitespace met around removed blocks, until the next kept text.
#[derive(Debug, Default, Clone, Copy)]
struct Gap {
    newline: bool,
    space: bool,
}

impl Gap {
    fn absorb(&mut self, whitespace: &str) {
        self.newline |= whitespace.contains('\n');
        self.space |= !whitespace.is_empty();
    }
}

fn push_kept(out: &mut String, kept: &str, gap: &mut Option<Gap>) {
    let Some(mut pending) = *gap else {
        out.push_str(kept);
        return;
    };
    let rest = kept.trim_start();
    pending.absorb(&kept[..kept.len() - rest.len()]);
    if rest.is_empty() {
        *gap = Some(pending);
        return;
    }
    if !out.is_empty() {
        out.push_str(match pending {
            Gap { newline: true, .. } => "\n\n",
            Gap { space: true, .. } => " ",
            Gap { .. } => "",
        });
    }
    out.push_str(rest);
    *gap = None;
}

/// Drops lines at the end that are only a fence, while the fences of the text do not pair up.
fn drop_trailing_stray_fences(text: &str) -> String {
    let mut text = text.to_string();
    loop {
        let fences = text.lines().filter(|line| is_fence_line(line)).count();
        let last_start = text.rfind('\n').map_or(0, |i| i + 1);
        if fences % 2 == 0 || !is_fence_line(&text[last_start..]) {
            return text;
        }
        text.truncate(last_start);
        text.truncate(text.trim_end().len());
    }
}

fn is_fence_line(line: &str) -> bool {
    let line = line.trim();
    let info = line.trim_start_matches('`');
    line.len() - info.len() >= 3 && !info.contains(|c: char| c == '`' || c.is_whitespace())
}

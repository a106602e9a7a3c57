//! Property tests for tool calls written as text: `parse` never panics; every call it returns
//! was read from a JSON object that is valid once raw control characters in strings are
//! escaped (checked with an escaper written here, independently of the crate's); random
//! calls rendered in every accepted shape round-trip exactly, in order, with the prose
//! between them; and a call whose JSON is corrupted is never returned.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};
use talos_core::textcall::{ParsedCall, TextCalls, parse};

const TOOL_NAMES: [&str; 8] = [
    "talos.read_file",
    "talos.write_file",
    "talos.edit_file",
    "talos.list_dir",
    "talos.grep",
    "read_file",
    "edit_file",
    "list_dir",
];

/// Prose a model writes between calls; none of it opens a call.
const PROSE: [&str; 7] = [
    "I'll read the file first.",
    "Next, the edit:",
    "Done. The value is 30 {not 60}.",
    "Here is `a {b}` inline, with <b>bold</b> text.",
    "```python\nprint(\"{x}\")\n```",
    "Use ``` fences for code.",
    "Résumé ✓ — ok!",
];

/// Fragments that stress the parser: fences, tags, braces, quotes, escapes, unicode.
const FRAGMENTS: [&str; 24] = [
    "```json\n",
    "```tool_call\n",
    "```\n",
    "```",
    "{",
    "}",
    "[",
    "]",
    "\"name\"",
    ": ",
    ", ",
    "\"talos.edit_file\"",
    "\"parameters\"",
    "\"arguments\"",
    "\"",
    "\\",
    "\\\"",
    "\n",
    "\t",
    "<tool_call>",
    "</tool_call>",
    "<function>",
    "é✓😀",
    "prose ",
];

/// How one call's JSON is laid out.
#[derive(Debug, Clone, Copy)]
enum Layout {
    NameParameters,
    NameArgumentsObject,
    NameArgumentsString,
    NameArgs,
    ToolNameParams,
    ToolParameters,
    FunctionNameParameters,
    FunctionString,
    FunctionObject,
    OpenAi,
    ToolCallWrapper,
    FunctionCallWrapper,
}

const LAYOUTS: [Layout; 12] = [
    Layout::NameParameters,
    Layout::NameArgumentsObject,
    Layout::NameArgumentsString,
    Layout::NameArgs,
    Layout::ToolNameParams,
    Layout::ToolParameters,
    Layout::FunctionNameParameters,
    Layout::FunctionString,
    Layout::FunctionObject,
    Layout::OpenAi,
    Layout::ToolCallWrapper,
    Layout::FunctionCallWrapper,
];

/// How one call sits in the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrap {
    Fence(&'static str),
    FencedXml,
    Xml(&'static str),
    Bare,
}

/// Answers where fences carry the calls (bare objects would be set aside).
const FENCED_WRAPS: [Wrap; 8] = [
    Wrap::Fence("json"),
    Wrap::Fence(""),
    Wrap::Fence("tool_call"),
    Wrap::FencedXml,
    Wrap::Xml("tool_call"),
    Wrap::Xml("function_call"),
    Wrap::Xml("tool"),
    Wrap::Xml("function"),
];
/// Answers without fenced calls: bare objects and XML wrappers.
const BARE_WRAPS: [Wrap; 4] = [
    Wrap::Bare,
    Wrap::Bare,
    Wrap::Xml("tool_call"),
    Wrap::Xml("function"),
];

#[derive(Debug, Clone)]
struct Rendered {
    call: ParsedCall,
    layout: Layout,
    wrap: Wrap,
    pretty: bool,
    raw_newlines: bool,
}

fn text_value() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => "[ -~]{0,8}",
        2 => "\\PC{0,3}",
        1 => prop::sample::select(&["\"", "\\", "\n", "\t", "\r\n", "```", "```json\n", "</tool_call>", "<tool_call>", "{", "}", "\\n", "\n{\"name\": \"x\"}\n", "é✓😀"][..]).prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

fn arguments() -> impl Strategy<Value = BTreeMap<String, String>> {
    let key = prop_oneof![3 => "[a-z_]{1,10}", 1 => text_value()];
    prop::collection::btree_map(key, text_value(), 0..5)
}

fn rendered(wraps: &'static [Wrap]) -> impl Strategy<Value = Rendered> {
    (
        prop::sample::select(&TOOL_NAMES[..]),
        arguments(),
        prop::sample::select(&LAYOUTS[..]),
        prop::sample::select(wraps),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(name, args, layout, wrap, pretty, raw_newlines)| Rendered {
                call: ParsedCall {
                    name: name.to_string(),
                    args,
                },
                layout,
                wrap,
                pretty,
                raw_newlines,
            },
        )
}

/// An answer: calls in order, each with optional prose before it, and optional prose after.
fn answer(
    wraps: &'static [Wrap],
) -> impl Strategy<
    Value = (
        Vec<(Option<&'static str>, Rendered)>,
        Option<&'static str>,
        u8,
    ),
> {
    (
        prop::collection::vec(
            (
                prop::option::of(prop::sample::select(&PROSE[..])),
                rendered(wraps),
            ),
            1..5,
        ),
        prop::option::of(prop::sample::select(&PROSE[..])),
        0u8..3,
    )
}

fn json_of(rendered: &Rendered) -> Value {
    let name = rendered.call.name.as_str();
    let args = json!(rendered.call.args);
    let args_text = args.to_string();
    match rendered.layout {
        Layout::NameParameters => json!({"name": name, "parameters": args}),
        Layout::NameArgumentsObject => json!({"name": name, "arguments": args}),
        Layout::NameArgumentsString => json!({"name": name, "arguments": args_text}),
        Layout::NameArgs => json!({"name": name, "args": args}),
        Layout::ToolNameParams => json!({"tool_name": name, "params": args}),
        Layout::ToolParameters => json!({"tool": name, "parameters": args}),
        Layout::FunctionNameParameters => json!({"function_name": name, "parameters": args}),
        Layout::FunctionString => json!({"function": name, "arguments": args}),
        Layout::FunctionObject => json!({"function": {"name": name, "arguments": args}}),
        Layout::OpenAi => {
            json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": args_text}})
        }
        Layout::ToolCallWrapper => json!({"tool_call": {"name": name, "parameters": args}}),
        Layout::FunctionCallWrapper => {
            json!({"function_call": {"name": name, "arguments": args}})
        }
    }
}

fn json_text(rendered: &Rendered) -> String {
    let value = json_of(rendered);
    let text = if rendered.pretty {
        serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string())
    } else {
        value.to_string()
    };
    if rendered.raw_newlines {
        unescape_newlines(&text)
    } else {
        text
    }
}

/// Turns `\n` and `\t` escapes inside JSON strings into the raw characters a model writes.
fn unescape_newlines(json: &str) -> String {
    let mut out = String::new();
    let mut chars = json.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The oracle's own lenient step: raw control characters inside strings become escapes.
fn escape_controls(json: &str) -> String {
    let mut out = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (false, _, '"') => in_string = true,
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (true, false, c) if (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

fn wrapped(json: &str, wrap: Wrap) -> String {
    match wrap {
        Wrap::Fence(lang) => format!("```{lang}\n{json}\n```"),
        Wrap::FencedXml => format!("```\n<tool_call>\n{json}\n</tool_call>\n```"),
        Wrap::Xml(tag) => format!("<{tag}>\n{json}\n</{tag}>"),
        Wrap::Bare => json.to_string(),
    }
}

/// Joins the pieces: a newline between pieces, and sometimes nothing or a space between
/// calls that allow it (a bare object after a bare object, a tag after a bare object or tag).
fn assemble(pieces: &[(String, Option<Wrap>)], tight: u8) -> String {
    let mut text = String::new();
    for (index, (piece, wrap)) in pieces.iter().enumerate() {
        if index > 0 {
            let previous = pieces[index - 1].1;
            let tight_ok = matches!(
                (previous, wrap),
                (Some(Wrap::Bare), Some(Wrap::Bare | Wrap::Xml(_)))
                    | (Some(Wrap::Xml(_)), Some(Wrap::Xml(_)))
            );
            text.push_str(match (tight_ok, tight) {
                (true, 1) => "",
                (true, 2) => " ",
                _ => "\n",
            });
        }
        text.push_str(piece);
    }
    text
}

/// The answer text, the calls expected in order, and the prose expected.
fn build(
    calls: &[(Option<&'static str>, Rendered)],
    tail: Option<&'static str>,
    tight: u8,
    corrupt: Option<(usize, &dyn Fn(String) -> String)>,
) -> (String, Vec<ParsedCall>, String) {
    let mut pieces = Vec::new();
    let mut prose = Vec::new();
    let mut expected = Vec::new();
    for (index, (before, rendered)) in calls.iter().enumerate() {
        if let Some(before) = before {
            pieces.push((before.to_string(), None));
            prose.push(*before);
        }
        let json = match corrupt {
            Some((target, damage)) if target == index => damage(json_text(&Rendered {
                raw_newlines: false,
                ..rendered.clone()
            })),
            Some(_) | None => {
                expected.push(rendered.call.clone());
                json_text(rendered)
            }
        };
        pieces.push((wrapped(&json, rendered.wrap), Some(rendered.wrap)));
    }
    if let Some(tail) = tail {
        pieces.push((tail.to_string(), None));
        prose.push(tail);
    }
    (assemble(&pieces, tight), expected, prose.join("\n\n"))
}

/// Invariants of any parse: spans match calls and are valid JSON objects after the lenient
/// escape, names are usable, a malformed answer says why.
fn check_invariants(text: &str, parsed: &TextCalls) -> Result<(), TestCaseError> {
    prop_assert_eq!(parsed.calls.len(), parsed.call_spans.len());
    prop_assert_eq!(parsed.malformed, parsed.malformed_reason.is_some());
    for (call, span) in parsed.calls.iter().zip(&parsed.call_spans) {
        prop_assert!(!call.name.trim().is_empty());
        prop_assert_eq!(call.name.trim(), call.name.as_str());
        let source = text.get(span.clone());
        prop_assert!(source.is_some(), "span {:?} is not inside the text", span);
        let source = source.unwrap_or_default();
        let value = serde_json::from_str::<Value>(&escape_controls(source));
        prop_assert!(
            matches!(value, Ok(Value::Object(_)) | Ok(Value::Array(_))),
            "call {:?} came from text that is not a JSON object: {:?}",
            call,
            source
        );
    }
    Ok(())
}

fn is_subsequence(found: &[ParsedCall], of: &[ParsedCall]) -> bool {
    let mut rest = of.iter();
    found
        .iter()
        .all(|call| rest.any(|candidate| candidate == call))
}

fn truncate_at(json: String, fraction: f64) -> String {
    let cut = ((json.len() as f64) * fraction) as usize;
    let cut = (0..=cut.min(json.len().saturating_sub(1)))
        .rev()
        .find(|at| json.is_char_boundary(*at))
        .unwrap_or(0);
    json[..cut].to_string()
}

fn drop_brace(json: String, pick: usize) -> String {
    let braces: Vec<usize> = json
        .char_indices()
        .filter(|(_, c)| *c == '{' || *c == '}')
        .map(|(at, _)| at)
        .collect();
    let at = braces[pick % braces.len()];
    format!("{}{}", &json[..at], &json[at + 1..])
}

proptest! {
    #![proptest_config(Config::with_cases(3000))]

    /// Proves `parse` never panics on arbitrary text and keeps its invariants.
    #[test]
    fn parse_survives_arbitrary_text(text in "\\PC*|[\\s\\S]{0,200}") {
        let parsed = parse(&text);
        check_invariants(&text, &parsed)?;
    }

    /// Proves `parse` never panics on text built from protocol fragments, and every call it
    /// returns came from valid JSON.
    #[test]
    fn parse_survives_fragments(pieces in prop::collection::vec(prop::sample::select(&FRAGMENTS[..]), 0..40)) {
        let text = pieces.concat();
        let parsed = parse(&text);
        check_invariants(&text, &parsed)?;
    }
}

proptest! {
    #![proptest_config(Config::with_cases(1500))]

    /// Proves calls in fences and XML wrappers round-trip exactly, in order, with the prose.
    #[test]
    fn fenced_calls_round_trip((calls, tail, tight) in answer(&FENCED_WRAPS)) {
        let (text, expected, prose) = build(&calls, tail, tight, None);
        let parsed = parse(&text);
        check_invariants(&text, &parsed)?;
        prop_assert_eq!(&parsed.calls, &expected, "text: {:?}", text);
        prop_assert!(!parsed.malformed, "text: {:?}", text);
        prop_assert!(parsed.ignored.is_empty());
        prop_assert_eq!(parsed.prose, prose);
    }

    /// Proves bare calls (one per line or adjacent) and XML calls round-trip exactly.
    #[test]
    fn bare_calls_round_trip((calls, tail, tight) in answer(&BARE_WRAPS)) {
        let (text, expected, prose) = build(&calls, tail, tight, None);
        let parsed = parse(&text);
        check_invariants(&text, &parsed)?;
        prop_assert_eq!(&parsed.calls, &expected, "text: {:?}", text);
        prop_assert!(!parsed.malformed, "text: {:?}", text);
        prop_assert_eq!(parsed.prose, prose);
    }

}

proptest! {
    #![proptest_config(Config::with_cases(1000))]

    /// Proves a call whose JSON is truncated or loses a brace is never returned; in fences
    /// and tags the other calls are all still found, and bare ones are never mangled.
    #[test]
    fn corrupted_calls_are_never_returned(
        (calls, tail, tight) in answer(&FENCED_WRAPS),
        (bare_calls, bare_tail, bare_tight) in answer(&BARE_WRAPS),
        target in any::<prop::sample::Index>(),
        fraction in 0.0f64..1.0,
        pick in any::<usize>(),
        truncate in any::<bool>(),
    ) {
        let damage = |json: String| if truncate { truncate_at(json, fraction) } else { drop_brace(json, pick) };
        for (family, (calls, tail, tight)) in [("fenced", (calls, tail, tight)), ("bare", (bare_calls, bare_tail, bare_tight))] {
            let index = target.index(calls.len());
            let broken = damage(json_text(&Rendered { raw_newlines: false, ..calls[index].1.clone() }));
            if serde_json::from_str::<Value>(&broken).is_ok() {
                continue; // a brace inside a string: still valid JSON, another call
            }
            let (text, others, _) = build(&calls, tail, tight, Some((index, &damage)));
            let parsed = parse(&text);
            check_invariants(&text, &parsed)?;
            let original = &calls[index].1.call;
            prop_assert!(
                !parsed.calls.contains(original) || others.contains(original),
                "{} corrupted call returned from {:?}", family, text
            );
            prop_assert!(is_subsequence(&parsed.calls, &others), "{} calls mangled: {:?} from {:?}", family, parsed.calls, text);
            if family == "fenced" {
                prop_assert_eq!(&parsed.calls, &others, "text: {:?}", text);
            }
        }
    }
}

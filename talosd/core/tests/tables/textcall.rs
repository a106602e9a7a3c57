//! Table rows for tool calls written as text: every accepted shape, every pass (fences, XML
//! wrappers, bare objects, adjacent objects, the whole text), the lenient control characters,
//! malformed blocks, and code or data that must stay prose.

use pretty_assertions::assert_eq;
use talos_core::textcall::{ParsedCall, TextCalls, args_from_json, parse};

fn call(name: &str, args: &[(&str, &str)]) -> ParsedCall {
    ParsedCall {
        name: name.into(),
        args: args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// One row: the calls found, whether a block was malformed, and the prose left.
fn check(text: &str, calls: Vec<ParsedCall>, malformed: bool, prose: &str) {
    let parsed: TextCalls = parse(text);
    assert_eq!(
        (&parsed.calls, parsed.malformed, parsed.prose.as_str()),
        (&calls, malformed, prose),
        "input: {text:?}"
    );
    assert_eq!(parsed.call_spans.len(), parsed.calls.len());
    assert_eq!(
        parsed.malformed,
        parsed.malformed_reason.is_some(),
        "{text:?}"
    );
}

const READ_A: &str = "{\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"a.py\"}}";

/// Proves each accepted shape yields the same call.
#[test]
fn shapes() {
    let read = || vec![call("talos.read_file", &[("path", "a.py")])];
    let rows = [
        "{\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"a.py\"}}",
        "{\"name\": \"talos.read_file\", \"arguments\": {\"path\": \"a.py\"}}",
        "{\"name\": \"talos.read_file\", \"arguments\": \"{\\\"path\\\": \\\"a.py\\\"}\"}",
        "{\"name\": \"talos.read_file\", \"args\": {\"path\": \"a.py\"}}",
        "{\"tool_name\": \"talos.read_file\", \"params\": {\"path\": \"a.py\"}}",
        "{\"tool\": \"talos.read_file\", \"params\": {\"path\": \"a.py\"}}",
        "{\"function_name\": \"talos.read_file\", \"parameters\": {\"path\": \"a.py\"}}",
        "{\"function\": \"talos.read_file\", \"arguments\": {\"path\": \"a.py\"}}",
        "{\"function\": {\"name\": \"talos.read_file\", \"arguments\": {\"path\": \"a.py\"}}}",
        "{\"type\": \"function\", \"id\": \"call_1\", \"function\": {\"name\": \"talos.read_file\", \"arguments\": \"{\\\"path\\\":\\\"a.py\\\"}\"}}",
        "{\"tool_call\": {\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"a.py\"}}}",
        "{\"function_call\": {\"name\": \"talos.read_file\", \"arguments\": {\"path\": \"a.py\"}}}",
        "{\"name\": \"  talos.read_file \", \"parameters\": {\"path\": \"a.py\", \"skip\": null}}",
    ];
    for json in rows {
        check(json, read(), false, "");
        check(&format!("```json\n{json}\n```"), read(), false, "");
        check(&format!("<tool_call>{json}</tool_call>"), read(), false, "");
    }
    check(
        "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}",
        vec![call("read_file", &[("path", "a")])],
        false,
        "",
    );
    check(
        "{\"name\": \"talos.list_dir\"}",
        vec![call("talos.list_dir", &[])],
        false,
        "",
    );
    check(
        "{\"name\": \"talos.list_dir\", \"arguments\": \"\"}",
        vec![call("talos.list_dir", &[])],
        false,
        "",
    );
}

/// Proves parameter values: scalars as text, nested containers as compact JSON.
#[test]
fn parameter_values() {
    check(
        "{\"name\": \"talos.grep\", \"parameters\": {\"n\": 5, \"f\": 1.5, \"b\": true, \"list\": [1, \"x\"], \"obj\": {\"k\": null}}}",
        vec![call(
            "talos.grep",
            &[
                ("n", "5"),
                ("f", "1.5"),
                ("b", "true"),
                ("list", "[1,\"x\"]"),
                ("obj", "{\"k\":null}"),
            ],
        )],
        false,
        "",
    );
}

/// Proves each pass: fence labels, XML tags, bare lines, adjacent objects, mixed order.
#[test]
fn passes() {
    let read = || call("talos.read_file", &[("path", "a.py")]);
    let list = || call("talos.list_dir", &[("path", ".")]);
    const LIST: &str = "{\"name\": \"talos.list_dir\", \"parameters\": {\"path\": \".\"}}";
    for label in ["json", "JSON", "tool_call", "", "jsonc"] {
        check(
            &format!("I'll read it.\n```{label}\n{READ_A}\n```\nThen answer."),
            vec![read()],
            false,
            "I'll read it.\n\nThen answer.",
        );
    }
    for tag in ["tool_call", "function_call", "tool", "function"] {
        check(
            &format!("Reading: <{tag}>\n{READ_A}\n</{tag}> now"),
            vec![read()],
            false,
            "Reading: now",
        );
    }
    check(
        &format!("First:\n{READ_A}\nand then\n  {LIST}\nok"),
        vec![read(), list()],
        false,
        "First:\n\nand then\n\nok",
    );
    check(&format!("{READ_A}{LIST}"), vec![read(), list()], false, "");
    check(
        &format!("{READ_A} \n\n {LIST}"),
        vec![read(), list()],
        false,
        "",
    );
    check(
        &format!("<tool_call>{READ_A}</tool_call>\n```json\n{LIST}\n```"),
        vec![read(), list()],
        false,
        "",
    );
    check(
        &format!("```json\n{READ_A}\n{LIST}\n```"),
        vec![read(), list()],
        false,
        "",
    );
    check(
        &format!("```json\n[{READ_A}, {LIST}]\n```"),
        vec![read(), list()],
        false,
        "",
    );
    check(
        &format!("<tool_call>\n{READ_A}\n{LIST}\n</tool_call>"),
        vec![read(), list()],
        false,
        "",
    );
    check(
        &format!("```\n<tool_call>{READ_A}</tool_call>\n```"),
        vec![read()],
        false,
        "",
    );
    check(
        &format!("Here: ```json\n{READ_A}```"),
        vec![read()],
        false,
        "Here:",
    );
    // A bare call beside a fenced one is set aside, not proposed, and not echoed.
    let parsed = parse(&format!("```json\n{LIST}\n```\n{READ_A}\nDone."));
    assert_eq!(parsed.calls, vec![list()]);
    assert_eq!(parsed.ignored, vec![read()]);
    assert_eq!(parsed.prose, "Done.");
    // A bare call beside a fence that only shows code is proposed.
    check(
        &format!("```python\nprint(1)\n```\n{READ_A}"),
        vec![read()],
        false,
        "```python\nprint(1)\n```",
    );
}

/// Proves JSON strings may hold raw newlines and tabs, and fences or tags inside strings.
#[test]
fn lenient_strings() {
    let content = "def f():\n\treturn 1\n";
    check(
        "```json\n{\"name\": \"talos.write_file\", \"parameters\": {\"path\": \"f.py\", \"content\": \"def f():\n\treturn 1\n\"}}\n```",
        vec![call(
            "talos.write_file",
            &[("path", "f.py"), ("content", content)],
        )],
        false,
        "",
    );
    let inner = "# T\n```python\nx = 1\n```\n</tool_call>\n{\"name\": 1}";
    let json = serde_json::json!({"name": "talos.write_file", "parameters": {"path": "r.md", "content": inner}});
    let raw = json.to_string().replace("\\n", "\n");
    let expected = vec![call(
        "talos.write_file",
        &[("path", "r.md"), ("content", inner)],
    )];
    check(&format!("```json\n{raw}\n```"), expected.clone(), false, "");
    check(
        &format!("<tool_call>\n{raw}\n</tool_call>"),
        expected.clone(),
        false,
        "",
    );
    check(
        &format!("Writing.\n{raw}\nDone."),
        expected,
        false,
        "Writing.\n\nDone.",
    );
    // Only control characters are lenient: an unknown escape stays invalid.
    check(
        "```json\n{\"name\": \"talos.grep\", \"parameters\": {\"pattern\": \"\\'x\"}}\n```",
        vec![],
        true,
        "",
    );
}

/// Proves broken call attempts are malformed and removed; the first reason is kept.
#[test]
fn malformed_blocks() {
    let rows: [(&str, &str); 13] = [
        (
            "```json\n{\"name\": \"talos.write_file\", \"parameters\": {\"path\": \"a\",\n```",
            "",
        ),
        (
            "{\"name\": \"talos.read_file\", \"parameters\": {\"path\": ",
            "",
        ),
        (
            "Sure.\n{\"name\": \"talos.read_file\", \"parameters\": {\"path\": 'a'}}\nDone.",
            "Sure.\n\nDone.",
        ),
        (
            "{'name': 'talos.read_file', 'parameters': {'path': 'a'}}",
            "",
        ),
        (
            "```json\n{\"name\": \"talos.read_file\", \"arguments\": [\"a\"]}\n```",
            "",
        ),
        (
            "```json\n{\"name\": \"talos.read_file\", \"arguments\": \"{not json\"}\n```",
            "",
        ),
        ("```json\n{\"name\": \"\", \"parameters\": {}}\n```", ""),
        ("```json\n{\"name\": 7, \"parameters\": {}}\n```", ""),
        ("```tool_call\n{\"path\": \"a\"}\n```", ""),
        ("```tool_call\nread_file(path='a')\n```", ""),
        ("<tool_call>read_file(path='a')</tool_call> ok", "ok"),
        (
            "<tool_call>{\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"a\"}",
            "",
        ),
        ("```json\n{\"tool_call\": {\"arguments\": {}}}\n```", ""),
    ];
    for (text, prose) in rows {
        check(text, vec![], true, prose);
    }
    let parsed = parse("```json\n{\"name\": \"talos.read_file\", \"arguments\": [1]}\n```");
    assert_eq!(
        parsed.malformed_reason.as_deref(),
        Some("talos.read_file: tool-call arguments must be a JSON object, got an array")
    );
    // A broken call does not swallow a valid one that follows it.
    check(
        &format!(
            "{{\"name\": \"talos.grep\", \"parameters\": {{\"pattern\": \"x\"}}\n```json\n{READ_A}\n```"
        ),
        vec![call("talos.read_file", &[("path", "a.py")])],
        true,
        "",
    );
}

/// Proves code and data that are not call attempts stay prose, untouched.
#[test]
fn prose_stays() {
    let rows = [
        "Plain answer with no calls.",
        "```rust\nfn main() {}\n```",
        "```python\n{\"name\": \"talos.read_file\", \"parameters\": {}}\n```",
        "```json\n{\"name\": \"my-package\", \"version\": \"1.0.0\"}\n```",
        "```json\n{\"name\": \"Alice\", \"age\": 30}\n```",
        "{\"name\": \"Alice\", \"age\": 30}",
        "```json\n[1, 2, 3]\n```",
        "```json\n{\"title\": \"x\"}\n```",
        "{ is an opening brace\nand } closes it",
        "The <tool> element and <function> keyword.",
        "Use ``` to open a fence.",
        "Inline `{\"name\": \"talos.read_file\"}` is only quoted.",
        "```\nplain text block\n```",
    ];
    for text in rows {
        check(text, vec![], false, text);
    }
}

/// Proves prose joins: paragraph breaks close up, stray trailing fences go.
#[test]
fn prose_tidy() {
    check(
        &format!("Before.\n\n\n```json\n{READ_A}\n```\n\n\nAfter."),
        vec![call("talos.read_file", &[("path", "a.py")])],
        false,
        "Before.\n\nAfter.",
    );
    check(
        &format!("Here it is:\n```json\n{READ_A}\n```\n```"),
        vec![call("talos.read_file", &[("path", "a.py")])],
        false,
        "Here it is:",
    );
    check("Done.\n```", vec![], false, "Done.");
    check(
        "```python\nx = 1\n```",
        vec![],
        false,
        "```python\nx = 1\n```",
    );
}

/// Proves native arguments: objects, JSON strings, raw newlines, and refusals.
#[test]
fn native_arguments_rows() {
    let ok: [(&str, &[(&str, &str)]); 5] = [
        (
            "{\"path\":\"a\",\"n\":3,\"b\":true}",
            &[("path", "a"), ("n", "3"), ("b", "true")],
        ),
        ("", &[]),
        ("  ", &[]),
        ("{\"ops\":[1,2]}", &[("ops", "[1,2]")]),
        ("{\"content\": \"a\nb\"}", &[("content", "a\nb")]),
    ];
    for (input, expected) in ok {
        assert_eq!(
            args_from_json(input),
            Ok(call("x", expected).args),
            "{input:?}"
        );
    }
    assert_eq!(
        args_from_json("\"{\\\"path\\\": \\\"a\\\"}\""),
        Ok(call("x", &[("path", "a")]).args)
    );
    for bad in ["{\"path\": \"a\"", "[1,2]", "7", "\"x\""] {
        assert!(args_from_json(bad).is_err(), "{bad:?}");
    }
}

/// Proves the cases property tests once found stay fixed: a broken call (lost quote, lost
/// brace, tag or fence inside its strings) never swallows the valid call after it.
#[test]
fn broken_neighbours() {
    let read = || call("talos.read_file", &[]);
    let rows: [(&str, usize, bool); 7] = [
        (
            "<tool>\n\"name\":\"talos.read_file\",\"parameters\":{\"<tool_call>\":\"\"}}\n</tool>\n```json\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```",
            1,
            false,
        ),
        (
            "<tool_call>\n{\"arguments\":\"{\\\" <tool_call>`\n</tool_call>\n```json\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```",
            1,
            true,
        ),
        (
            "<function_call>\n{\"function\":{\"arguments\":{\"_\":\"{<tool_call>\",\"name\":\"talos.read_file\"}}\n</function_call>\n```json\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```",
            1,
            true,
        ),
        (
            "<tool_call>\n{\"name\":\"talos.read_file\",\"par\n</tool_call>\n```json\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```",
            1,
            true,
        ),
        (
            "<function_call>\n\"name\":\"talos.read_file\",\"parameters\":{\"a\":\" ```\"}}\n</function_call>\n<tool_call>\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n</tool_call>",
            1,
            true,
        ),
        (
            "<function_call>\n\n  \"arguments\": {\n    \"_\": \"<tool_call>{\"\n  },\n  \"name\": \"talos.read_file\"\n}\n</function_call>\n```\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```\n```tool_call\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```",
            2,
            true,
        ),
        (
            "{\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"a\n\nSome prose\n```json\n{\"name\":\"talos.read_file\",\"parameters\":{}}\n```",
            1,
            true,
        ),
    ];
    for (text, found, malformed) in rows {
        let parsed = parse(text);
        assert_eq!(parsed.calls, vec![read(); found], "{text:?}");
        assert_eq!(parsed.malformed, malformed, "{text:?}");
    }
    // A fenced wrapper whose JSON string holds a raw fence line.
    let text = "```\n<tool_call>\n{\"args\":{\"_\":\"\n```\n\"},\"name\":\"talos.read_file\"}\n</tool_call>\n```";
    check(
        text,
        vec![call("talos.read_file", &[("_", "\n```\n")])],
        false,
        "",
    );
}

/// Proves the scan budget: broken attempts are each costly, so after 64 of them the rest of
/// the answer is prose; valid data and code blocks do not count.
#[test]
fn costly_misses_budget() {
    let broken = "{ not json\n".repeat(64);
    let parsed = parse(&format!("{broken}{READ_A}"));
    assert_eq!(
        parsed.calls,
        vec![call("talos.read_file", &[("path", "a.py")])]
    );
    let too_many = "{ not json\n".repeat(65);
    let parsed = parse(&format!("{too_many}{READ_A}"));
    assert_eq!(parsed.calls, vec![]);
    let data = "{\"a\": 1}\n```python\n{\n```\n".repeat(200);
    let parsed = parse(&format!("{data}{READ_A}"));
    assert_eq!(
        parsed.calls,
        vec![call("talos.read_file", &[("path", "a.py")])]
    );
}

//! Tool calls: arguments from native `tool_calls`, and calls written as text (a fenced
//! ```json block or a bare JSON object with `name` and `parameters` or `arguments`). Either
//! way the result is only a proposal.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

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
    /// A block that looked like a tool call but was not valid JSON or had no usable name.
    pub malformed: bool,
    /// The text with every tool-call block removed: what a person may be shown.
    pub prose: String,
}

const NAME_KEYS: [&str; 4] = ["name", "tool_name", "tool", "function_name"];
const ARG_KEYS: [&str; 4] = ["parameters", "arguments", "args", "params"];

/// Parses native-call arguments (a JSON object, or a string holding one).
pub fn args_from_json(arguments: &str) -> Result<BTreeMap<String, String>, String> {
    let trimmed = arguments.trim();
    if trimmed.is_empty() {
        return Ok(BTreeMap::new());
    }
    let value: Value = serde_json::from_str(trimmed)
        .map_err(|e| format!("tool-call arguments are not valid JSON: {e}"))?;
    args_from_value(value)
}

fn args_from_value(value: Value) -> Result<BTreeMap<String, String>, String> {
    match value {
        Value::Object(map) => Ok(flatten(map)),
        Value::String(inner) => args_from_json(&inner),
        Value::Null => Ok(BTreeMap::new()),
        other => Err(format!(
            "tool-call arguments must be a JSON object, got {}",
            kind_of(&other)
        )),
    }
}

fn flatten(map: Map<String, Value>) -> BTreeMap<String, String> {
    map.into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s,
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                other => other.to_string(),
            };
            (k, text)
        })
        .collect()
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One object -> a call, `Ok(None)` when it is not a tool call at all, `Err` when it is one
/// but unusable.
fn call_from_object(mut map: Map<String, Value>) -> Result<Option<ParsedCall>, ()> {
    for wrapper in ["tool_call", "function_call"] {
        if let Some(Value::Object(inner)) = map.remove(wrapper) {
            return call_from_object(inner);
        }
    }
    if let Some(Value::Object(function)) = map.get("function").cloned() {
        map.remove("function");
        let mut merged = function;
        for (k, v) in map {
            merged.entry(k).or_insert(v);
        }
        return call_from_object(merged);
    }
    let name = NAME_KEYS
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_string));
    let Some(name) = name else {
        return if NAME_KEYS.iter().any(|k| map.contains_key(*k)) {
            Err(())
        } else {
            Ok(None)
        };
    };
    if name.trim().is_empty() {
        return Err(());
    }
    let args = ARG_KEYS
        .iter()
        .find_map(|k| map.get(*k).cloned())
        .unwrap_or(Value::Null);
    args_from_value(args)
        .map(|args| Some(ParsedCall { name, args }))
        .map_err(|_| ())
}

/// Finds tool calls written as text in a model's answer.
pub fn parse(text: &str) -> TextCalls {
    let mut out = TextCalls::default();
    let mut prose = String::new();
    let mut rest = text;
    let mut found_fence = false;
    while let Some(open) = rest.find("```") {
        let after_ticks = &rest[open + 3..];
        let header_end = after_ticks.find('\n').unwrap_or(after_ticks.len());
        let lang = after_ticks[..header_end].trim().to_lowercase();
        let body_start = (header_end + 1).min(after_ticks.len());
        let body_and_more = &after_ticks[body_start..];
        let (body, consumed) = match body_and_more.find("```") {
            Some(close) => (&body_and_more[..close], open + 3 + body_start + close + 3),
            None => (body_and_more, rest.len()),
        };
        let is_json_lang = lang.is_empty() || lang == "json" || lang == "tool_call";
        let looks_like_call = is_json_lang
            && body.trim_start().starts_with('{')
            && NAME_KEYS.iter().any(|k| body.contains(&format!("\"{k}\"")));
        if looks_like_call {
            found_fence = true;
            prose.push_str(&rest[..open]);
            match serde_json::from_str::<Value>(body.trim()) {
                Ok(Value::Object(map)) => match call_from_object(map) {
                    Ok(Some(call)) => out.calls.push(call),
                    Ok(None) | Err(()) => out.malformed = true,
                },
                _ => out.malformed = true,
            }
        } else {
            prose.push_str(&rest[..consumed.min(rest.len())]);
        }
        rest = &rest[consumed.min(rest.len())..];
    }
    prose.push_str(rest);
    if found_fence {
        out.prose = tidy(&prose);
        return out;
    }
    // No fences: bare JSON objects starting a line.
    let mut prose = String::new();
    let mut cursor = 0;
    let mut line_start = 0;
    while line_start < text.len() {
        let line_end = text[line_start..]
            .find('\n')
            .map(|i| line_start + i + 1)
            .unwrap_or(text.len());
        let trimmed_offset =
            text[line_start..line_end].len() - text[line_start..line_end].trim_start().len();
        let start = line_start + trimmed_offset;
        if text[start..].starts_with('{') && start >= cursor {
            let mut stream =
                serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(Value::Object(map))) => {
                    let end = start + stream.byte_offset();
                    match call_from_object(map) {
                        Ok(Some(call)) => {
                            out.calls.push(call);
                            prose.push_str(&text[cursor..line_start]);
                            cursor = end;
                        }
                        Ok(None) => {}
                        Err(()) => {
                            out.malformed = true;
                            prose.push_str(&text[cursor..line_start]);
                            cursor = end;
                        }
                    }
                    line_start = end;
                    continue;
                }
                Some(Err(_))
                    if NAME_KEYS
                        .iter()
                        .any(|k| text[start..line_end].contains(&format!("\"{k}\""))) =>
                {
                    out.malformed = true;
                    prose.push_str(&text[cursor..line_start]);
                    cursor = text.len();
                    break;
                }
                _ => {}
            }
        }
        line_start = line_end;
    }
    if cursor < text.len() {
        prose.push_str(&text[cursor..]);
    }
    out.prose = tidy(&prose);
    out
}

fn tidy(text: &str) -> String {
    text.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call(name: &str, args: &[(&str, &str)]) -> ParsedCall {
        ParsedCall {
            name: name.into(),
            args: args
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn check(text: &str, calls: Vec<ParsedCall>, malformed: bool, prose: &str) {
        let parsed = parse(text);
        assert_eq!(
            parsed,
            TextCalls {
                calls,
                malformed,
                prose: prose.into()
            },
            "{text}"
        );
    }

    #[test]
    fn text_call_rows() {
        check(
            "I'll edit it.\n```json\n{\"name\": \"talos.edit_file\", \"parameters\": {\"path\": \"a.py\", \"old_string\": \"30\", \"new_string\": \"60\"}}\n```\nDone soon.",
            vec![call(
                "talos.edit_file",
                &[("path", "a.py"), ("old_string", "30"), ("new_string", "60")],
            )],
            false,
            "I'll edit it.\n\nDone soon.",
        );
        check(
            "{\"name\": \"talos.read_file\", \"arguments\": {\"path\": \"a.py\", \"max_lines\": 5}}",
            vec![call(
                "talos.read_file",
                &[("path", "a.py"), ("max_lines", "5")],
            )],
            false,
            "",
        );
        check(
            "```json\n{\"tool_name\": \"talos.read_file\", \"params\": {\"path\": \"a\"}}\n```\n```json\n{\"name\": \"talos.list_dir\", \"arguments\": \"{\\\"path\\\": \\\".\\\"}\"}\n```",
            vec![
                call("talos.read_file", &[("path", "a")]),
                call("talos.list_dir", &[("path", ".")]),
            ],
            false,
            "",
        );
        check(
            "```json\n{\"name\": \"talos.write_file\", \"parameters\": {\"path\": \"a\",\n```",
            vec![],
            true,
            "",
        );
        check(
            "Plain answer with no calls.",
            vec![],
            false,
            "Plain answer with no calls.",
        );
        check(
            "```rust\nfn main() {}\n```",
            vec![],
            false,
            "```rust\nfn main() {}\n```",
        );
        check(
            "{\"function\": {\"name\": \"talos.read_file\", \"arguments\": {\"path\": \"x\"}}}",
            vec![call("talos.read_file", &[("path", "x")])],
            false,
            "",
        );
        check(
            "{\"name\": \"talos.read_file\", \"parameters\": {\"path\": ",
            vec![],
            true,
            "",
        );
    }

    #[test]
    fn native_arguments_rows() {
        assert_eq!(
            args_from_json("{\"path\":\"a\",\"n\":3,\"b\":true}")
                .unwrap()
                .len(),
            3
        );
        assert_eq!(args_from_json("").unwrap().len(), 0);
        assert!(args_from_json("{\"path\": \"a\"").is_err());
        assert!(args_from_json("[1,2]").is_err());
        assert_eq!(args_from_json("{\"ops\":[1,2]}").unwrap()["ops"], "[1,2]");
    }
}

//! The shapes a tool call may take once its JSON has parsed: `name` with `parameters`,
//! `arguments` (an object or a JSON string holding one), `args` or `params`; the name under
//! `name`, `function`, `function_name`, `tool_name` or `tool`; wrapper objects `tool_call` and
//! `function_call`; and the OpenAI `function: {name, arguments}` object. An object with a
//! name key is a call only when it is made of protocol keys or names a `talos.` tool, so a
//! JSON example such as `{"name": "Alice", "age": 3}` stays prose.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::markers::NAME_KEYS;
use super::{ArgsJsonError, ParsedCall, lenient};

/// Keys that may hold the arguments, in the order they are tried.
const ARG_KEYS: [&str; 4] = ["parameters", "arguments", "args", "params"];
const WRAPPER_KEYS: [&str; 2] = ["tool_call", "function_call"];
/// Keys a call object may carry besides its name and arguments.
const BOOKKEEPING_KEYS: [&str; 4] = ["id", "type", "call_id", "tool_call_id"];
/// How many times arguments may be JSON text inside JSON text.
const MAX_ENCODING_DEPTH: usize = 3;
/// How many wrapper objects may be peeled off.
const MAX_WRAPPER_DEPTH: usize = 4;

/// What one parsed JSON value is, as a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    Call(ParsedCall),
    /// It means to be a call but cannot be used; the reason says why.
    Broken(String),
    /// Plain data, not a call.
    NotACall,
}

/// Reads one JSON value as a tool call.
pub(crate) fn classify(value: Value) -> Shape {
    match value {
        Value::Object(map) => classify_object(map, 0),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            Shape::NotACall
        }
    }
}

/// Arguments as a flat map: strings as they are, numbers and booleans as text, nested
/// containers as compact JSON, nulls dropped. A string is parsed as JSON holding an object.
pub(crate) fn args_from_value(
    value: Value,
    depth: usize,
) -> Result<BTreeMap<String, String>, ArgsJsonError> {
    match value {
        Value::Object(map) => Ok(flatten(map)),
        Value::Null => Ok(BTreeMap::new()),
        Value::String(inner) if inner.trim().is_empty() => Ok(BTreeMap::new()),
        Value::String(inner) if depth < MAX_ENCODING_DEPTH => {
            let parsed =
                lenient::parse(inner.trim()).map_err(|e| ArgsJsonError::NotJson(e.to_string()))?;
            args_from_value(parsed, depth + 1)
        }
        other @ (Value::String(_) | Value::Bool(_) | Value::Number(_) | Value::Array(_)) => {
            Err(ArgsJsonError::NotAnObject(kind_of(&other)))
        }
    }
}

fn classify_object(mut map: Map<String, Value>, depth: usize) -> Shape {
    if depth > MAX_WRAPPER_DEPTH {
        return Shape::NotACall;
    }
    let protocol_only = map.keys().all(|k| is_protocol_key(k));
    for wrapper in WRAPPER_KEYS {
        if matches!(map.get(wrapper), Some(Value::Object(_))) {
            let Some(Value::Object(inner)) = map.remove(wrapper) else {
                return Shape::NotACall;
            };
            return promote(classify_object(inner, depth + 1), protocol_only, wrapper);
        }
    }
    if matches!(map.get("function"), Some(Value::Object(_))) {
        let Some(Value::Object(mut merged)) = map.remove("function") else {
            return Shape::NotACall;
        };
        for (key, value) in map {
            if key != "type" {
                merged.entry(key).or_insert(value);
            }
        }
        return promote(
            classify_object(merged, depth + 1),
            protocol_only,
            "function",
        );
    }
    let Some((name_key, name_value)) = NAME_KEYS
        .iter()
        .find_map(|key| map.get(*key).map(|value| (*key, value)))
    else {
        return Shape::NotACall;
    };
    let name = match name_value {
        Value::String(name) => name.trim().to_string(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            return if protocol_only {
                Shape::Broken(format!(
                    "the tool name under `{name_key}` is {}, not a string",
                    kind_of(name_value)
                ))
            } else {
                Shape::NotACall
            };
        }
    };
    if !protocol_only && !name.to_ascii_lowercase().starts_with("talos.") {
        return Shape::NotACall;
    }
    if name.is_empty() {
        return Shape::Broken("the tool name is empty".into());
    }
    let args = ARG_KEYS
        .iter()
        .find_map(|key| map.remove(*key))
        .unwrap_or(Value::Null);
    match args_from_value(args, 0) {
        Ok(args) => Shape::Call(ParsedCall { name, args }),
        Err(reason) => Shape::Broken(format!("{name}: {reason}")),
    }
}

/// Inside a wrapper, data that is no call at all still means a broken call when the outer
/// object holds nothing but protocol keys.
fn promote(inner: Shape, protocol_only: bool, wrapper: &str) -> Shape {
    match inner {
        Shape::NotACall if protocol_only => {
            Shape::Broken(format!("the `{wrapper}` object names no tool"))
        }
        Shape::NotACall => Shape::NotACall,
        Shape::Call(call) => Shape::Call(call),
        Shape::Broken(reason) => Shape::Broken(reason),
    }
}

fn is_protocol_key(key: &str) -> bool {
    NAME_KEYS.contains(&key)
        || ARG_KEYS.contains(&key)
        || WRAPPER_KEYS.contains(&key)
        || BOOKKEEPING_KEYS.contains(&key)
}

fn flatten(map: Map<String, Value>) -> BTreeMap<String, String> {
    map.into_iter()
        .filter_map(|(key, value)| {
            let text = match value {
                Value::Null => return None,
                Value::String(text) => text,
                Value::Bool(flag) => flag.to_string(),
                Value::Number(number) => number.to_string(),
                container @ (Value::Array(_) | Value::Object(_)) => container.to_string(),
            };
            Some((key, text))
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

//! A small, strict JSON Schema validator for the subset `schemars` emits.
//!
//! Strict: a keyword it does not know fails the validation (so a schema construct this checker
//! ignores can never make a fixture pass by being skipped). Known assertion keywords: `type`,
//! `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `oneOf`, `anyOf`,
//! `allOf`, `$ref` (local `#/$defs/...` only), `minimum`, `maximum`, `format` (integer widths);
//! annotations (`description`, `title`, `default`, `$schema`, `$defs`, ...) are skipped.

use serde_json::{Map, Value};

/// Keywords that only annotate.
const ANNOTATIONS: [&str; 8] = [
    "$schema",
    "$defs",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
];

/// The problems of `value` against `schema`, resolving `$ref`s in `root`; empty when valid.
pub fn problems(root: &Value, schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(root, schema, value, at, &mut out);
    out
}

fn check(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let object = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return out.push(format!("{at}: no value is allowed here")),
        Value::Object(object) => object,
        _ => return out.push(format!("{at}: schema is not an object: {schema}")),
    };
    for (keyword, arg) in object {
        match keyword.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "type" => check_type(arg, value, at, out),
            "properties" | "additionalProperties" | "required" => {}
            "items" => {
                if let Value::Array(items) = value {
                    for (i, item) in items.iter().enumerate() {
                        check(root, arg, item, &format!("{at}[{i}]"), out);
                    }
                }
            }
            "enum" => {
                if !arg.as_array().is_some_and(|all| all.contains(value)) {
                    out.push(format!("{at}: {value} is not one of {arg}"));
                }
            }
            "const" if arg != value => out.push(format!("{at}: {value} is not {arg}")),
            "const" => {}
            "oneOf" | "anyOf" => check_alternatives(root, keyword, arg, value, at, out),
            "allOf" => {
                for sub in arg.as_array().into_iter().flatten() {
                    check(root, sub, value, at, out);
                }
            }
            "$ref" => match resolve(root, arg) {
                Some(target) => check(root, target, value, at, out),
                None => out.push(format!("{at}: unresolvable $ref {arg}")),
            },
            "minimum" => {
                if value.as_f64().zip(arg.as_f64()).is_some_and(|(v, m)| v < m) {
                    out.push(format!("{at}: {value} is below {arg}"));
                }
            }
            "maximum" => {
                if value.as_f64().zip(arg.as_f64()).is_some_and(|(v, m)| v > m) {
                    out.push(format!("{at}: {value} is above {arg}"));
                }
            }
            "format" => check_format(arg, value, at, out),
            other => out.push(format!("{at}: unknown schema keyword {other:?}")),
        }
    }
    if let Value::Object(fields) = value {
        check_object(root, object, fields, at, out);
    }
}

fn check_alternatives(
    root: &Value,
    keyword: &str,
    arg: &Value,
    value: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    let alternatives = arg.as_array().map(Vec::as_slice).unwrap_or_default();
    let matching = alternatives
        .iter()
        .filter(|sub| problems(root, sub, value, at).is_empty())
        .count();
    let ok = match keyword {
        "oneOf" => matching == 1,
        _ => matching >= 1,
    };
    if !ok {
        out.push(format!(
            "{at}: {keyword} matched {matching} of {} alternatives for {value}",
            alternatives.len()
        ));
    }
}

fn check_object(
    root: &Value,
    schema: &Map<String, Value>,
    fields: &Map<String, Value>,
    at: &str,
    out: &mut Vec<String>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !fields.contains_key(name) {
            out.push(format!("{at}: missing required field {name:?}"));
        }
    }
    for (name, field) in fields {
        let here = format!("{at}.{name}");
        let sub = properties
            .and_then(|all| all.get(name))
            .or_else(|| schema.get("additionalProperties"));
        if let Some(sub) = sub {
            check(root, sub, field, &here, out);
        }
    }
}

fn check_type(arg: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let names: Vec<&str> = match arg {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => return out.push(format!("{at}: bad type keyword {arg}")),
    };
    let fits = |name: &str| match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => false,
    };
    if !names.iter().any(|name| fits(name)) {
        out.push(format!("{at}: {value} is not of type {arg}"));
    }
}

/// Integer formats: the value must fit the width (`uint`, `uint32`, `uint64`, `int64`, ...).
fn check_format(arg: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let Some(format) = arg.as_str() else {
        return out.push(format!("{at}: bad format keyword {arg}"));
    };
    let fits = match format {
        "uint" | "uint64" => value.is_u64(),
        "uint8" => value.as_u64().is_some_and(|n| n <= u64::from(u8::MAX)),
        "uint16" => value.as_u64().is_some_and(|n| n <= u64::from(u16::MAX)),
        "uint32" => value.as_u64().is_some_and(|n| n <= u64::from(u32::MAX)),
        "int" | "int64" => value.is_i64(),
        "int32" => value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        "double" | "float" => value.is_number(),
        _ => return out.push(format!("{at}: unknown format {format:?}")),
    };
    if !value.is_number() {
        return; // `type` reports a non-number
    }
    if !fits {
        out.push(format!("{at}: {value} does not fit {format}"));
    }
}

fn resolve<'a>(root: &'a Value, reference: &Value) -> Option<&'a Value> {
    let pointer = reference.as_str()?.strip_prefix('#')?;
    root.pointer(pointer)
}

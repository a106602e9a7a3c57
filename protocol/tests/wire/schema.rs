//! The published JSON Schema (`protocol/schema/`): the committed files are what the types
//! generate (regenerate with `TALOS_BLESS=1 cargo test -p talos-protocol --test wire schema`), every
//! method of `ALL_METHODS` has its entry, every wire fixture and every message shown in
//! docs/protocol.md validates against its schema, and
//! the schema accepts exactly what serde accepts on a table of near misses (a misspelt field or
//! mode, a missing field, an alias, an unknown event kind).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a broken file should panic

mod validate;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use talos_protocol::event::{TurnEvent, TurnEventParams};
use talos_protocol::methods::{self as m, ALL_METHODS};
use talos_protocol::schema::{self, BLESS_COMMAND, Sender, Side};

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read_json(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.json` file under `dir`, relative to it, with its text.
fn committed(dir: &Path, under: &str, into: &mut BTreeMap<String, String>) {
    let Ok(entries) = fs::read_dir(dir.join(under)) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let relative = if under.is_empty() {
            name
        } else {
            format!("{under}/{name}")
        };
        if path.is_dir() {
            committed(dir, &relative, into);
        } else {
            into.insert(relative, fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn committed_schema_is_what_the_types_generate() {
    let generated = schema::files();
    let dir = schema_dir();
    if std::env::var_os("TALOS_BLESS").is_some() {
        let _ = fs::remove_dir_all(&dir);
        for (file, text) in &generated {
            let path = dir.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
        }
    }
    let mut on_disk = BTreeMap::new();
    committed(&dir, "", &mut on_disk);
    let mut stale = Vec::new();
    for (file, text) in &generated {
        match on_disk.get(file) {
            None => stale.push(format!("{file}: missing")),
            Some(committed) if committed != text => stale.push(format!("{file}: differs")),
            Some(_) => {}
        }
    }
    stale.extend(
        on_disk
            .keys()
            .filter(|file| !generated.contains_key(*file))
            .map(|file| format!("{file}: not generated any more")),
    );
    assert!(
        stale.is_empty(),
        "protocol/schema/ is stale; regenerate it with `{BLESS_COMMAND}`:\n  {}",
        stale.join("\n  ")
    );
}

#[test]
fn schema_has_every_method_in_order() {
    let names: Vec<&str> = schema::method_schemas().iter().map(|s| s.method).collect();
    assert_eq!(names, ALL_METHODS.to_vec());
    let index: Value = serde_json::from_str(&schema::files()[schema::INDEX_FILE]).unwrap();
    let listed: Vec<&str> = index["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["method"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ALL_METHODS.to_vec());
}

/// `value` against a root schema (or, with `def`, one of its `$defs`).
fn problems(root: &Value, def: Option<&str>, value: &Value, at: &str) -> Vec<String> {
    let schema = match def {
        Some(def) => json!({ "$ref": format!("#/$defs/{def}") }),
        None => root.clone(),
    };
    validate::problems(root, &schema, value, at)
}

#[test]
fn every_fixture_validates_against_its_schema() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for method in schema::method_schemas() {
        for (name, side) in [("params", &method.params), ("result", &method.result)] {
            let Side::Typed(schema) = side else { continue };
            let file = format!("{}.{name}.json", method.method.replace('/', "-"));
            let fixture = read_json(&fixtures().join("methods").join(&file));
            failures.extend(problems(schema.as_value(), None, &fixture, &file));
            checked += 1;
        }
    }
    let event = schema::schema_for::<TurnEventParams>(Sender::Daemon);
    for entry in fs::read_dir(fixtures().join("events")).unwrap() {
        let path = entry.unwrap().path();
        let at = path.file_name().unwrap().to_string_lossy().into_owned();
        let fixture = read_json(&path);
        failures.extend(problems(event.as_value(), Some("TurnEvent"), &fixture, &at));
        checked += 1;
    }
    let record = read_json(&fixtures().join("trace/record.json"));
    let trace = schema::trace_record_schema();
    failures.extend(problems(
        trace.as_value(),
        None,
        &record,
        "trace/record.json",
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 41 method sides, 17 event kinds: a fixture directory read as empty must not pass.
    assert!(checked >= 41 + 17, "only {checked} fixtures checked");
}

/// Whether serde accepts `value` as `T`, and whether `T`'s schema (as `writer` writes it) does.
fn verdicts<T: DeserializeOwned + schemars::JsonSchema>(
    writer: Sender,
    value: &Value,
) -> (bool, bool) {
    let serde = serde_json::from_value::<T>(value.clone()).is_ok();
    let schema = schema::schema_for::<T>(writer);
    let schema_ok = problems(schema.as_value(), None, value, "value").is_empty();
    (serde, schema_ok)
}

#[test]
fn schema_accepts_exactly_what_serde_accepts_on_near_misses() {
    use Sender::{Client, Daemon};
    let ws = "/home/ada/proj";
    let ses = "ses-1";
    // (what, serde and schema verdicts, expected verdict)
    let cases: Vec<(&str, (bool, bool), bool)> = vec![
        (
            "session/new as written",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": ws, "mode": "ask"})),
            true,
        ),
        (
            "session/new mode defaulted",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": ws})),
            true,
        ),
        (
            "session/new alias chat",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": ws, "mode": "chat"})),
            true,
        ),
        (
            "session/new alias dev",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": ws, "mode": "dev"})),
            true,
        ),
        (
            "session/new misspelt mode value",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": ws, "mode": "agnet"})),
            false,
        ),
        (
            "session/new misspelt mode key",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": ws, "mdoe": "ask"})),
            false,
        ),
        (
            "session/new without workspace",
            verdicts::<m::SessionNewParams>(Client, &json!({"mode": "ask"})),
            false,
        ),
        (
            "session/new workspace a number",
            verdicts::<m::SessionNewParams>(Client, &json!({"workspace": 7})),
            false,
        ),
        (
            "turn/start snake_case key",
            verdicts::<m::TurnStartParams>(Client, &json!({"session_id": ses, "prompt": "hi"})),
            false,
        ),
        (
            "turn/start pins left out",
            verdicts::<m::TurnStartParams>(Client, &json!({"sessionId": ses, "prompt": "hi"})),
            true,
        ),
        (
            "approval/respond unknown decision",
            verdicts::<m::ApprovalRespondParams>(
                Client,
                &json!({"requestId": "apr-1", "decision": "maybe"}),
            ),
            false,
        ),
        (
            "approval/respond extra field",
            verdicts::<m::ApprovalRespondParams>(
                Client,
                &json!({"requestId": "apr-1", "decision": "deny", "why": "x"}),
            ),
            false,
        ),
        (
            "turn/event unknown kind",
            verdicts::<TurnEvent>(Daemon, &json!({"kind": "bogus", "text": "x"})),
            false,
        ),
        (
            "turn/event ok",
            verdicts::<TurnEvent>(Daemon, &json!({"kind": "ok", "text": "x"})),
            true,
        ),
        (
            "turn/event ok without text",
            verdicts::<TurnEvent>(Daemon, &json!({"kind": "ok"})),
            false,
        ),
        (
            "approval answer in snake_case",
            verdicts::<m::ApprovalResult>(Client, &json!({"decision": "approve_for_session"})),
            false,
        ),
        (
            "approval answer as written",
            verdicts::<m::ApprovalResult>(Client, &json!({"decision": "approveForSession"})),
            true,
        ),
        (
            "trace/list negative limit",
            verdicts::<m::TraceListParams>(Client, &json!({"limit": -1})),
            false,
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(_, (serde, schema), expected)| serde != expected || schema != expected)
        .map(|(what, (serde, schema), expected)| {
            format!("{what}: expected {expected}, serde {serde}, schema {schema}")
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn validator_refuses_keywords_it_does_not_know() {
    let schema = json!({"type": "string", "pattern": "^a"});
    let found = validate::problems(&schema, &schema, &json!("b"), "value");
    assert!(found.iter().any(|p| p.contains("pattern")), "{found:?}");
}

/// The JSON-RPC lines of docs/protocol.md's `json` and `console` blocks, with their line numbers.
fn doc_messages() -> Vec<(usize, Vec<Value>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md");
    let doc = fs::read_to_string(path).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<Value>)> = None;
    for (number, line) in doc.lines().enumerate() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(lang)) if lang == "json" || lang == "console" => {
                current = Some((number + 1, Vec::new()));
            }
            (Some(_), Some(_)) => blocks.extend(current.take()),
            (Some((_, lines)), None) if line.starts_with('{') => {
                lines.push(serde_json::from_str(line).unwrap_or(Value::Null));
            }
            _ => {}
        }
    }
    blocks
}

/// Proves every message shown in docs/protocol.md validates against its method side's schema:
/// a request's or notification's params, and the result of the response with its id.
#[test]
fn every_example_in_the_protocol_doc_validates_against_its_schema() {
    let methods: BTreeMap<&str, schema::MethodSchema> = schema::method_schemas()
        .into_iter()
        .map(|method| (method.method, method))
        .collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (first_line, messages) in doc_messages() {
        let mut pending = BTreeMap::new();
        for message in &messages {
            let at = format!("docs/protocol.md block at line {first_line}: {message}");
            let (side, method) = match (message["method"].as_str(), message.get("result")) {
                (Some(method), _) => {
                    if let Some(id) = message.get("id") {
                        pending.insert(id.to_string(), method);
                    }
                    ("params", method)
                }
                (None, Some(_)) => match pending.get(&message["id"].to_string()) {
                    Some(method) => ("result", *method),
                    None => continue,
                },
                (None, None) => continue,
            };
            let Some(entry) = methods.get(method) else {
                continue; // an unknown method is the malformed-input walk-through's point
            };
            let (schema, value) = match side {
                "params" => (&entry.params, &message["params"]),
                _ => (&entry.result, &message["result"]),
            };
            if let Side::Typed(schema) = schema {
                failures.extend(problems(schema.as_value(), None, value, &at));
                checked += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked >= ALL_METHODS.len(),
        "only {checked} doc messages checked"
    );
}

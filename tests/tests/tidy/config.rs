//! docs/configuration.md in step with the config types ("tidy"): every key `Config::default()`
//! serializes (and every field of a permission rule) has a row in the doc, the doc has no row
//! for a key `Config::parse` refuses, each documented default is the default in the code, and
//! every ```yaml block in the doc parses; each refusal the loader makes (every `Invalid`
//! variant and each bad value) has its message on the page. The comparison is a function of the
//! doc's text, so a test feeds it doctored docs and proves that it fails.
//!
//! The doc's tables have the header `| key | type | default | meaning |`; a key is written
//! `` `section.key` `` (a rule field `` `permissions.rules[].field` ``), and the default cell's
//! first code span is the default as YAML (`18480`, `true`, `[]`, `null`, `""`, a plain word for
//! a string). Defaults that depend on the machine use placeholders this test expands:
//! `$LLAMA_HOME` (`talosd::config::default_llama_home()`), `$CPUS` (the CPU count) and
//! `$USER_PORT` (`talosd::config::default_port()`); for those
//! keys the default may be any of the cell's code spans (a template file present or not).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use talosd::config::Config;

const DOC: &str = "docs/configuration.md";
const HEADER: &str = "| key | type | default | meaning |";
const RULE: &str = "permissions.rules[].";
/// Keys whose default depends on the machine: their cell must use a placeholder.
const MACHINE_DEPENDENT: [&str; 5] = [
    "model.port",
    "model.server",
    "model.path",
    "model.threads",
    "model.chat_template_file",
];

/// Proves docs/configuration.md documents every key with its default and no key the types lack,
/// and that its yaml examples are valid configurations.
#[test]
fn configuration_doc_is_in_step_with_the_config_types() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let path = root.join(DOC);
    let doc = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let problems = problems(&doc);
    assert!(
        problems.is_empty(),
        "{DOC} is out of step with talosd/src/config*.rs:\n  - {}",
        problems.join("\n  - ")
    );
}

/// One documented key: its type and default cells.
#[derive(Debug, Clone)]
struct Row {
    key: String,
    kind: String,
    default: String,
}

/// Everything wrong with `doc`, one sentence each, naming the key and what to do.
fn problems(doc: &str) -> Vec<String> {
    let actual = actual_keys();
    let mut problems = Vec::new();
    let mut documented = BTreeMap::new();
    for row in rows(doc) {
        if documented.insert(row.key.clone(), row.clone()).is_some() {
            problems.push(format!("`{}` has two rows; keep one", row.key));
        }
    }
    for key in actual.keys().filter(|k| !documented.contains_key(*k)) {
        problems.push(format!(
            "`{key}` is a key of config.yaml but has no row; add one to its section's table \
             (type, default `{}`, meaning, limits)",
            shown(&actual[key])
        ));
    }
    for row in documented.values() {
        problems.extend(check_row(row, actual.get(&row.key)));
    }
    for (line, block) in yaml_blocks(doc) {
        if let Err(e) = Config::parse(&expand(&block), "example") {
            problems.push(format!(
                "the ```yaml block at line {line} is not a valid configuration: {e}; fix the example"
            ));
        }
    }
    problems
}

/// The problems with one documented row; `actual` is the code's default, if the key exists.
fn check_row(row: &Row, actual: Option<&Value>) -> Vec<String> {
    let key = &row.key;
    let spans: Vec<String> = code_spans(&row.default).iter().map(|s| expand(s)).collect();
    let required = spans.is_empty() && row.default.contains("required");
    let Some(actual) = actual else {
        // A key the types lack: say what the parser says about it.
        let value = spans.first().map_or(Value::Null, |s| yaml_value(s));
        let refusal = match Config::parse(&snippet(key, &value), "config.yaml") {
            Err(e) => e.to_string(),
            Ok(_) => "it parses, but Config::default() does not serialize it".into(),
        };
        return vec![format!(
            "`{key}` has a row but config.yaml has no such key ({refusal}); remove the row or add \
             the field"
        )];
    };
    let mut problems = Vec::new();
    if required {
        if !key.starts_with(RULE) {
            problems.push(format!(
                "`{key}` is marked required, but only rule fields can be"
            ));
        } else if Config::parse(&rule_without(key), "config.yaml").is_ok() {
            problems.push(format!(
                "`{key}` is marked required, but a rule without it parses; give its default"
            ));
        }
    } else {
        let documented: Vec<Value> = spans.iter().map(|s| yaml_value(s)).collect();
        let machine = MACHINE_DEPENDENT.contains(&key.as_str());
        let matches = if machine {
            documented.contains(actual)
        } else {
            documented.first() == Some(actual)
        };
        if !matches {
            problems.push(format!(
                "`{key}` is documented with the default {}, but Config::default() has `{}`; \
                 fix the default cell (its first code span)",
                row.default,
                shown(actual)
            ));
        }
        if machine && !row.default.contains('$') {
            problems.push(format!(
                "`{key}` depends on the machine; write its default with $LLAMA_HOME, $CPUS or $USER_PORT"
            ));
        }
        if let Err(e) = Config::parse(&snippet(key, actual), "config.yaml") {
            problems.push(format!("`{key}` set to its default does not parse: {e}"));
        }
    }
    let kind_word = match actual {
        Value::Bool(_) => Some("boolean"),
        Value::Number(_) => Some("integer"),
        Value::Array(_) => Some("list"),
        Value::Null | Value::String(_) | Value::Object(_) => None,
    };
    if let Some(word) = kind_word.filter(|w| !row.kind.contains(*w)) {
        problems.push(format!(
            "`{key}` has the type `{}`, but its value is a {word}; fix the type cell",
            row.kind
        ));
    }
    problems
}

/// Every key `config.yaml` accepts, with its default: `Config::default()` serialized and
/// flattened to `section.key`, plus the fields of one permission rule as `permissions.rules[].f`
/// (a rule with only `effect` set, serialized, so every optional field shows its default).
fn actual_keys() -> BTreeMap<String, Value> {
    let mut keys = BTreeMap::new();
    let defaults = serde_json::to_value(Config::default())
        .unwrap_or_else(|e| panic!("Config::default() does not serialize: {e}"));
    flatten("", &defaults, &mut keys);
    let one_rule = "permissions:\n  rules:\n    - effect: allow\n";
    let config = Config::parse(one_rule, "rule")
        .unwrap_or_else(|e| panic!("a rule with only an effect does not parse: {e}"));
    let rule = serde_json::to_value(&config.permissions.rules[0])
        .unwrap_or_else(|e| panic!("a permission rule does not serialize: {e}"));
    flatten(RULE.trim_end_matches('.'), &rule, &mut keys);
    keys
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        // An empty map (`models: {}`) is a key of its own.
        Value::Object(map) if map.is_empty() && !prefix.is_empty() => {
            out.insert(prefix.to_string(), value.clone());
        }
        Value::Object(map) => {
            for (name, inner) in map {
                let key = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                flatten(&key, inner, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

/// The rows of every table with the `key | type | default | meaning` header.
fn rows(doc: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in doc.lines().map(str::trim) {
        if line == HEADER {
            in_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells = cells(line);
        if !in_table || cells.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch))) {
            continue;
        }
        let key = code_spans(cells.first().map_or("", String::as_str));
        rows.push(Row {
            key: key.first().cloned().unwrap_or_else(|| cells[0].clone()),
            kind: cells.get(1).cloned().unwrap_or_default(),
            default: cells.get(2).cloned().unwrap_or_default(),
        });
    }
    rows
}

/// A table line's cells, split on `|` that is not escaped as `\|`.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for ch in inner.chars() {
        match (ch, escaped) {
            ('|', false) => cells.push(String::new()),
            ('\\', false) => escaped = true,
            (ch, _) => {
                if escaped && ch != '|' {
                    cells.last_mut().into_iter().for_each(|c| c.push('\\'));
                }
                escaped = false;
                cells.last_mut().into_iter().for_each(|c| c.push(ch));
            }
        }
    }
    cells.iter().map(|c| c.trim().to_string()).collect()
}

fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_string())
        .collect()
}

/// A default as the doc writes it: JSON-compatible YAML (`1`, `true`, `[]`, `null`, `""`), else
/// a plain string.
fn yaml_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// The machine-dependent placeholders, expanded for this machine.
fn expand(text: &str) -> String {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let llama = talosd::config::default_llama_home();
    text.replace("$LLAMA_HOME", &llama.display().to_string())
        .replace("$CPUS", &cpus.to_string())
        .replace("$USER_PORT", &talosd::config::default_port().to_string())
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(s) if !s.is_empty() => s.clone(),
        other => other.to_string(),
    }
}

/// A config.yaml that sets `key` to `value` (JSON is valid YAML) and nothing else.
fn snippet(key: &str, value: &Value) -> String {
    if let Some(field) = key.strip_prefix(RULE) {
        let base = "permissions:\n  rules:\n    - effect: allow\n";
        return match field {
            "effect" => base.to_string(),
            field => format!("{base}      {field}: {value}\n"),
        };
    }
    match key.split_once('.') {
        Some((section, name)) => format!("{section}:\n  {name}: {value}\n"),
        None => format!("{key}: {value}\n"),
    }
}

/// A rule with every field but `key`'s (to prove a required field is required).
fn rule_without(key: &str) -> String {
    let mut text = String::from("permissions:\n  rules:\n    - reason: x\n");
    if key != format!("{RULE}effect") {
        text.push_str("      effect: allow\n");
    }
    text
}

/// Each ```yaml block with the line its fence is on.
fn yaml_blocks(doc: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in doc.lines().enumerate() {
        match (&mut current, line.trim()) {
            (None, "```yaml") => current = Some((index + 1, String::new())),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some((_, text)), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn real_doc() -> String {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    std::fs::read_to_string(root.join(DOC)).unwrap_or_else(|e| panic!("cannot read {DOC}: {e}"))
}

/// The doc with the row of `key` replaced by `row` (or removed when `row` is empty).
fn with_row(doc: &str, key: &str, row: &str) -> String {
    let cell = format!("| `{key}` |");
    let mut found = false;
    let lines: Vec<String> = doc
        .lines()
        .filter_map(|line| {
            if !line.starts_with(&cell) {
                return Some(line.to_string());
            }
            found = true;
            (!row.is_empty()).then(|| row.to_string())
        })
        .collect();
    assert!(found, "the doc has no row for {key}");
    lines.join("\n")
}

/// Proves the check fails, naming the key, for each way the doc can drift from the types.
#[test]
fn the_check_names_each_kind_of_drift() {
    let doc = real_doc();
    let rows: &[(&str, String, &str)] = &[
        // A field added to the types and not documented looks like a missing row.
        (
            "model.port",
            with_row(&doc, "model.port", ""),
            "`model.port` is a key of config.yaml but has no row",
        ),
        (
            "rule field",
            with_row(&doc, "permissions.rules[].within_workspace", ""),
            "`permissions.rules[].within_workspace` is a key of config.yaml but has no row",
        ),
        (
            "unknown key",
            with_row(
                &doc,
                "model.port",
                "| `model.port` | integer | `18480` | x |\n| `model.colour` | string | `red` | x |",
            ),
            "`model.colour` has a row but config.yaml has no such key",
        ),
        (
            "unknown rule field",
            with_row(
                &doc,
                "permissions.rules[].reason",
                "| `permissions.rules[].reason` | string | `null` | x |\n| `permissions.rules[].colour` | string | `red` | x |",
            ),
            "`permissions.rules[].colour` has a row but config.yaml has no such key",
        ),
        (
            "wrong default",
            with_row(
                &doc,
                "model.port",
                "| `model.port` | integer | `8080` | x |",
            ),
            "`model.port` is documented with the default `8080`",
        ),
        (
            "machine default without placeholder",
            with_row(
                &doc,
                "model.threads",
                "| `model.threads` | integer | `1` | x |",
            ),
            "`model.threads` is documented with the default",
        ),
        (
            "required but optional",
            with_row(
                &doc,
                "permissions.rules[].reason",
                "| `permissions.rules[].reason` | string | required | x |",
            ),
            "`permissions.rules[].reason` is marked required, but a rule without it parses",
        ),
        (
            "wrong type",
            with_row(
                &doc,
                "traces.turn_log",
                "| `traces.turn_log` | string | `true` | x |",
            ),
            "`traces.turn_log` has the type `string`, but its value is a boolean",
        ),
        (
            "bad example",
            format!("{doc}\n```yaml\nmodel:\n  port: 0\n```\n"),
            "is not a valid configuration: example: model.port must be a port number",
        ),
    ];
    for (name, doctored, expected) in rows {
        let found = problems(doctored);
        assert!(
            found.iter().any(|p| p.contains(expected)),
            "{name}: expected a problem containing {expected:?}, got {found:#?}"
        );
    }
}

/// Proves each refusal the loader makes, with its message, is on the page: one config that
/// triggers each `Invalid` variant (a new variant does not compile here until it has a row) and
/// each parse-time refusal of a value. The doc must hold the message without the file name,
/// the serde path prefix and the line.
#[test]
fn every_refusal_is_documented_with_its_message() {
    use talosd::config::{ConfigError, Invalid};
    /// Which `Invalid` variant a row triggers; exhaustive, so a new variant needs a row.
    fn variant(problem: &Invalid) -> usize {
        match problem {
            Invalid::PortZero => 0,
            Invalid::SizeZero => 1,
            Invalid::StartTimeoutZero => 2,
            Invalid::NotAUrl { .. } => 3,
            Invalid::NotHttp(_) => 4,
            Invalid::NotLoopback(_) => 5,
            Invalid::MaxModelCallsZero => 6,
            Invalid::ApprovalTimeoutZero => 7,
            Invalid::Retention(_) => 8,
            Invalid::ReplyTokens { .. } => 9,
            Invalid::Temperature(_) => 10,
            Invalid::TwoKeys => 11,
            Invalid::KeyFile(_) => 12,
            Invalid::ReservedServerArg(_) => 13,
            Invalid::GpuLayersTwice(_) => 14,
            Invalid::MaxRunningZero => 15,
            Invalid::Models(_) => 16,
            Invalid::InEntry { .. } => 17,
            Invalid::Extensions(_) => 18,
            Invalid::Mcp(_) => 19,
            Invalid::CaFile(_) => 20,
        }
    }
    const VARIANTS: usize = 21;
    let rule =
        |field: &str| format!("permissions:\n  rules:\n    - effect: allow\n      {field}\n");
    let rows: Vec<String> = [
        "model:\n  port: 0\n",
        "model:\n  ctx: 0\n",
        "model:\n  start_timeout_secs: 0\n",
        "model:\n  url: x\n",
        "model:\n  url: ftp://127.0.0.1:8080\n",
        "model:\n  api_key_env: K\n  api_key_file: /k\n",
        "model:\n  api_key_file: /nonexistent/talos-key\n",
        "model:\n  ca_file: /dev/zero\n",
        "model:\n  url: http://10.0.0.5:8080\n",
        "turn:\n  max_model_calls: 0\n",
        "approval:\n  timeout_secs: 0\n",
        "retention:\n  max_age_days: 0\n",
        "retention:\n  max_bytes: 0\n",
        "model:\n  reply_tokens: 9000\n",
        "model:\n  temperature: 3\n",
        "model:\n  server_args: [--port, \"9000\"]\n",
        "model:\n  gpu_layers: 20\n  server_args: [-ngl, \"99\"]\n",
        "model:\n  max_running: 0\n",
        "model:\n  default: big\n",
        "models:\n  a: {}\n  b: {}\n",
        "model:\n  default: c\nmodels:\n  a: {}\n",
        "model:\n  default: a\n  ctx: 4096\nmodels:\n  a: {}\n",
        "models:\n  a:\n    default: a\n",
        "models:\n  \"a b\": {}\n",
        "model:\n  default: a\n  max_running: 2\nmodels:\n  a:\n    port: 18480\n  b:\n    port: 18480\n",
        "models:\n  a:\n    port: 0\n",
        "model:\n  mode: x\n",
        "model:\n  constrain: x\n",
        "model:\n  engine: x\n",
        "model:\n  native_tools: x\n",
        "permissions:\n  rules:\n    - effect: x\n",
        "permissions:\n  rules:\n    - reason: x\n",
        "instructions:\n  max_bytes: 0\n",
        "instructions:\n  files: [a/AGENTS.md]\n",
        "hooks:\n  timeout_secs: 0\n",
        "hooks:\n  pre_call:\n    - command: []\n",
        "hooks:\n  post_turn:\n    - command: [\"\"]\n",
        "mcp:\n  servers:\n    Fs:\n      command: [x]\n",
        "mcp:\n  servers:\n    a: {}\n",
        "mcp:\n  servers:\n    a:\n      command: [x]\n      timeout_secs: 0\n",
        "mcp:\n  servers:\n    a:\n      command: [x]\n      max_output_bytes: 0\n",
        "mcp:\n  servers:\n    a:\n      command: [x, \"\"]\n",
        "mcp:\n  servers:\n    a:\n      command: [x]\n      api_key_env: K\n",
        "mcp:\n  servers:\n    a:\n      command: [x]\n      env_allow: [\"A=B\"]\n",
        "mcp:\n  servers:\n    a:\n      command: [x]\n      isolate: [disk]\n",
        "mcp:\n  servers:\n    a:\n      url: http://127.0.0.1:1/\n      isolate: [network]\n",
        "mcp:\n  servers:\n    a:\n      url: nope\n",
        "mcp:\n  servers:\n    a:\n      url: http://10.0.0.5/mcp\n",
        "mcp:\n  servers:\n    a:\n      url: https://mcp.example/mcp\n",
        "mcp:\n  servers:\n    a:\n      url: ftp://127.0.0.1/\n",
        "mcp:\n  servers:\n    a:\n      command: [x]\n      surface: x\n",
    ]
    .into_iter()
    .map(String::from)
    .chain(["tools: x", "risks: x", "phases: x", "paths: \"\""].map(rule))
    .collect();
    let doc = real_doc().replace('\n', " ");
    let mut seen = [false; VARIANTS];
    let mut missing = Vec::new();
    for text in &rows {
        let message = match Config::parse(text, "config.yaml") {
            Ok(_) => panic!("{text:?} was accepted; this row should trigger a refusal"),
            Err(ConfigError::Invalid { problem, .. }) => {
                seen[variant(&problem)] = true;
                problem.to_string()
            }
            Err(other) => {
                let full = other.to_string();
                let message = full.strip_prefix("config.yaml: ").unwrap_or(&full);
                message
                    .split(" at line ")
                    .next()
                    .unwrap_or(message)
                    .to_string()
            }
        };
        let without_path = message.split_once(": ").map_or("", |(_, rest)| rest);
        if !doc.contains(&message) && (without_path.is_empty() || !doc.contains(without_path)) {
            missing.push(format!("{message:?} (from {text:?})"));
        }
    }
    assert!(
        missing.is_empty(),
        "{DOC} does not give these refusals' messages; add each to its key's row:\n  {}",
        missing.join("\n  ")
    );
    let unseen: Vec<usize> = (0..VARIANTS).filter(|&i| !seen[i]).collect();
    assert!(
        unseen.is_empty(),
        "no row triggers Invalid variants {unseen:?}; add a config that does"
    );
}

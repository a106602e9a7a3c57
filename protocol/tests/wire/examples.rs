//! The wire as examples: one JSON fixture per method side, per turn event kind and for a full
//! trace record (`tests/fixtures/`), each round-tripped through the protocol types, and every
//! JSON-RPC line shown in `docs/protocol.md` decoded into the types of the method it documents.
//!
//! A method's fixtures are `fixtures/methods/<method with '/' as '-'>.params.json` and
//! `.result.json` (for `approval/request`, the result is the client's answer); an event kind's is
//! `fixtures/events/<kind>.json`. [`shape`] binds each method name to its types: a name in
//! `ALL_METHODS` without a row there, a typed side without a fixture, and a fixture that names no
//! method or an untyped side all fail. Every method's params fixture also parses into its
//! [`Request`] variant and back.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a broken fixture should panic

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use talos_protocol::event::{TurnEvent, TurnEventParams};
use talos_protocol::methods::{self as m, ALL_METHODS};
use talos_protocol::request::{Request, RequestError};
use talos_protocol::rpc::{ErrorCode, Message, MessageKind};
use talos_protocol::trace::{TRACE_SCHEMA_VERSION, TraceRecord};

/// Decodes a JSON value into a protocol type and encodes it again.
type RoundTrip = fn(&Value) -> Result<Value, String>;

/// How one side of a method (its params, or its result) is typed on the wire.
#[derive(Clone, Copy)]
enum Side {
    /// Decoded into one protocol type.
    Typed(RoundTrip),
    /// Accepted and ignored by the receiver: no type, so no fixture.
    Ignored,
    /// The side does not exist (a notification has no result).
    Absent,
}

/// A method's params and result.
#[derive(Clone, Copy)]
struct Shape {
    params: Side,
    result: Side,
}

/// Which part of a fixture file's name says what it holds.
const SIDES: [(&str, fn(&Shape) -> Side); 2] = [
    ("params", |shape| shape.params),
    ("result", |shape| shape.result),
];

fn round_trip<T: Serialize + DeserializeOwned>(value: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// The types of every method. No wildcard on names we know: an unknown name is `None`.
fn shape(method: &str) -> Option<Shape> {
    use Side::{Absent, Ignored, Typed};
    let typed_pair = |params: RoundTrip, result: RoundTrip| Shape {
        params: Typed(params),
        result: Typed(result),
    };
    let ignored_params = |result: RoundTrip| Shape {
        params: Ignored,
        result: Typed(result),
    };
    Some(match method {
        m::INITIALIZE => typed_pair(
            round_trip::<m::InitializeParams>,
            round_trip::<m::InitializeResult>,
        ),
        m::DAEMON_STATUS => ignored_params(round_trip::<m::DaemonStatusResult>),
        m::DAEMON_SHUTDOWN => ignored_params(round_trip::<m::DaemonShutdownResult>),
        m::SESSION_NEW => typed_pair(
            round_trip::<m::SessionNewParams>,
            round_trip::<m::SessionNewResult>,
        ),
        m::SESSION_LIST => ignored_params(round_trip::<m::SessionListResult>),
        m::SESSION_CLOSE => typed_pair(
            round_trip::<m::SessionCloseParams>,
            round_trip::<m::SessionCloseResult>,
        ),
        m::TURN_START => typed_pair(
            round_trip::<m::TurnStartParams>,
            round_trip::<m::TurnOutcome>,
        ),
        m::TURN_EVENT => Shape {
            params: Typed(round_trip::<TurnEventParams>),
            result: Absent,
        },
        m::APPROVAL_REQUEST => typed_pair(
            round_trip::<m::ApprovalRequestParams>,
            round_trip::<m::ApprovalResult>,
        ),
        m::APPROVAL_RESPOND => typed_pair(
            round_trip::<m::ApprovalRespondParams>,
            round_trip::<m::ApprovalRespondResult>,
        ),
        m::GRANTS_LIST => typed_pair(
            round_trip::<m::GrantsParams>,
            round_trip::<m::GrantsListResult>,
        ),
        m::GRANTS_REVOKE => typed_pair(
            round_trip::<m::GrantsParams>,
            round_trip::<m::GrantsRevokeResult>,
        ),
        m::PROFILE_LIST => typed_pair(
            round_trip::<m::ProfileListParams>,
            round_trip::<m::ProfileListResult>,
        ),
        m::PROFILE_TRUST => typed_pair(
            round_trip::<m::ProfileTrustParams>,
            round_trip::<m::ProfileTrustResult>,
        ),
        m::MODEL_STATUS => ignored_params(round_trip::<m::ModelStatusResult>),
        m::MODEL_SELECT => typed_pair(
            round_trip::<m::ModelSelectParams>,
            round_trip::<m::ModelSelectResult>,
        ),
        m::COMMAND_LIST => typed_pair(
            round_trip::<m::CommandListParams>,
            round_trip::<m::CommandListResult>,
        ),
        m::COMMAND_EXPAND => typed_pair(
            round_trip::<m::CommandExpandParams>,
            round_trip::<m::CommandExpandResult>,
        ),
        m::CONTRACT_CHOOSE => typed_pair(
            round_trip::<m::ContractChooseParams>,
            round_trip::<m::ContractChooseResult>,
        ),
        m::TURN_CANCEL => typed_pair(
            round_trip::<m::TurnCancelParams>,
            round_trip::<m::TurnCancelResult>,
        ),
        m::SESSION_RESUME => typed_pair(
            round_trip::<m::SessionResumeParams>,
            round_trip::<m::SessionResumeResult>,
        ),
        m::CHECKPOINT_LIST => typed_pair(
            round_trip::<m::CheckpointListParams>,
            round_trip::<m::CheckpointListResult>,
        ),
        m::CHECKPOINT_SHOW => typed_pair(
            round_trip::<m::CheckpointShowParams>,
            round_trip::<m::CheckpointShowResult>,
        ),
        m::CHECKPOINT_RESTORE => typed_pair(
            round_trip::<m::CheckpointRestoreParams>,
            round_trip::<m::RestoreResult>,
        ),
        m::TURN_UNDO => typed_pair(
            round_trip::<m::TurnUndoParams>,
            round_trip::<m::RestoreResult>,
        ),
        m::TRACE_LIST => typed_pair(
            round_trip::<m::TraceListParams>,
            round_trip::<m::TraceListResult>,
        ),
        m::TRACE_GET => typed_pair(
            round_trip::<m::TraceGetParams>,
            round_trip::<m::TraceGetResult>,
        ),
        m::DAEMON_GC => ignored_params(round_trip::<m::DaemonGcResult>),
        m::INDEX_STATUS => typed_pair(
            round_trip::<m::IndexParams>,
            round_trip::<m::IndexStatusResult>,
        ),
        m::INDEX_REBUILD => typed_pair(
            round_trip::<m::IndexParams>,
            round_trip::<m::IndexRebuildResult>,
        ),
        m::INDEX_PROGRESS => Shape {
            params: Typed(round_trip::<m::IndexProgressParams>),
            result: Absent,
        },
        m::INDEX_SEARCH => typed_pair(
            round_trip::<m::IndexSearchParams>,
            round_trip::<m::IndexSearchResult>,
        ),
        _ => return None,
    })
}

/// How close a round trip must come back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fidelity {
    /// The same JSON value (key order aside): fixtures spell out every field.
    Exact,
    /// Every field shown comes back with the same value; fields left out may come back with
    /// their defaults (doc examples show what a person would send).
    Shown,
}

/// The one check: `value` decodes as the side's type and encodes back as `fidelity` asks.
/// Returns the problem, if any.
fn check(what: &str, value: &Value, side: Side, fidelity: Fidelity) -> Option<String> {
    match side {
        Side::Typed(round_trip) => match round_trip(value) {
            Err(error) => Some(format!("{what}: does not decode: {error}")),
            Ok(back) if !comes_back(value, &back, fidelity) => Some(format!(
                "{what}: changes in a round trip:\n  {value}\n  {back}"
            )),
            Ok(_) => None,
        },
        Side::Ignored => (!value.is_object() && !value.is_null())
            .then(|| format!("{what}: ignored params should be an object, got {value}")),
        Side::Absent => Some(format!("{what}: this side does not exist on the wire")),
    }
}

/// Whether `back` holds `shown` (exactly, or every object field of `shown`, recursively).
fn comes_back(shown: &Value, back: &Value, fidelity: Fidelity) -> bool {
    match (shown, back, fidelity) {
        (Value::Object(shown), Value::Object(back), Fidelity::Shown) => {
            shown.iter().all(|(key, field)| {
                back.get(key)
                    .is_some_and(|field_back| comes_back(field, field_back, fidelity))
            })
        }
        (Value::Array(shown), Value::Array(back), Fidelity::Shown) => {
            shown.len() == back.len()
                && shown
                    .iter()
                    .zip(back)
                    .all(|(item, item_back)| comes_back(item, item_back, fidelity))
        }
        _ => shown == back,
    }
}

fn assert_none(problems: &[String], title: &str) {
    assert!(problems.is_empty(), "{title}:\n  {}", problems.join("\n  "));
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Proves every method side that has a type has a fixture that round-trips, and that every
/// fixture file names a method and a typed side of it.
#[test]
fn every_method_fixture_round_trips_through_its_types() {
    let dir = fixtures().join("methods");
    let mut unclaimed = file_names(&dir);
    let mut problems = Vec::new();
    for method in ALL_METHODS {
        let Some(shape) = shape(method) else {
            problems.push(format!(
                "{method}: no row in shape() (add one and its fixtures)"
            ));
            continue;
        };
        for (side_name, side_of) in SIDES {
            let name = format!("{}.{side_name}.json", method.replace('/', "-"));
            let present = unclaimed.remove(&name);
            match (side_of(&shape), present) {
                (Side::Typed(_), false) => problems.push(format!("{method}: no fixture {name}")),
                (side @ Side::Typed(_), true) => {
                    problems.extend(check(
                        &name,
                        &read_json(&dir.join(&name)),
                        side,
                        Fidelity::Exact,
                    ));
                }
                (Side::Ignored | Side::Absent, true) => {
                    problems.push(format!("{name}: {method} has no typed {side_name}"));
                }
                (Side::Ignored | Side::Absent, false) => {}
            }
        }
    }
    for name in unclaimed {
        problems.push(format!("{name}: names no method side in ALL_METHODS"));
    }
    assert_none(
        &problems,
        "method fixtures are out of step with the protocol",
    );
}

/// Proves every method of `ALL_METHODS` parses, with its params fixture (or `null` where there
/// is none: params the daemon ignores), into a `Request` of that method, which writes its
/// params back into the same request; an unknown method is refused by name.
#[test]
fn every_method_parses_to_its_request_variant_and_back() {
    let dir = fixtures().join("methods");
    let mut problems = Vec::new();
    let mut methods = BTreeSet::new();
    for method in ALL_METHODS {
        let file = dir.join(format!("{}.params.json", method.replace('/', "-")));
        let params = if file.is_file() {
            read_json(&file)
        } else {
            Value::Null
        };
        let request = match Request::parse(method, params) {
            Ok(request) => request,
            Err(e) => {
                problems.push(format!("{method}: {e}"));
                continue;
            }
        };
        methods.insert(request.method());
        if request.method() != method {
            problems.push(format!("{method}: parsed as {}", request.method()));
        }
        let back = request
            .params()
            .map_err(|e| e.to_string())
            .and_then(|params| Request::parse(method, params).map_err(|e| e.to_string()));
        if back.as_ref() != Ok(&request) {
            problems.push(format!("{method}: came back as {back:?}, not {request:?}"));
        }
    }
    assert_none(&problems, "requests do not round-trip");
    assert_eq!(methods.len(), ALL_METHODS.len(), "one variant per method");
    assert_eq!(
        Request::parse("nope/x", Value::Null),
        Err(RequestError::UnknownMethod("nope/x".into()))
    );
}

/// The number of `TurnEvent` variants; [`variant_number`] must cover `0..TURN_EVENT_VARIANTS`.
const TURN_EVENT_VARIANTS: usize = 18;

/// One number per `TurnEvent` variant. No wildcard: a new variant is a compile error here, the
/// prompt to add its fixture under `fixtures/events/`.
fn variant_number(event: &TurnEvent) -> usize {
    match event {
        TurnEvent::Ok { .. } => 0,
        TurnEvent::Streamed { .. } => 1,
        TurnEvent::Error { .. } => 2,
        TurnEvent::Info { .. } => 3,
        TurnEvent::TrustedInfo { .. } => 4,
        TurnEvent::Table { .. } => 5,
        TurnEvent::StreamStart { .. } => 6,
        TurnEvent::StreamChunk { .. } => 7,
        TurnEvent::StreamEnd { .. } => 8,
        TurnEvent::ToolProgress { .. } => 9,
        TurnEvent::ApprovalRequested { .. } => 10,
        TurnEvent::ApprovalResolved { .. } => 11,
        TurnEvent::Outcome { .. } => 12,
        TurnEvent::Plan { .. } => 13,
        TurnEvent::Call { .. } => 14,
        TurnEvent::Progress { .. } => 15,
        TurnEvent::Usage { .. } => 16,
        TurnEvent::Instructions { .. } => 17,
    }
}

/// Proves every turn event kind has a fixture named after its wire `kind`, and each round-trips.
#[test]
fn every_turn_event_kind_has_a_round_tripping_fixture() {
    let dir = fixtures().join("events");
    let mut problems = Vec::new();
    let mut covered = BTreeSet::new();
    for name in file_names(&dir) {
        let value = read_json(&dir.join(&name));
        problems.extend(check(
            &name,
            &value,
            Side::Typed(round_trip::<TurnEvent>),
            Fidelity::Exact,
        ));
        let Ok(event) = serde_json::from_value::<TurnEvent>(value.clone()) else {
            continue;
        };
        covered.insert(variant_number(&event));
        let kind = value["kind"].as_str().unwrap_or_default();
        if name != format!("{kind}.json") {
            problems.push(format!("{name}: holds kind `{kind}`"));
        }
    }
    for missing in (0..TURN_EVENT_VARIANTS).filter(|n| !covered.contains(n)) {
        problems.push(format!("TurnEvent variant number {missing} has no fixture"));
    }
    assert_none(&problems, "event fixtures are out of step with TurnEvent");
}

/// Proves a full trace record (every list non-empty) at the current schema version round-trips.
#[test]
fn the_trace_record_fixture_round_trips() {
    let value = read_json(&fixtures().join("trace/record.json"));
    let problems: Vec<String> = check(
        "trace/record.json",
        &value,
        Side::Typed(round_trip::<TraceRecord>),
        Fidelity::Exact,
    )
    .into_iter()
    .chain(
        value
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, field)| field.as_array().is_some_and(Vec::is_empty))
            .map(|(key, _)| format!("trace/record.json: `{key}` is empty, so it proves nothing")),
    )
    .collect();
    assert_none(
        &problems,
        "the trace fixture is out of step with TraceRecord",
    );
    assert_eq!(value["schemaVersion"], TRACE_SCHEMA_VERSION);
}

// --- docs/protocol.md -------------------------------------------------------------------------

/// One fenced block of the doc: its info string, the `### ` heading above it, and its lines.
struct Block {
    lang: String,
    heading: String,
    first_line: usize,
    lines: Vec<String>,
}

fn doc_blocks(doc: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut heading = String::new();
    let mut open: Option<Block> = None;
    for (number, line) in doc.lines().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            match open.take() {
                Some(block) => blocks.push(block),
                None => {
                    open = Some(Block {
                        lang: fence.trim().to_string(),
                        heading: heading.clone(),
                        first_line: number + 2,
                        lines: Vec::new(),
                    });
                }
            }
        } else if let Some(block) = open.as_mut() {
            block.lines.push(line.to_string());
        } else if let Some(title) = line.strip_prefix("### ") {
            heading = title.trim().trim_matches('`').to_string();
        } else if line.starts_with("## ") {
            heading.clear();
        }
    }
    blocks
}

/// Checks one JSON-RPC line of the doc. A request or notification is mapped to its method by its
/// `method` field; a response by the id of the request before it in the same block.
fn check_doc_message(
    line: &str,
    pending: &mut BTreeMap<String, String>,
    seen: &mut BTreeSet<String>,
) -> Vec<String> {
    let message: Message = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(error) => return vec![format!("not a JSON-RPC message ({error}): {line}")],
    };
    let id = message
        .id
        .as_ref()
        .map(Value::to_string)
        .unwrap_or_default();
    match message.kind() {
        MessageKind::Request | MessageKind::Notification => {
            let method = message.method.clone().unwrap_or_default();
            let Some(shape) = shape(&method) else {
                return vec![format!("names no method in ALL_METHODS: {line}")];
            };
            seen.insert(method.clone());
            if message.kind() == MessageKind::Request {
                pending.insert(id, method.clone());
            }
            let params = message.params.unwrap_or(Value::Null);
            check(
                &format!("{method} params"),
                &params,
                shape.params,
                Fidelity::Shown,
            )
            .into_iter()
            .collect()
        }
        MessageKind::Response => {
            let Some(method) = pending.remove(&id) else {
                return vec![format!("answers no request shown before it: {line}")];
            };
            let Some(shape) = shape(&method) else {
                return vec![format!("answers an unknown method: {line}")];
            };
            match (message.result, message.error) {
                (Some(result), _) => check(
                    &format!("{method} result"),
                    &result,
                    shape.result,
                    Fidelity::Shown,
                )
                .into_iter()
                .collect(),
                (None, Some(error)) => match ErrorCode::from_code(error.code) {
                    Some(_) => Vec::new(),
                    None => vec![format!("{method}: unknown error code {}", error.code)],
                },
                (None, None) => vec![format!("a response without result or error: {line}")],
            }
        }
        MessageKind::Invalid => vec![format!("an invalid message: {line}")],
    }
}

/// Proves every JSON-RPC line in docs/protocol.md's `json` and `console` examples decodes into
/// the types of its method (and sits in that method's section), every method has an example,
/// every turn event in the event walk-through decodes as a `TurnEvent`, and every error
/// response in a text walk-through carries a known code.
#[test]
fn every_example_in_the_protocol_doc_decodes_into_its_method_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    let mut event_lines = 0;
    for block in doc_blocks(&doc) {
        let mut pending = BTreeMap::new();
        for (offset, line) in block.lines.iter().enumerate() {
            let at = format!("docs/protocol.md:{}", block.first_line + offset);
            match block.lang.as_str() {
                "json" | "console" if line.starts_with('{') => {
                    let mut in_block = BTreeSet::new();
                    for problem in check_doc_message(line, &mut pending, &mut in_block) {
                        problems.push(format!("{at}: {problem}"));
                    }
                    let outside = in_block
                        .iter()
                        .filter(|method| block.lang == "json" && **method != block.heading);
                    for method in outside {
                        problems.push(format!("{at}: {method} shown under `{}`", block.heading));
                    }
                    seen.extend(in_block);
                }
                "json" if !line.trim().is_empty() => {
                    problems.push(format!("{at}: a json example line that is not a message"));
                }
                // Malformed-input walk-throughs: the bad lines are the point, but every error
                // the daemon answers with is a real response with a known code.
                "text" if line.starts_with('{') && line.contains(r#""error":"#) => {
                    // `"id":null` reads back as no id, so these are not `MessageKind::Response`.
                    let known = serde_json::from_str::<Message>(line).ok().filter(|m| {
                        m.method.is_none()
                            && m.result.is_none()
                            && m.error
                                .as_ref()
                                .is_some_and(|e| ErrorCode::from_code(e.code).is_some())
                    });
                    if known.is_none() {
                        problems.push(format!("{at}: not an error response with a known code"));
                    }
                }
                "text" if line.starts_with("seq ") => {
                    event_lines += 1;
                    let json = line.trim_start_matches(|c: char| !c.is_ascii_punctuation());
                    let value = serde_json::Deserializer::from_str(json)
                        .into_iter::<Value>()
                        .next()
                        .and_then(Result::ok)
                        .unwrap_or(Value::Null);
                    if let Some(problem) = check(
                        "turn event",
                        &value,
                        Side::Typed(round_trip::<TurnEvent>),
                        Fidelity::Shown,
                    ) {
                        problems.push(format!("{at}: {problem}"));
                    }
                }
                _ => {}
            }
        }
        for (id, method) in pending {
            if block.lang == "json" {
                problems.push(format!(
                    "docs/protocol.md:{}: the {method} request (id {id}) has no response",
                    block.first_line
                ));
            }
        }
    }
    for method in ALL_METHODS.iter().filter(|method| !seen.contains(**method)) {
        problems.push(format!("{method} has no JSON example"));
    }
    if event_lines == 0 {
        problems.push("no `seq N {event}` lines in a text block: the parser lost them".into());
    }
    assert_none(
        &problems,
        "docs/protocol.md's examples are out of step with the types",
    );
}

//! JSON Schema for the wire, generated from this crate's types with `schemars`.
//!
//! [`files`] is the whole published schema as file name → JSON text: one file per method side
//! (`methods/<method with '/' as '-'>.params.json` and `.result.json`), `event.json` for the
//! `turn/event` notification, `trace-record.json` for the record `trace/get` returns, and
//! `index.json` naming every method with its files. The committed copy under `protocol/schema/`
//! is compared with this output by `tests/wire/schema.rs` (which also validates every wire fixture
//! against its schema); `docs/decisions/0026-protocol-schema.md` says why it is laid out so.
//!
//! Each side is described as its reader sees it: what the daemon reads (a client's params, the
//! client's answer to `approval/request`) is generated for deserialisation (defaults are optional,
//! aliases are accepted); what the daemon writes (results, events, traces) is generated for
//! serialisation (a field skipped when empty is optional, a defaulted field is always sent).

use std::collections::BTreeMap;

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

use crate::event::TurnEventParams;
use crate::methods::{self as m};
use crate::trace::{TRACE_SCHEMA_VERSION, TraceRecord};

/// The command that rewrites the committed schema; printed when it is stale.
pub const BLESS_COMMAND: &str = "TALOS_BLESS=1 cargo test -p talos-protocol --test wire schema";

/// The file `turn/event`'s params are published in.
pub const EVENT_FILE: &str = "event.json";
/// The file the trace record is published in.
pub const TRACE_RECORD_FILE: &str = "trace-record.json";
/// The index of every method and its files.
pub const INDEX_FILE: &str = "index.json";

/// Spellings of `agent` that the daemon accepts for a mode (serde aliases, which `schemars` does
/// not see); added to the `Mode` definition of every schema the daemon reads.
pub const MODE_ALIASES: [&str; 3] = ["chat", "unified", "dev"];

/// Who writes a message onto the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// A client (the CLI, an editor plugin) calls the daemon.
    Client,
    /// The daemon calls or notifies the client.
    Daemon,
}

impl Sender {
    /// The other end.
    fn other(self) -> Sender {
        match self {
            Sender::Client => Sender::Daemon,
            Sender::Daemon => Sender::Client,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Sender::Client => "client",
            Sender::Daemon => "daemon",
        }
    }
}

/// One side (params or result) of a method.
#[derive(Debug, Clone)]
pub enum Side {
    /// Typed: the schema of what goes on the wire.
    Typed(Schema),
    /// Accepted and ignored by the daemon (no params type): no file.
    Ignored,
    /// The side does not exist (a notification has no result).
    Absent,
}

/// A method's schema: who sends the request, and its two sides.
#[derive(Debug, Clone)]
pub struct MethodSchema {
    /// The method name as in `methods::ALL_METHODS`.
    pub method: &'static str,
    /// Who sends the request or notification.
    pub sender: Sender,
    /// The params the sender writes.
    pub params: Side,
    /// The result the receiver answers with.
    pub result: Side,
}

/// The schema of `T` when `writer` puts it on the wire (see the module docs).
pub fn schema_for<T: JsonSchema>(writer: Sender) -> Schema {
    let contract = match writer {
        Sender::Daemon => Contract::Serialize,
        Sender::Client => Contract::Deserialize,
    };
    let mut schema = SchemaSettings::draft2020_12()
        .with(|settings| settings.contract = contract)
        .into_generator()
        .into_root_schema_for::<T>();
    if writer == Sender::Client {
        add_mode_aliases(&mut schema);
    }
    schema
}

/// Lets the `Mode` definition accept [`MODE_ALIASES`] (they decode as `agent`).
fn add_mode_aliases(schema: &mut Schema) {
    let mode = schema
        .as_object_mut()
        .and_then(|root| root.get_mut("$defs"))
        .and_then(|defs| defs.get_mut("Mode"))
        .and_then(|mode| mode.get_mut("oneOf"))
        .and_then(Value::as_array_mut);
    if let Some(variants) = mode {
        variants.push(json!({
            "description": "Accepted as aliases of `agent` (never sent by the daemon).",
            "type": "string",
            "enum": MODE_ALIASES,
        }));
    }
}

fn typed<T: JsonSchema>(writer: Sender) -> Side {
    Side::Typed(schema_for::<T>(writer))
}

/// A client request with typed params and result.
fn call<P: JsonSchema, R: JsonSchema>(method: &'static str) -> MethodSchema {
    MethodSchema {
        method,
        sender: Sender::Client,
        params: typed::<P>(Sender::Client),
        result: typed::<R>(Sender::Daemon),
    }
}

/// A client request whose params are ignored.
fn query<R: JsonSchema>(method: &'static str) -> MethodSchema {
    MethodSchema {
        method,
        sender: Sender::Client,
        params: Side::Ignored,
        result: typed::<R>(Sender::Daemon),
    }
}

/// Every method of `methods::ALL_METHODS`, in that order, with its schema. A method missing
/// here is caught by `tests/wire/schema.rs`.
pub fn method_schemas() -> Vec<MethodSchema> {
    vec![
        call::<m::InitializeParams, m::InitializeResult>(m::INITIALIZE),
        query::<m::DaemonStatusResult>(m::DAEMON_STATUS),
        query::<m::DaemonShutdownResult>(m::DAEMON_SHUTDOWN),
        call::<m::SessionNewParams, m::SessionNewResult>(m::SESSION_NEW),
        query::<m::SessionListResult>(m::SESSION_LIST),
        call::<m::SessionCloseParams, m::SessionCloseResult>(m::SESSION_CLOSE),
        call::<m::TurnStartParams, m::TurnOutcome>(m::TURN_START),
        MethodSchema {
            method: m::TURN_EVENT,
            sender: Sender::Daemon,
            params: typed::<TurnEventParams>(Sender::Daemon),
            result: Side::Absent,
        },
        MethodSchema {
            method: m::APPROVAL_REQUEST,
            sender: Sender::Daemon,
            params: typed::<m::ApprovalRequestParams>(Sender::Daemon),
            result: typed::<m::ApprovalResult>(Sender::Client),
        },
        call::<m::ApprovalRespondParams, m::ApprovalRespondResult>(m::APPROVAL_RESPOND),
        call::<m::GrantsParams, m::GrantsListResult>(m::GRANTS_LIST),
        call::<m::GrantsParams, m::GrantsRevokeResult>(m::GRANTS_REVOKE),
        call::<m::ProfileListParams, m::ProfileListResult>(m::PROFILE_LIST),
        call::<m::ProfileTrustParams, m::ProfileTrustResult>(m::PROFILE_TRUST),
        query::<m::ModelStatusResult>(m::MODEL_STATUS),
        call::<m::TurnCancelParams, m::TurnCancelResult>(m::TURN_CANCEL),
        call::<m::SessionResumeParams, m::SessionResumeResult>(m::SESSION_RESUME),
        call::<m::CheckpointListParams, m::CheckpointListResult>(m::CHECKPOINT_LIST),
        call::<m::CheckpointShowParams, m::CheckpointShowResult>(m::CHECKPOINT_SHOW),
        call::<m::CheckpointRestoreParams, m::RestoreResult>(m::CHECKPOINT_RESTORE),
        call::<m::TurnUndoParams, m::RestoreResult>(m::TURN_UNDO),
        call::<m::TraceListParams, m::TraceListResult>(m::TRACE_LIST),
        call::<m::TraceGetParams, m::TraceGetResult>(m::TRACE_GET),
        query::<m::DaemonGcResult>(m::DAEMON_GC),
        call::<m::IndexParams, m::IndexStatusResult>(m::INDEX_STATUS),
        call::<m::IndexParams, m::IndexRebuildResult>(m::INDEX_REBUILD),
        call::<m::IndexSearchParams, m::IndexSearchResult>(m::INDEX_SEARCH),
        MethodSchema {
            method: m::INDEX_PROGRESS,
            sender: Sender::Daemon,
            params: typed::<m::IndexProgressParams>(Sender::Daemon),
            result: Side::Absent,
        },
        call::<m::ModelSelectParams, m::ModelSelectResult>(m::MODEL_SELECT),
        call::<m::CommandListParams, m::CommandListResult>(m::COMMAND_LIST),
        call::<m::CommandExpandParams, m::CommandExpandResult>(m::COMMAND_EXPAND),
        MethodSchema {
            method: m::CONTRACT_CHOOSE,
            sender: Sender::Daemon,
            params: typed::<m::ContractChooseParams>(Sender::Daemon),
            result: typed::<m::ContractChooseResult>(Sender::Client),
        },
    ]
}

/// The file one side of a method is published in (`turn/event`'s params are [`EVENT_FILE`]).
pub fn side_file(method: &str, side: &str) -> String {
    if method == m::TURN_EVENT && side == "params" {
        return EVENT_FILE.to_owned();
    }
    format!("methods/{}.{side}.json", method.replace('/', "-"))
}

/// The schema of the trace record (`trace/get`'s `record`, and each file of the turn log).
pub fn trace_record_schema() -> Schema {
    schema_for::<TraceRecord>(Sender::Daemon)
}

/// The whole published schema: file name (relative to `protocol/schema/`) → JSON text.
pub fn files() -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut index = Vec::new();
    for method in method_schemas() {
        let mut entry = serde_json::Map::new();
        entry.insert("method".into(), json!(method.method));
        entry.insert("sender".into(), json!(method.sender.as_str()));
        let kind = match method.result {
            Side::Absent => "notification",
            _ => "request",
        };
        entry.insert("kind".into(), json!(kind));
        for (name, side, writer) in [
            ("params", &method.params, method.sender),
            ("result", &method.result, method.sender.other()),
        ] {
            let file = match side {
                Side::Typed(schema) => {
                    let file = side_file(method.method, name);
                    files.insert(file.clone(), pretty(schema.as_value()));
                    json!(file)
                }
                Side::Ignored | Side::Absent => Value::Null,
            };
            entry.insert(name.into(), file);
            if matches!(side, Side::Typed(_)) {
                entry.insert(format!("{name}Writer"), json!(writer.as_str()));
            }
        }
        if matches!(method.params, Side::Ignored) {
            entry.insert("paramsIgnored".into(), json!(true));
        }
        index.push(Value::Object(entry));
    }
    files.insert(
        TRACE_RECORD_FILE.to_owned(),
        pretty(trace_record_schema().as_value()),
    );
    let index = json!({
        "$comment": format!("Generated from the talos-protocol types; regenerate with `{BLESS_COMMAND}`."),
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "protocolVersion": crate::PROTOCOL_VERSION,
        "traceSchemaVersion": TRACE_SCHEMA_VERSION,
        "event": EVENT_FILE,
        "traceRecord": TRACE_RECORD_FILE,
        "methods": index,
    });
    files.insert(INDEX_FILE.to_owned(), pretty(&index));
    files
}

/// Two-space indented JSON with a final newline and every object's keys sorted, as committed.
/// The keys are sorted here, not left to `serde_json::Map`: a workspace build that links a crate
/// enabling serde_json's `preserve_order` (ACP's schema crate does) keeps insertion order in
/// every map, and the committed files must not depend on which crates were built together.
fn pretty(value: &Value) -> String {
    // Serialising a `serde_json::Value` to a string cannot fail.
    let mut text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
    text.push('\n');
    text
}

/// `value` with each object rebuilt in key order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

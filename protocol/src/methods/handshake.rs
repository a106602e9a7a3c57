//! `initialize`: the handshake. Its params accept the LSP and ACP shape (`clientInfo`) beside
//! Talos's own fields and ignore fields they do not know, so that a newer or different client
//! still connects; its result lists what the daemon offers ([`Capabilities`]). Every other
//! method keeps refusing unknown fields.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ALL_METHODS, APPROVAL_REQUEST, CONTRACT_CHOOSE, INDEX_PROGRESS, TURN_EVENT};

/// Params of `initialize`; every field is informational and may be left out. Unlike every
/// other method's params, unknown fields are accepted (and listed in [`InitializeParams::other`])
/// so that an LSP- or ACP-shaped `initialize` from a newer or different client still connects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The client's name, e.g. `talos-cli`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// The client's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
    /// The client as LSP and ACP name it: `{"name": ..., "version": ...}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<ClientInfo>,
    /// The protocol version the client speaks; not compared by the daemon today. A value that
    /// is not a whole number (an ACP or MCP date string, ...) is read as absent.
    #[serde(
        default,
        deserialize_with = "lenient_version",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    pub protocol_version: Option<u32>,
    /// Requests the daemon sends that this client does not answer (`contract/choose` from
    /// `talos run --json`, or without a terminal): the daemon does not send them and ends the
    /// turn as the method says (`CONTRACT_AMBIGUOUS`). Names it does not know are ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declines: Vec<String>,
    /// Fields this daemon does not know, kept so that it can log their names.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl InitializeParams {
    /// The client's name and version, from `clientInfo` or the flat fields.
    pub fn client(&self) -> (Option<&str>, Option<&str>) {
        let info = self.client_info.as_ref();
        (
            info.map(|i| i.name.as_str())
                .or(self.client_name.as_deref()),
            info.and_then(|i| i.version.as_deref())
                .or(self.client_version.as_deref()),
        )
    }
}

/// `clientInfo` as LSP and ACP send it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// The client's name.
    pub name: String,
    /// The client's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Anything else the client says about itself (ACP's `title`, ...).
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// A protocol version that is a whole number in range, else absent.
fn lenient_version<'de, D>(deserializer: D) -> Result<Option<u32>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(value.as_u64().and_then(|n| u32::try_from(n).ok()))
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The daemon's protocol version ([`crate::PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    /// Always `talosd`.
    pub server_name: String,
    /// The daemon's package version.
    pub server_version: String,
    /// What a client may call and what the daemon does; absent from daemons older than it.
    #[serde(default)]
    pub capabilities: Capabilities,
}

/// What this daemon offers, so a client can detect what it may call rather than guess from a
/// version number.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// The methods a client may call.
    pub methods: Vec<String>,
    /// What the daemon sends the client: notifications (`turn/event`, `index/progress`) and
    /// requests (`approval/request`, `contract/choose`).
    pub daemon_to_client: Vec<String>,
    /// Named features: [`FEATURES`].
    pub features: Vec<String>,
}

/// The daemon's named features, as `initialize` lists them.
pub const FEATURES: [&str; 9] = [
    "approvals",
    "turnCancel",
    "persistedSessions",
    "checkpointRestore",
    "turnLog",
    "traceReading",
    "retention",
    "heldAnswers",
    "contractChoice",
];

/// The methods the daemon sends to clients (the rest of [`ALL_METHODS`] are called by clients).
pub const DAEMON_TO_CLIENT: [&str; 4] = [
    TURN_EVENT,
    APPROVAL_REQUEST,
    INDEX_PROGRESS,
    CONTRACT_CHOOSE,
];

impl Capabilities {
    /// This daemon's capabilities.
    pub fn of_this_daemon() -> Capabilities {
        Capabilities {
            methods: ALL_METHODS
                .iter()
                .filter(|m| !DAEMON_TO_CLIENT.contains(m))
                .map(|m| m.to_string())
                .collect(),
            daemon_to_client: DAEMON_TO_CLIENT.iter().map(|m| m.to_string()).collect(),
            features: FEATURES.iter().map(|f| f.to_string()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Proves the handshake survives version skew: Talos's own shape, LSP's and ACP's, a date
    /// string for a version and unknown fields all parse, and the client is named from either
    /// shape.
    #[test]
    fn initialize_params_accept_every_shape_rows() {
        let rows = [
            (
                json!({"clientName": "talos-cli", "clientVersion": "0.1.0", "protocolVersion": 1}),
                (Some("talos-cli"), Some("0.1.0")),
                Some(1),
                vec![],
            ),
            (
                json!({"clientInfo": {"name": "zed", "version": "0.190.0", "title": "Zed"},
                       "protocolVersion": 1, "clientCapabilities": {"fs": {}}}),
                (Some("zed"), Some("0.190.0")),
                Some(1),
                vec!["clientCapabilities"],
            ),
            (
                json!({"processId": 42, "clientInfo": {"name": "nvim"}, "rootUri": null}),
                (Some("nvim"), None),
                None,
                vec!["processId", "rootUri"],
            ),
            (
                json!({"protocolVersion": "2025-06-18"}),
                (None, None),
                None,
                vec![],
            ),
            (
                json!({"protocolVersion": 99999999999u64}),
                (None, None),
                None,
                vec![],
            ),
            (json!({}), (None, None), None, vec![]),
        ];
        for (raw, client, version, ignored) in rows {
            let p: InitializeParams = serde_json::from_value(raw.clone()).unwrap();
            assert_eq!(p.client(), client, "{raw}");
            assert_eq!(p.protocol_version, version, "{raw}");
            let other: Vec<&str> = p.other.keys().map(String::as_str).collect();
            assert_eq!(other, ignored, "{raw}");
        }
    }

    /// Proves the daemon lists every method a client may call, and only those.
    #[test]
    fn capabilities_list_the_client_methods() {
        let caps = Capabilities::of_this_daemon();
        assert_eq!(
            caps.methods.len() + caps.daemon_to_client.len(),
            ALL_METHODS.len()
        );
        assert!(caps.methods.iter().any(|m| m == "turn/cancel"));
        assert!(!caps.methods.iter().any(|m| m == TURN_EVENT));
        assert_eq!(
            caps.daemon_to_client,
            [
                TURN_EVENT,
                APPROVAL_REQUEST,
                INDEX_PROGRESS,
                CONTRACT_CHOOSE
            ]
        );
        assert!(!caps.methods.iter().any(|m| m == INDEX_PROGRESS));
    }

    /// Proves other methods still refuse unknown fields and name the fields they accept.
    #[test]
    fn other_params_refuse_unknown_fields_and_name_the_accepted_ones() {
        let error = serde_json::from_value::<crate::SessionNewParams>(
            json!({"workspace": "/w", "mdoe": "ask"}),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("unknown field `mdoe`")
                && error.contains("`workspace`")
                && error.contains("`mode`"),
            "{error}"
        );
    }
}

//! The models a daemon serves: `model/status` and `model/select`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The model server as the daemon sees it (`model/status`): the default model's fields at the
/// top, and every configured model, the default first, in `models` (each in this same shape,
/// its own `models` empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatusResult {
    /// `managed` or `connect_only`.
    pub mode: String,
    /// `starting`, `loading`, `ready`, `restarting`, `failed`, `stopped`, `idle` (managed: not
    /// running now, started on first use), or `connect_only`.
    pub state: String,
    /// The model server's base URL.
    pub url: String,
    /// The llama-server process id (managed mode, while it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The port llama-server listens on (managed mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The GGUF model file (managed mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Restarts after crashes since the server was started.
    pub restarts: u32,
    /// Whether the listener was proven to belong to the process Talos started.
    pub owned: bool,
    /// Why the server failed, present only in state `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The model's name: its entry in `models:`, or `default` for the one `model:`.
    #[serde(default)]
    pub name: String,
    /// Whether this is the model sessions start with (`model.default`).
    #[serde(default)]
    pub default: bool,
    /// Every configured model, the default first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelStatusResult>,
}

/// Params of `model/select`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelSelectParams {
    /// The session whose next turns use the model.
    pub session_id: String,
    /// The model's name, as `model/status` lists it.
    pub name: String,
}

/// The result of `model/select`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelSelectResult {
    /// The session.
    pub session_id: String,
    /// The model its next turns use.
    pub name: String,
    /// The model it used before.
    pub previous: String,
    /// `managed` or `connect_only`.
    pub mode: String,
    /// The model server's base URL.
    pub url: String,
}

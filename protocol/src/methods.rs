//! Every method on the socket: its name and its `XxxParams` / `XxxResult` types.
//!
//! Names are `resource/verb`; fields are camelCase. [`ALL_METHODS`] is the list a tidy test
//! holds against `docs/protocol.md`.

use serde::{Deserialize, Serialize};

pub const INITIALIZE: &str = "initialize";
pub const DAEMON_STATUS: &str = "daemon/status";
pub const DAEMON_SHUTDOWN: &str = "daemon/shutdown";
pub const SESSION_NEW: &str = "session/new";
pub const SESSION_LIST: &str = "session/list";
pub const SESSION_CLOSE: &str = "session/close";
pub const TURN_START: &str = "turn/start";
/// Notification from the daemon while a turn runs.
pub const TURN_EVENT: &str = "turn/event";
/// Request from the daemon to the client that started the turn.
pub const APPROVAL_REQUEST: &str = "approval/request";
pub const APPROVAL_RESPOND: &str = "approval/respond";
pub const GRANTS_LIST: &str = "grants/list";
pub const GRANTS_REVOKE: &str = "grants/revoke";
pub const PROFILE_LIST: &str = "profile/list";
pub const PROFILE_TRUST: &str = "profile/trust";
pub const MODEL_STATUS: &str = "model/status";

/// Every method name, client-to-daemon and daemon-to-client.
pub const ALL_METHODS: [&str; 15] = [
    INITIALIZE,
    DAEMON_STATUS,
    DAEMON_SHUTDOWN,
    SESSION_NEW,
    SESSION_LIST,
    SESSION_CLOSE,
    TURN_START,
    TURN_EVENT,
    APPROVAL_REQUEST,
    APPROVAL_RESPOND,
    GRANTS_LIST,
    GRANTS_REVOKE,
    PROFILE_LIST,
    PROFILE_TRUST,
    MODEL_STATUS,
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InitializeParams {
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub client_version: Option<String>,
    #[serde(default)]
    pub protocol_version: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: u32,
    pub server_name: String,
    pub server_version: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// `connect_only` (or `managed`, when that lands).
    pub mode: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatusResult {
    pub version: String,
    pub pid: u32,
    pub uptime_ms: u64,
    pub socket: String,
    pub home: String,
    pub sessions: usize,
    pub active_turns: usize,
    pub model: ModelInfo,
    /// `None` when the configuration loaded cleanly; otherwise why turns are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonShutdownResult {
    pub stopping: bool,
}

/// The session's mode. `agent` may change files (with approval); `ask` and `plan` are
/// read-only whatever the request says; `auto` answers structural commands (`ls`, `show FILE`)
/// with a deterministic viewer and runs everything else as `agent`; `private` is `agent` where
/// an approved protected read is shown to the person and withheld from the model. `chat`,
/// `unified` and `dev` are accepted as aliases of `agent`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    #[serde(alias = "chat", alias = "unified", alias = "dev")]
    Agent,
    Ask,
    Plan,
    Auto,
    Private,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Agent,
        Mode::Ask,
        Mode::Plan,
        Mode::Auto,
        Mode::Private,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Agent => "agent",
            Mode::Ask => "ask",
            Mode::Plan => "plan",
            Mode::Auto => "auto",
            Mode::Private => "private",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionNewParams {
    pub workspace: String,
    #[serde(default)]
    pub mode: Mode,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNewResult {
    pub session_id: String,
    /// The workspace root after resolving symlinks: every path is judged against it.
    pub workspace: String,
    pub mode: Mode,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub session_id: String,
    pub workspace: String,
    pub mode: Mode,
    pub turns: u64,
    pub busy: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResult {
    pub sessions: Vec<SessionInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCloseParams {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCloseResult {
    pub closed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnStartParams {
    pub session_id: String,
    pub prompt: String,
    /// Workspace files the person pins into this turn's context. They reach the model framed
    /// as untrusted reference data; pinning grants no permission.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
}

/// Coarse completion status of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CompletionStatus {
    Complete,
    Partial,
    Blocked,
    AdvisoryOnly,
    Failed,
    Cancelled,
}

/// Fine classification of a turn, decided from the turn's records alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Classification {
    CompletedVerified,
    CompletedUnverified,
    ReadOnlyAnswered,
    Partial,
    BlockedByApproval,
    BlockedByPolicy,
    AdvisoryOnly,
    Failed,
    Cancelled,
}

/// The response to `turn/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnOutcome {
    pub turn_id: String,
    pub status: CompletionStatus,
    pub classification: Classification,
    pub final_answer: String,
    pub trace_id: String,
    /// Where the trace was written, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_path: Option<String>,
    /// Per-file results: what changed and what did not.
    #[serde(default)]
    pub files: Vec<FileResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileResult {
    pub path: String,
    pub changed: bool,
    pub detail: String,
}

/// A person's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    Approve,
    ApproveForSession,
    Deny,
}

/// The diff shown in an approval, already capped (60 lines, 6,000 characters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffPreview {
    pub text: String,
    pub added: usize,
    pub removed: usize,
    pub truncated: bool,
    /// `new file`, `no changes`, or empty.
    #[serde(default)]
    pub note: String,
}

/// Params of the daemon-to-client request `approval/request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestParams {
    pub turn_id: String,
    pub session_id: String,
    pub request_id: String,
    pub tool: String,
    /// e.g. `write operation: talos.edit_file`.
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// `target: settings.py (24 bytes, 2 lines)`, `permission: ...`, ...
    #[serde(default)]
    pub details: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffPreview>,
    /// Whether `approveForSession` would be remembered for this call.
    pub remember_eligible: bool,
}

/// The client's JSON-RPC result for `approval/request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResult {
    pub decision: Decision,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalRespondParams {
    pub request_id: String,
    pub decision: Decision,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRespondResult {
    pub accepted: bool,
}

/// Params of `grants/list` and `grants/revoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantsParams {
    pub session_id: String,
}

/// One thing a session remembers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantInfo {
    /// `writes`: file writes inside the workspace, except under `.github`.
    pub kind: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantsListResult {
    pub session_id: String,
    pub grants: Vec<GrantInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantsRevokeResult {
    pub session_id: String,
    pub revoked: usize,
}

/// Params of `profile/list`: the workspace whose profiles to list (absolute path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileListParams {
    pub workspace: String,
}

/// One command profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    /// `cargo_test`, or `ws:<id>` for a workspace profile.
    pub id: String,
    /// `builtin` or `workspace`.
    pub source: String,
    /// The program and its fixed arguments.
    pub argv: Vec<String>,
    pub timeout_ms: u64,
    /// `network` and/or `writes` when the profile asks for containment.
    #[serde(default)]
    pub isolate: Vec<String>,
}

/// The workspace's `.talos/profiles.yaml` and its trust state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceProfiles {
    /// `none_declared`, `invalid`, `untrusted_new`, `untrusted_changed` or `trusted`.
    pub state: String,
    /// SHA-256 (hex) of the file's raw bytes, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Why the declaration is invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The declared profiles (registered only when trusted).
    pub profiles: Vec<ProfileInfo>,
    /// The file's text, so a person can review it before pinning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declaration: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileListResult {
    pub builtin: Vec<ProfileInfo>,
    pub workspace: WorkspaceProfiles,
}

/// Params of `profile/trust`: pins the declaration whose hash the person reviewed. The pin is
/// refused when the file's bytes no longer hash to `sha256`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileTrustParams {
    pub workspace: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileTrustResult {
    pub pinned: bool,
    pub sha256: String,
    pub profile_count: usize,
}

/// The model server as the daemon sees it (`model/status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStatusResult {
    /// `managed` or `connect_only`.
    pub mode: String,
    /// `starting`, `loading`, `ready`, `restarting`, `failed`, `stopped` (managed), or
    /// `connect_only`.
    pub state: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The GGUF model file (managed mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Restarts after crashes since the daemon started.
    pub restarts: u32,
    /// Whether the listener was proven to belong to the process Talos started.
    pub owned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decisions_use_the_documented_spelling() {
        for (decision, text) in [
            (Decision::Approve, "approve"),
            (Decision::ApproveForSession, "approveForSession"),
            (Decision::Deny, "deny"),
        ] {
            assert_eq!(serde_json::to_value(decision).unwrap(), json!(text));
        }
    }

    #[test]
    fn session_new_defaults_to_agent_and_rejects_unknown_fields() {
        let p: SessionNewParams = serde_json::from_value(json!({"workspace": "/w"})).unwrap();
        assert_eq!(p.mode, Mode::Agent);
        assert!(
            serde_json::from_value::<SessionNewParams>(json!({"workspace": "/w", "x": 1})).is_err()
        );
        assert!(
            serde_json::from_value::<SessionNewParams>(json!({"workspace": "/w", "mode": "yolo"}))
                .is_err()
        );
        for (alias, mode) in [
            ("chat", Mode::Agent),
            ("unified", Mode::Agent),
            ("dev", Mode::Agent),
            ("auto", Mode::Auto),
            ("private", Mode::Private),
        ] {
            let p: SessionNewParams =
                serde_json::from_value(json!({"workspace": "/w", "mode": alias})).unwrap();
            assert_eq!(p.mode, mode, "{alias}");
        }
        assert_eq!(serde_json::to_value(Mode::Agent).unwrap(), json!("agent"));
    }
}

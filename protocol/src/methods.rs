//! Every method on the socket: its name and its `XxxParams` / `XxxResult` types.
//!
//! Names are `resource/verb`; fields are camelCase. [`ALL_METHODS`] is the list a tidy test
//! holds against `docs/protocol.md`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod checkpoint;
mod commands;
mod continuity;
mod contract;
mod handshake;
mod housekeeping;
mod index;
mod models;

pub use checkpoint::*;
pub use commands::*;
pub use continuity::*;
pub use contract::*;
pub use handshake::*;
pub use housekeeping::*;
pub use index::*;
pub use models::*;

pub use crate::verdict::{ChoiceSource, Classification, CompletionStatus, Decision};

/// The first request: protocol version and server identity.
pub const INITIALIZE: &str = "initialize";
/// What the daemon reports about itself.
pub const DAEMON_STATUS: &str = "daemon/status";
/// Asks the daemon to stop.
pub const DAEMON_SHUTDOWN: &str = "daemon/shutdown";
/// Opens a session on a workspace.
pub const SESSION_NEW: &str = "session/new";
/// Every open session.
pub const SESSION_LIST: &str = "session/list";
/// Forgets a session and its grants.
pub const SESSION_CLOSE: &str = "session/close";
/// Runs one turn; answered with its [`TurnOutcome`].
pub const TURN_START: &str = "turn/start";
/// Notification from the daemon while a turn runs.
pub const TURN_EVENT: &str = "turn/event";
/// Request from the daemon to the client that started the turn.
pub const APPROVAL_REQUEST: &str = "approval/request";
/// Fallback answer to a pending `approval/request`, on the same connection only.
pub const APPROVAL_RESPOND: &str = "approval/respond";
/// What a session remembers (approvals given for the session).
pub const GRANTS_LIST: &str = "grants/list";
/// Forgets every grant of a session.
pub const GRANTS_REVOKE: &str = "grants/revoke";
/// The command profiles of a workspace and their trust state.
pub const PROFILE_LIST: &str = "profile/list";
/// Pins a workspace's profile declaration by its hash.
pub const PROFILE_TRUST: &str = "profile/trust";
/// The model server as the daemon sees it.
pub const MODEL_STATUS: &str = "model/status";
/// Cancels the turn running in a session, if one runs.
pub const TURN_CANCEL: &str = "turn/cancel";
/// Reopens a session a previous daemon persisted.
pub const SESSION_RESUME: &str = "session/resume";
/// Recent turns of a session or a workspace, newest first, from their traces.
pub const TRACE_LIST: &str = "trace/list";
/// One turn's trace record, with its turn log when there is one.
pub const TRACE_GET: &str = "trace/get";
/// Applies the retention policy now and reports what was removed.
pub const DAEMON_GC: &str = "daemon/gc";
/// Files, chunks, bytes, last update and state of a workspace's search index.
pub const INDEX_STATUS: &str = "index/status";
/// Builds a workspace's search index again from nothing.
pub const INDEX_REBUILD: &str = "index/rebuild";
/// Ranked chunks of a workspace for a query, without the model.
pub const INDEX_SEARCH: &str = "index/search";
/// Notification from the daemon while `index/rebuild` runs.
pub const INDEX_PROGRESS: &str = "index/progress";
/// Chooses the model a session's next turns use (`models:` in config.yaml).
pub const MODEL_SELECT: &str = "model/select";
/// A session's custom commands (`.talos/commands/NAME.md` and the user's).
pub const COMMAND_LIST: &str = "command/list";
/// The request one custom command makes with its arguments.
pub const COMMAND_EXPAND: &str = "command/expand";

/// Every method name, client-to-daemon and daemon-to-client.
pub const ALL_METHODS: [&str; 32] = [
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
    TURN_CANCEL,
    SESSION_RESUME,
    CHECKPOINT_LIST,
    CHECKPOINT_SHOW,
    CHECKPOINT_RESTORE,
    TURN_UNDO,
    TRACE_LIST,
    TRACE_GET,
    DAEMON_GC,
    INDEX_STATUS,
    INDEX_REBUILD,
    INDEX_SEARCH,
    INDEX_PROGRESS,
    MODEL_SELECT,
    COMMAND_LIST,
    COMMAND_EXPAND,
    CONTRACT_CHOOSE,
];

/// The model endpoint in `daemon/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// `managed` (talosd launches and owns llama-server) or `connect_only` (a server started
    /// elsewhere).
    pub mode: String,
    /// The llama-server base URL, e.g. `http://127.0.0.1:8080`.
    pub url: String,
}

/// The result of `daemon/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatusResult {
    /// The daemon's package version.
    pub version: String,
    /// The daemon's process id.
    pub pid: u32,
    /// Milliseconds since the daemon started serving.
    pub uptime_ms: u64,
    /// The socket path the daemon listens on.
    pub socket: String,
    /// The Talos home (config and state folders).
    pub home: String,
    /// How many sessions are open.
    pub sessions: usize,
    /// How many turns are running right now.
    pub active_turns: usize,
    /// The model endpoint from the configuration.
    pub model: ModelInfo,
    /// `None` when the configuration loaded cleanly; otherwise why turns are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_error: Option<String>,
    /// Log lines the daemon could not write (a full disk, a closed stderr) and dropped.
    #[serde(default)]
    pub log_lines_dropped: u64,
}

/// The result of `daemon/shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonShutdownResult {
    /// Always `true`: the daemon has begun to stop.
    pub stopping: bool,
}

/// The session's mode. `agent` may change files (with approval); `ask` and `plan` are
/// read-only whatever the request says; `auto` answers structural commands (`ls`, `show FILE`)
/// with a deterministic viewer and runs everything else as `agent`; `private` is `agent` where
/// an approved protected read is shown to the person and withheld from the model. `chat`,
/// `unified` and `dev` are accepted as aliases of `agent`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// May change files, with approval (the default).
    #[default]
    #[serde(alias = "chat", alias = "unified", alias = "dev")]
    Agent,
    /// Read-only: answers questions, never changes files.
    Ask,
    /// Read-only, like `ask`: never changes files, whatever the request says.
    Plan,
    /// Structural commands go to a deterministic viewer; everything else runs as `agent`.
    Auto,
    /// `agent`, but an approved protected read is shown to the person, not the model.
    Private,
}

impl Mode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [Mode; 5] = [
        Mode::Agent,
        Mode::Ask,
        Mode::Plan,
        Mode::Auto,
        Mode::Private,
    ];

    /// The mode as the wire spells it.
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

/// Params of `session/new`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionNewParams {
    /// Absolute path of an existing directory other than `/`.
    pub workspace: String,
    /// The session's mode; `agent` when absent.
    #[serde(default)]
    pub mode: Mode,
    /// An open, idle session on the same workspace whose remembered turns (requests with their
    /// contracts and outcomes, the last outcome and findings; never its grants) the new session
    /// starts with, so follow-ups carry across a change of mode. `-32001` when there is no such
    /// session, `-32003` while it runs a turn, `-32006` when it is on another workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_from: Option<String>,
    /// The folder the session works from, an absolute path inside the workspace (the
    /// workspace root when absent): project instruction files are read from the root down to
    /// it. `-32006` when it is not a folder inside the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// MCP servers an editor offers for this session (ACP's `mcpServers`): connected on first
    /// use under the same rules as configured ones (docs/extensions.md), stopped when the
    /// session closes. `-32602` for a name that is unusable or taken by a configured server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<EditorMcpServer>,
}

/// One MCP server an editor offers: a program (`command`, `args`, `env`: all of the
/// environment it gets) or a streamable-HTTP endpoint (`url`, `headers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditorMcpServer {
    /// `a-z`, `0-9`, `_` and `-`, at most 32: its tools are `mcp.NAME.TOOL`.
    pub name: String,
    /// The program to start (stdio); absent for an HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The program's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Its whole environment, as `[name, value]` pairs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    /// The endpoint (HTTP); absent for a program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with each HTTP request, as `[name, value]` pairs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

/// The result of `session/new`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionNewResult {
    /// The new session's id (`ses-` + 32 hex).
    pub session_id: String,
    /// The workspace root after resolving symlinks: every path is judged against it.
    pub workspace: String,
    /// The mode, with aliases resolved (`chat` comes back as `agent`).
    pub mode: Mode,
}

/// One open session in `session/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session's id.
    pub session_id: String,
    /// The canonical workspace root.
    pub workspace: String,
    /// The session's mode.
    pub mode: Mode,
    /// How many turns the session has started.
    pub turns: u64,
    /// Whether a turn is running in it now.
    pub busy: bool,
    /// Whether the session's state is on disk under the Talos home (after its first turn, or
    /// when it was restored from a previous daemon), so a new daemon can resume it.
    #[serde(default)]
    pub persisted: bool,
    /// The model its next turn uses (an entry of `models:`, or `default`).
    #[serde(default)]
    pub model: String,
    /// The folder it works from, relative to the workspace root (`""`: the root).
    #[serde(default)]
    pub directory: String,
    /// The project instruction files its last turn sent the model, root first.
    #[serde(default)]
    pub instructions: Vec<crate::instructions::InstructionFile>,
}

/// The result of `session/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResult {
    /// Every open session, sorted by id.
    pub sessions: Vec<SessionInfo>,
}

/// Params of `session/close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionCloseParams {
    /// The session to close.
    pub session_id: String,
    /// Release instead of close: the daemon forgets the session (its grants too) but keeps its
    /// file, so `session/resume` reopens it later. Refused with `-32003` while a turn runs in
    /// it. For a client that leaves a session it may come back to (an editor's bridge).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub release: bool,
}

/// The result of `session/close`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCloseResult {
    /// Always `true` (an unknown session is the error `-32001`).
    pub closed: bool,
}

/// Params of `turn/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnStartParams {
    /// The session to run the turn in.
    pub session_id: String,
    /// The person's request, as typed.
    pub prompt: String,
    /// Workspace files the person pins into this turn's context. They reach the model framed
    /// as untrusted reference data; pinning grants no permission.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
}

/// The response to `turn/start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnOutcome {
    /// The turn's id (`turn-` + 32 hex).
    pub turn_id: String,
    /// Coarse status, decided from the records.
    pub status: CompletionStatus,
    /// Fine classification, decided from the records.
    pub classification: Classification,
    /// The model's answer after the answer guards (it may be corrected to match the records).
    pub final_answer: String,
    /// The id of the turn's trace (`trc-` + 32 hex).
    pub trace_id: String,
    /// Where the trace was written, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_path: Option<String>,
    /// Per-file results: what changed and what did not.
    #[serde(default)]
    pub files: Vec<FileResult>,
}

/// What happened to one file the turn tried to change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileResult {
    /// The workspace-relative path.
    pub path: String,
    /// Whether the file's bytes changed.
    pub changed: bool,
    /// A one-line account, e.g. `Edited (13 bytes, +1 -1), verified`.
    pub detail: String,
}

/// The diff shown in an approval, already capped (60 lines, 6,000 characters; an MCP call's
/// file content is shown whole, up to 400 lines and 32 KiB, or not asked at all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffPreview {
    /// The unified diff text.
    pub text: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Whether the text was cut at the line or character cap.
    pub truncated: bool,
    /// `new file`, `no changes`, or empty.
    #[serde(default)]
    pub note: String,
}

/// Params of the daemon-to-client request `approval/request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestParams {
    /// The turn that asks.
    pub turn_id: String,
    /// The session of that turn.
    pub session_id: String,
    /// The approval's id (`apr-` + 32 hex); `approval/respond` names it.
    pub request_id: String,
    /// The tool the call would run, e.g. `talos.edit_file`.
    pub tool: String,
    /// e.g. `write operation: talos.edit_file`.
    pub description: String,
    /// The workspace-relative path the call targets, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// `target: settings.py (24 bytes, 2 lines)`, `permission: ...`, ...
    #[serde(default)]
    pub details: Vec<String>,
    /// The change as a capped diff (changes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffPreview>,
    /// Whether `approveForSession` would be remembered for this call.
    pub remember_eligible: bool,
    /// The call that asks (`call-1`, ...), as in the turn's `call` events; absent for
    /// approvals outside a turn (a checkpoint restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The whole text before and after a text file's change, for clients that draw their own
    /// diff; absent for other calls, binary files and files over 256 KiB (the capped `diff`
    /// is always there for changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<ProposedChange>,
}

/// A text file's whole content before and after a proposed change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposedChange {
    /// The workspace-relative path.
    pub path: String,
    /// The text now; absent when the file does not exist yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_text: Option<String>,
    /// The text the change would write.
    pub new_text: String,
}

/// The client's JSON-RPC result for `approval/request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResult {
    /// The person's decision.
    pub decision: Decision,
}

/// Params of `approval/respond`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalRespondParams {
    /// The pending approval to answer.
    pub request_id: String,
    /// The decision.
    pub decision: Decision,
}

/// The result of `approval/respond`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRespondResult {
    /// Always `true` (a request not pending here is the error `-32004`).
    pub accepted: bool,
}

/// Params of `grants/list` and `grants/revoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantsParams {
    /// The session whose grants to list or revoke.
    pub session_id: String,
}

/// One thing a session remembers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantInfo {
    /// `writes`: file writes inside the workspace, except under `.github`.
    pub kind: String,
    /// What the grant allows, in one sentence.
    pub description: String,
}

/// The result of `grants/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantsListResult {
    /// The session asked about.
    pub session_id: String,
    /// What it remembers; empty when nothing.
    pub grants: Vec<GrantInfo>,
}

/// The result of `grants/revoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantsRevokeResult {
    /// The session asked about.
    pub session_id: String,
    /// How many grants were forgotten.
    pub revoked: usize,
}

/// Params of `profile/list`: the workspace whose profiles to list (absolute path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileListParams {
    /// The workspace's absolute path.
    pub workspace: String,
}

/// One command profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    /// `cargo_test`, or `ws:<id>` for a workspace profile.
    pub id: String,
    /// `builtin` or `workspace`.
    pub source: String,
    /// The program and its fixed arguments.
    pub argv: Vec<String>,
    /// How long a run may take, in milliseconds, before it is stopped.
    pub timeout_ms: u64,
    /// `network` and/or `writes` when the profile asks for containment.
    #[serde(default)]
    pub isolate: Vec<String>,
}

/// The workspace's `.talos/profiles.yaml` and its trust state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// The result of `profile/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileListResult {
    /// The profiles built into Talos.
    pub builtin: Vec<ProfileInfo>,
    /// The workspace's declaration and its trust state.
    pub workspace: WorkspaceProfiles,
}

/// Params of `profile/trust`: pins the declaration whose hash the person reviewed. The pin is
/// refused when the file's bytes no longer hash to `sha256`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileTrustParams {
    /// The workspace's absolute path.
    pub workspace: String,
    /// SHA-256 (hex) of the declaration the person reviewed.
    pub sha256: String,
}

/// The result of `profile/trust`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileTrustResult {
    /// Whether the pin was stored.
    pub pinned: bool,
    /// The hash that was pinned.
    pub sha256: String,
    /// How many profiles the pinned declaration declares.
    pub profile_count: usize,
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

//! A request as one typed value: [`Request`] has one variant per method of
//! [`ALL_METHODS`](crate::methods::ALL_METHODS), each carrying its params type (methods whose
//! params are ignored carry nothing), read from a JSON-RPC `(method, params)` pair by
//! [`Request::parse`] (or [`Request::parse_to_daemon`], which refuses the methods the daemon
//! sends) and written back by [`Request::method`] and [`Request::params`]. A
//! receiver then handles a request with one exhaustive `match`, so a new method is a compile
//! error wherever it was forgotten (codex-rs's `ClientRequest`). Unknown methods and params that
//! do not fit are [`RequestError`]s, which become the JSON-RPC errors `-32601` and `-32602`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::event::TurnEventParams;
use crate::methods::{self as m};
use crate::rpc::{ErrorCode, RpcError};

/// One message of a method in [`ALL_METHODS`](crate::methods::ALL_METHODS), with its params.
/// `TurnEvent`, `ApprovalRequest`, `IndexProgress` and `ContractChoose` are sent by the
/// daemon; the rest by clients.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `initialize`
    Initialize(m::InitializeParams),
    /// `daemon/status`
    DaemonStatus,
    /// `daemon/shutdown`
    DaemonShutdown,
    /// `session/new`
    SessionNew(m::SessionNewParams),
    /// `session/list`
    SessionList,
    /// `session/close`
    SessionClose(m::SessionCloseParams),
    /// `turn/start`
    TurnStart(m::TurnStartParams),
    /// `turn/event`
    TurnEvent(Box<TurnEventParams>),
    /// `approval/request`
    ApprovalRequest(Box<m::ApprovalRequestParams>),
    /// `approval/respond`
    ApprovalRespond(m::ApprovalRespondParams),
    /// `grants/list`
    GrantsList(m::GrantsParams),
    /// `grants/revoke`
    GrantsRevoke(m::GrantsParams),
    /// `profile/list`
    ProfileList(m::ProfileListParams),
    /// `profile/trust`
    ProfileTrust(m::ProfileTrustParams),
    /// `model/status`
    ModelStatus,
    /// `turn/cancel`
    TurnCancel(m::TurnCancelParams),
    /// `session/resume`
    SessionResume(m::SessionResumeParams),
    /// `checkpoint/list`
    CheckpointList(m::CheckpointListParams),
    /// `checkpoint/show`
    CheckpointShow(m::CheckpointShowParams),
    /// `checkpoint/restore`
    CheckpointRestore(m::CheckpointRestoreParams),
    /// `turn/undo`
    TurnUndo(m::TurnUndoParams),
    /// `trace/list`
    TraceList(m::TraceListParams),
    /// `trace/get`
    TraceGet(m::TraceGetParams),
    /// `daemon/gc`
    DaemonGc,
    /// `index/status`
    IndexStatus(m::IndexParams),
    /// `index/rebuild`
    IndexRebuild(m::IndexParams),
    /// `index/search`
    IndexSearch(m::IndexSearchParams),
    /// `index/progress`
    IndexProgress(m::IndexProgressParams),
    /// `model/select`
    ModelSelect(m::ModelSelectParams),
    /// `command/list`
    CommandList(m::CommandListParams),
    /// `command/expand`
    CommandExpand(m::CommandExpandParams),
    /// `contract/choose`
    ContractChoose(m::ContractChooseParams),
}

/// Why a `(method, params)` pair is no [`Request`].
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// The method is not in [`ALL_METHODS`](crate::methods::ALL_METHODS).
    UnknownMethod(String),
    /// The params do not decode into the method's type; serde's message.
    InvalidParams(String),
    /// A method the daemon sends (`turn/event`, `approval/request`, `index/progress`,
    /// `contract/choose`) was sent to it ([`Request::parse_to_daemon`]).
    SentByTheDaemon(String),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::UnknownMethod(method) => write!(f, "method not found: {method}"),
            RequestError::InvalidParams(why) => write!(f, "invalid params: {why}"),
            RequestError::SentByTheDaemon(method) => {
                write!(f, "{method} is sent by the daemon, not to it")
            }
        }
    }
}

impl std::error::Error for RequestError {}

impl From<RequestError> for RpcError {
    /// `-32601` for an unknown method (or one sent the wrong way), `-32602` for params that do
    /// not fit.
    fn from(error: RequestError) -> RpcError {
        let code = match &error {
            RequestError::UnknownMethod(_) | RequestError::SentByTheDaemon(_) => {
                ErrorCode::MethodNotFound
            }
            RequestError::InvalidParams(_) => ErrorCode::InvalidParams,
        };
        RpcError::new(code, error.to_string())
    }
}

impl Request {
    /// The request `method` names, its params decoded. `initialize` reads absent (`null`)
    /// params as its defaults; `daemon/status`, `daemon/shutdown`, `session/list`,
    /// `model/status` and `daemon/gc` ignore theirs.
    pub fn parse(method: &str, params: Value) -> Result<Request, RequestError> {
        use Request as R;
        Ok(match method {
            m::INITIALIZE if params.is_null() => R::Initialize(m::InitializeParams::default()),
            m::INITIALIZE => R::Initialize(decode(params)?),
            m::DAEMON_STATUS => R::DaemonStatus,
            m::DAEMON_SHUTDOWN => R::DaemonShutdown,
            m::SESSION_NEW => R::SessionNew(decode(params)?),
            m::SESSION_LIST => R::SessionList,
            m::SESSION_CLOSE => R::SessionClose(decode(params)?),
            m::TURN_START => R::TurnStart(decode(params)?),
            m::TURN_EVENT => R::TurnEvent(decode(params)?),
            m::APPROVAL_REQUEST => R::ApprovalRequest(decode(params)?),
            m::APPROVAL_RESPOND => R::ApprovalRespond(decode(params)?),
            m::GRANTS_LIST => R::GrantsList(decode(params)?),
            m::GRANTS_REVOKE => R::GrantsRevoke(decode(params)?),
            m::PROFILE_LIST => R::ProfileList(decode(params)?),
            m::PROFILE_TRUST => R::ProfileTrust(decode(params)?),
            m::MODEL_STATUS => R::ModelStatus,
            m::TURN_CANCEL => R::TurnCancel(decode(params)?),
            m::SESSION_RESUME => R::SessionResume(decode(params)?),
            m::CHECKPOINT_LIST => R::CheckpointList(decode(params)?),
            m::CHECKPOINT_SHOW => R::CheckpointShow(decode(params)?),
            m::CHECKPOINT_RESTORE => R::CheckpointRestore(decode(params)?),
            m::TURN_UNDO => R::TurnUndo(decode(params)?),
            m::TRACE_LIST => R::TraceList(decode(params)?),
            m::TRACE_GET => R::TraceGet(decode(params)?),
            m::DAEMON_GC => R::DaemonGc,
            m::INDEX_STATUS => R::IndexStatus(decode(params)?),
            m::INDEX_REBUILD => R::IndexRebuild(decode(params)?),
            m::INDEX_SEARCH => R::IndexSearch(decode(params)?),
            m::INDEX_PROGRESS => R::IndexProgress(decode(params)?),
            m::MODEL_SELECT => R::ModelSelect(decode(params)?),
            m::COMMAND_LIST => R::CommandList(decode(params)?),
            m::COMMAND_EXPAND => R::CommandExpand(decode(params)?),
            m::CONTRACT_CHOOSE => R::ContractChoose(decode(params)?),
            other => return Err(RequestError::UnknownMethod(other.to_string())),
        })
    }

    /// A request sent to the daemon: as [`Request::parse`], but a method the daemon sends is
    /// refused as [`RequestError::SentByTheDaemon`] before its params are read.
    pub fn parse_to_daemon(method: &str, params: Value) -> Result<Request, RequestError> {
        if m::DAEMON_TO_CLIENT.contains(&method) {
            return Err(RequestError::SentByTheDaemon(method.to_string()));
        }
        Request::parse(method, params)
    }

    /// The method's name on the wire.
    pub fn method(&self) -> &'static str {
        use Request as R;
        match self {
            R::Initialize(_) => m::INITIALIZE,
            R::DaemonStatus => m::DAEMON_STATUS,
            R::DaemonShutdown => m::DAEMON_SHUTDOWN,
            R::SessionNew(_) => m::SESSION_NEW,
            R::SessionList => m::SESSION_LIST,
            R::SessionClose(_) => m::SESSION_CLOSE,
            R::TurnStart(_) => m::TURN_START,
            R::TurnEvent(_) => m::TURN_EVENT,
            R::ApprovalRequest(_) => m::APPROVAL_REQUEST,
            R::ApprovalRespond(_) => m::APPROVAL_RESPOND,
            R::GrantsList(_) => m::GRANTS_LIST,
            R::GrantsRevoke(_) => m::GRANTS_REVOKE,
            R::ProfileList(_) => m::PROFILE_LIST,
            R::ProfileTrust(_) => m::PROFILE_TRUST,
            R::ModelStatus => m::MODEL_STATUS,
            R::TurnCancel(_) => m::TURN_CANCEL,
            R::SessionResume(_) => m::SESSION_RESUME,
            R::CheckpointList(_) => m::CHECKPOINT_LIST,
            R::CheckpointShow(_) => m::CHECKPOINT_SHOW,
            R::CheckpointRestore(_) => m::CHECKPOINT_RESTORE,
            R::TurnUndo(_) => m::TURN_UNDO,
            R::TraceList(_) => m::TRACE_LIST,
            R::TraceGet(_) => m::TRACE_GET,
            R::DaemonGc => m::DAEMON_GC,
            R::IndexStatus(_) => m::INDEX_STATUS,
            R::IndexRebuild(_) => m::INDEX_REBUILD,
            R::IndexSearch(_) => m::INDEX_SEARCH,
            R::IndexProgress(_) => m::INDEX_PROGRESS,
            R::ModelSelect(_) => m::MODEL_SELECT,
            R::CommandList(_) => m::COMMAND_LIST,
            R::CommandExpand(_) => m::COMMAND_EXPAND,
            R::ContractChoose(_) => m::CONTRACT_CHOOSE,
        }
    }

    /// The params as they go on the wire (`null` for a method whose params are ignored).
    pub fn params(&self) -> Result<Value, serde_json::Error> {
        use Request as R;
        match self {
            R::Initialize(p) => encode(p),
            R::DaemonStatus | R::DaemonShutdown | R::SessionList | R::ModelStatus | R::DaemonGc => {
                Ok(Value::Null)
            }
            R::SessionNew(p) => encode(p),
            R::SessionClose(p) => encode(p),
            R::TurnStart(p) => encode(p),
            R::TurnEvent(p) => encode(p),
            R::ApprovalRequest(p) => encode(p),
            R::ApprovalRespond(p) => encode(p),
            R::GrantsList(p) | R::GrantsRevoke(p) => encode(p),
            R::ProfileList(p) => encode(p),
            R::ProfileTrust(p) => encode(p),
            R::TurnCancel(p) => encode(p),
            R::SessionResume(p) => encode(p),
            R::CheckpointList(p) => encode(p),
            R::CheckpointShow(p) => encode(p),
            R::CheckpointRestore(p) => encode(p),
            R::TurnUndo(p) => encode(p),
            R::TraceList(p) => encode(p),
            R::TraceGet(p) => encode(p),
            R::IndexStatus(p) | R::IndexRebuild(p) => encode(p),
            R::IndexSearch(p) => encode(p),
            R::IndexProgress(p) => encode(p),
            R::ModelSelect(p) => encode(p),
            R::CommandList(p) => encode(p),
            R::CommandExpand(p) => encode(p),
            R::ContractChoose(p) => encode(p),
        }
    }
}

fn decode<T: DeserializeOwned>(params: Value) -> Result<T, RequestError> {
    serde_json::from_value(params).map_err(|e| RequestError::InvalidParams(e.to_string()))
}

fn encode<T: Serialize>(params: &T) -> Result<Value, serde_json::Error> {
    serde_json::to_value(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the two errors carry the codes and the exact messages clients have always seen.
    #[test]
    fn unknown_methods_and_bad_params_become_their_json_rpc_errors() {
        let unknown = RpcError::from(Request::parse("nope/x", Value::Null).unwrap_err());
        assert_eq!(
            (unknown.code, unknown.message.as_str()),
            (-32601, "method not found: nope/x")
        );
        let bad = RpcError::from(
            Request::parse(m::SESSION_NEW, serde_json::json!({"x": 1})).unwrap_err(),
        );
        assert_eq!(
            (bad.code, bad.message.as_str()),
            (
                -32602,
                "invalid params: unknown field `x`, expected one of `workspace`, `mode`, `continueFrom`, `directory`, `mcpServers`"
            )
        );
    }

    /// Proves a method the daemon sends is refused by name when sent to it, whatever its params.
    #[test]
    fn the_daemons_own_methods_are_refused_before_their_params_are_read() {
        for method in [
            m::TURN_EVENT,
            m::APPROVAL_REQUEST,
            m::INDEX_PROGRESS,
            m::CONTRACT_CHOOSE,
        ] {
            let error = RpcError::from(Request::parse_to_daemon(method, Value::Null).unwrap_err());
            assert_eq!(
                (error.code, error.message),
                (-32601, format!("{method} is sent by the daemon, not to it"))
            );
        }
        assert_eq!(
            Request::parse_to_daemon(m::DAEMON_GC, Value::Null),
            Ok(Request::DaemonGc)
        );
    }

    /// Proves absent `initialize` params are its defaults and ignored params are ignored.
    #[test]
    fn initialize_defaults_and_ignored_params() {
        assert_eq!(
            Request::parse(m::INITIALIZE, Value::Null),
            Ok(Request::Initialize(m::InitializeParams::default()))
        );
        assert_eq!(
            Request::parse(m::DAEMON_STATUS, serde_json::json!({"anything": [1]})),
            Ok(Request::DaemonStatus)
        );
    }
}

//! The JSON-RPC 2.0 envelope: one message type that classifies itself by field presence,
//! standard and Talos error codes, and line encoding.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every line on the socket is one of these. Which fields are present says what it is:
/// `method` + `id` is a request, `method` alone a notification, `id` alone a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Always `"2.0"`; any other value makes the message invalid.
    pub jsonrpc: String,
    /// A string or a number on requests and responses; absent on notifications; `null` on an
    /// error response to a line whose id could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// The method name (`resource/verb`) of a request or notification; absent on responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The method's params (an `XxxParams` value); absent when the method takes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// A successful response's value (an `XxxResult`); absent on errors and requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// A failed response's error; absent on success and on requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
}

/// What a parsed [`Message`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// `method` and a string or number `id`: the peer expects a response.
    Request,
    /// `method` without `id`: no response is sent.
    Notification,
    /// `id` without `method`, with exactly one of `result` and `error`.
    Response,
    /// Anything else, or `jsonrpc` not `"2.0"`: answered with `-32600`.
    Invalid,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The numeric code, one of [`ErrorCode`]'s values.
    pub code: i64,
    /// A lowercase sentence naming what was wrong.
    pub message: String,
    /// Extra structured detail; absent today (the daemon never sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// Error codes used on the wire: the JSON-RPC standard ones, then Talos's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// `-32700`: the line is not JSON.
    ParseError,
    /// `-32600`: JSON, but not a valid message (or a batch, or a line over 16 MiB).
    InvalidRequest,
    /// `-32601`: unknown method, or a daemon-to-client method sent to the daemon.
    MethodNotFound,
    /// `-32602`: params do not match the method's type.
    InvalidParams,
    /// `-32603`: a bug or a poisoned lock in the daemon.
    InternalError,
    /// `-32001`: no session with that id.
    SessionNotFound,
    /// `-32002`: the daemon is stopping and accepts no new turn.
    ShuttingDown,
    /// `-32003`: the session already runs a turn.
    SessionBusy,
    /// `-32004`: `approval/respond` for a request not pending on this connection.
    ApprovalNotOwned,
    /// `-32005`: `config.yaml` did not load, so turns are refused.
    ConfigError,
    /// `-32006`: the workspace is missing, relative, not a directory, `/`, or its profile
    /// declaration is invalid.
    WorkspaceInvalid,
    /// `-32007`: reserved for model failures; not returned today.
    ModelError,
    /// `-32008`: the connection already has as many requests waiting as the daemon queues
    /// (retry once some have been answered), or `session/new` past the daemon's session cap.
    TooManyRequests,
}

impl ErrorCode {
    /// Every error code, standard ones first.
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::ParseError,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::InternalError,
        ErrorCode::SessionNotFound,
        ErrorCode::ShuttingDown,
        ErrorCode::SessionBusy,
        ErrorCode::ApprovalNotOwned,
        ErrorCode::ConfigError,
        ErrorCode::WorkspaceInvalid,
        ErrorCode::ModelError,
        ErrorCode::TooManyRequests,
    ];

    /// The number sent on the wire.
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::SessionNotFound => -32001,
            ErrorCode::ShuttingDown => -32002,
            ErrorCode::SessionBusy => -32003,
            ErrorCode::ApprovalNotOwned => -32004,
            ErrorCode::ConfigError => -32005,
            ErrorCode::WorkspaceInvalid => -32006,
            ErrorCode::ModelError => -32007,
            ErrorCode::TooManyRequests => -32008,
        }
    }

    /// The error code with this number, if it is one of ours.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.code() == code)
    }
}

impl RpcError {
    /// An error with `code` and `message` and no `data`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RpcError {
        RpcError {
            code: code.code(),
            message: message.into(),
            data: None,
        }
    }
}

impl Message {
    /// A request to `method` with this `id` and `params`.
    pub fn request(id: Value, method: &str, params: Value) -> Message {
        Message {
            jsonrpc: "2.0".into(),
            id: Some(id),
            method: Some(method.into()),
            params: Some(params),
            result: None,
            error: None,
        }
    }

    /// A notification of `method` with `params` (no `id`, no response).
    pub fn notification(method: &str, params: Value) -> Message {
        Message {
            jsonrpc: "2.0".into(),
            id: None,
            method: Some(method.into()),
            params: Some(params),
            result: None,
            error: None,
        }
    }

    /// A successful response to the request `id`.
    pub fn response(id: Value, result: Value) -> Message {
        Message {
            jsonrpc: "2.0".into(),
            id: Some(id),
            method: None,
            params: None,
            result: Some(result),
            error: None,
        }
    }

    /// An error response to the request `id` (`null` when the id could not be read).
    pub fn error_response(id: Value, error: RpcError) -> Message {
        Message {
            jsonrpc: "2.0".into(),
            id: Some(id),
            method: None,
            params: None,
            result: None,
            error: Some(error),
        }
    }

    /// What this message is, from which fields it has.
    pub fn kind(&self) -> MessageKind {
        if self.jsonrpc != "2.0" {
            return MessageKind::Invalid;
        }
        match (&self.method, &self.id) {
            (Some(_), Some(id)) if id.is_string() || id.is_number() => MessageKind::Request,
            (Some(_), Some(_)) => MessageKind::Invalid,
            (Some(_), None) => MessageKind::Notification,
            (None, Some(_)) if self.result.is_some() != self.error.is_some() => {
                MessageKind::Response
            }
            (None, _) => MessageKind::Invalid,
        }
    }

    /// One compact line, without the trailing newline.
    pub fn to_line(&self) -> String {
        // Serialising this struct of strings and `Value`s cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(line: &str, expected: MessageKind) {
        let msg: Message = serde_json::from_str(line).unwrap();
        assert_eq!(msg.kind(), expected, "{line}");
    }

    #[test]
    fn classifies_messages_by_field_presence() {
        check(
            r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#,
            MessageKind::Request,
        );
        check(
            r#"{"jsonrpc":"2.0","id":"x","method":"a"}"#,
            MessageKind::Request,
        );
        check(
            r#"{"jsonrpc":"2.0","method":"a"}"#,
            MessageKind::Notification,
        );
        check(
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            MessageKind::Invalid,
        );
        check(
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            MessageKind::Response,
        );
        check(
            r#"{"jsonrpc":"1.0","id":1,"method":"a"}"#,
            MessageKind::Invalid,
        );
        check(
            r#"{"jsonrpc":"2.0","id":{},"method":"a"}"#,
            MessageKind::Invalid,
        );
        check(r#"{"jsonrpc":"2.0"}"#, MessageKind::Invalid);
    }

    #[test]
    fn lines_are_compact_and_single_line() {
        let msg = Message::response(json!(1), json!({"text": "a\nb"}));
        let line = msg.to_line();
        assert!(!line.contains('\n'));
        assert_eq!(line, r#"{"jsonrpc":"2.0","id":1,"result":{"text":"a\nb"}}"#);
    }

    #[test]
    fn error_codes_round_trip() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(code.code()), Some(code));
        }
    }
}

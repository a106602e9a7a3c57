//! ACP's transport: JSON-RPC 2.0, one message per line on stdin and stdout. Every line the
//! bridge writes goes through one lock, so a notification never splits another message; the
//! editor's responses to the bridge's own requests (`session/request_permission`) are handed
//! to the thread that waits for them. Nothing but protocol lines is ever written to stdout.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

/// JSON-RPC's error codes as ACP uses them.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "Resource not found", which is also its answer to a session it does not know
/// (`Error::session_not_found` in `agent-client-protocol-schema`).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// What an outstanding request of the bridge gets back.
pub enum Reply {
    /// The editor's result.
    Result(Value),
    /// An error response, or the request was abandoned (the session's turn was cancelled).
    Failed(String),
}

/// The bridge's side of stdout, and its requests waiting for the editor.
#[derive(Clone)]
pub struct Wire {
    out: Arc<Mutex<Box<dyn Write + Send>>>,
    waiting: Arc<Mutex<HashMap<String, Waiting>>>,
    next_id: Arc<AtomicU64>,
}

struct Waiting {
    session: String,
    reply: Sender<Reply>,
}

impl Wire {
    pub fn new(out: Box<dyn Write + Send>) -> Wire {
        Wire {
            out: Arc::new(Mutex::new(out)),
            waiting: Arc::new(Mutex::new(HashMap::new())),
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Writes one message as one line. A closed stdout ends the bridge: the editor is gone.
    pub fn send(&self, message: &Value) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let line = message.to_string();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            std::process::exit(0);
        }
    }

    pub fn respond(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    pub fn fail(&self, id: &Value, code: i64, message: &str) {
        self.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message}
        }));
    }

    /// Answers `id` with a refused request's error, its `data` included when it has one.
    pub fn refuse(&self, id: &Value, refused: super::Refused) {
        let mut error = json!({"code": refused.code, "message": refused.message});
        if let Some(data) = refused.data {
            error["data"] = data;
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request to the editor on behalf of `session`; the receiver gets its answer.
    pub fn request(&self, session: &str, method: &str, params: Value) -> Receiver<Reply> {
        let (reply, answer) = channel();
        let id = format!("talos-{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        self.lock_waiting().insert(
            id.clone(),
            Waiting {
                session: session.to_string(),
                reply,
            },
        );
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        answer
    }

    /// Hands the editor's response to the request it answers; `false` when none waits for it.
    pub fn deliver(&self, message: &Value) -> bool {
        let key = match &message["id"] {
            Value::String(id) => id.clone(),
            other => other.to_string(),
        };
        let Some(waiting) = self.lock_waiting().remove(&key) else {
            return false;
        };
        let reply = match (message.get("result"), message.get("error")) {
            (_, Some(error)) => Reply::Failed(error.to_string()),
            (Some(result), None) => Reply::Result(result.clone()),
            (None, None) => Reply::Failed("a response with neither result nor error".into()),
        };
        let _ = waiting.reply.send(reply);
        true
    }

    /// Abandons every request made for `session`: their waiters see a failure (a permission
    /// request then denies).
    pub fn abandon(&self, session: &str) {
        let mut waiting = self.lock_waiting();
        let ids: Vec<String> = waiting
            .iter()
            .filter(|(_, w)| w.session == session)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            if let Some(w) = waiting.remove(&id) {
                let _ = w.reply.send(Reply::Failed("cancelled".into()));
            }
        }
    }

    fn lock_waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The longest line the bridge reads (16 MiB); a longer one is answered as a parse error and
/// skipped, never held in memory whole.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One line of input.
#[derive(Debug, PartialEq)]
pub enum Line {
    Text(String),
    /// Too long, or not UTF-8: answered with a parse error, and the bridge reads on.
    Unreadable(String),
    /// End of input (or a read error): the editor is gone.
    End,
}

/// Reads one newline-terminated line of at most `cap` bytes.
pub fn read_line(input: &mut impl std::io::BufRead, cap: usize) -> Line {
    let mut bytes = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok([]) if bytes.is_empty() && !too_long => return Line::End,
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Line::End,
        };
        let (part, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(at) => (&chunk[..at], Some(at + 1)),
            None => (chunk, None),
        };
        if !too_long && bytes.len() + part.len() <= cap {
            bytes.extend_from_slice(part);
        } else {
            too_long = true;
            bytes.clear();
        }
        let used = done.unwrap_or(chunk.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        return Line::Unreadable(format!("a line longer than {cap} bytes"));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Line::Text(text.trim_end_matches('\r').to_string()),
        Err(_) => Line::Unreadable("a line that is not UTF-8".into()),
    }
}

/// One line from the editor, sorted.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    Response(Value),
    /// Not JSON-RPC: answered with this error (`id` null when it could not be read).
    Invalid {
        id: Value,
        code: i64,
        message: String,
    },
}

/// Reads one line as JSON-RPC 2.0.
pub fn classify(line: &str) -> Incoming {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(error) => {
            return Incoming::Invalid {
                id: Value::Null,
                code: PARSE_ERROR,
                message: format!("parse error: {error}"),
            };
        }
    };
    let id = value.get("id").cloned();
    let invalid = |message: &str| Incoming::Invalid {
        id: id.clone().unwrap_or(Value::Null),
        code: INVALID_REQUEST,
        message: message.to_string(),
    };
    if !value.is_object() {
        return invalid("invalid request: a message is a JSON object");
    }
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("invalid request: \"jsonrpc\" must be \"2.0\"");
    }
    let params = value.get("params").cloned().unwrap_or(Value::Null);
    match (value.get("method"), &id) {
        (Some(Value::String(method)), Some(id)) if id.is_string() || id.is_number() => {
            Incoming::Request {
                id: id.clone(),
                method: method.clone(),
                params,
            }
        }
        (Some(Value::String(_)), Some(_)) => {
            invalid("invalid request: an id is a string or a number")
        }
        (Some(Value::String(method)), None) => Incoming::Notification {
            method: method.clone(),
            params,
        },
        (Some(_), _) => invalid("invalid request: \"method\" must be a string"),
        (None, Some(_)) if value.get("result").is_some() || value.get("error").is_some() => {
            Incoming::Response(value)
        }
        (None, _) => invalid("invalid request: no \"method\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_sorted_into_requests_notifications_responses_and_errors() {
        let rows: Vec<(&str, &str)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
                "request",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"session/new"}"#,
                "request",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#,
                "notification",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"talos-1","result":{}}"#,
                "response",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"talos-1","error":{"code":1,"message":"x"}}"#,
                "response",
            ),
            ("{not json", "-32700"),
            ("[1,2]", "-32600"),
            (r#"{"id":1,"method":"initialize"}"#, "-32600"),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"initialize"}"#,
                "-32600",
            ),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, "-32600"),
            (
                r#"{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}"#,
                "-32600",
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, "-32600"),
        ];
        for (line, expected) in rows {
            let got = match classify(line) {
                Incoming::Request { .. } => "request".to_string(),
                Incoming::Notification { .. } => "notification".to_string(),
                Incoming::Response(_) => "response".to_string(),
                Incoming::Invalid { code, .. } => code.to_string(),
            };
            assert_eq!(got, expected, "{line}");
        }
    }

    #[test]
    fn lines_are_read_whole_capped_and_checked() {
        let mut input =
            std::io::Cursor::new(b"{\"a\":1}\r\n\xff\xfe\n0123456789ABCDEF\nok\ntail".to_vec());
        let mut next = || read_line(&mut input, 12);
        assert_eq!(next(), Line::Text("{\"a\":1}".into()));
        assert!(matches!(next(), Line::Unreadable(m) if m.contains("UTF-8")));
        assert!(matches!(next(), Line::Unreadable(m) if m.contains("longer than 12")));
        assert_eq!(next(), Line::Text("ok".into()));
        assert_eq!(next(), Line::Text("tail".into()));
        assert_eq!(next(), Line::End);
    }

    #[test]
    fn a_response_reaches_its_waiter_and_abandon_fails_the_sessions_requests() {
        let wire = Wire::new(Box::new(std::io::sink()));
        let first = wire.request("s1", "session/request_permission", json!({}));
        let second = wire.request("s2", "session/request_permission", json!({}));
        assert!(wire.deliver(&json!({"jsonrpc":"2.0","id":"talos-2","result":{"x":1}})));
        assert!(matches!(second.recv().unwrap(), Reply::Result(v) if v == json!({"x":1})));
        assert!(
            !wire.deliver(&json!({"jsonrpc":"2.0","id":"talos-2","result":{}})),
            "answered once"
        );
        wire.abandon("s1");
        assert!(matches!(first.recv().unwrap(), Reply::Failed(_)));
    }
}

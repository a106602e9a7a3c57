//! The blocking JSON-RPC 2.0 client: writes one request line, then reads lines until the
//! response with the same id, handing every other message (turn events, approval requests)
//! to a callback whose reply, if any, is written back.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::Value;
use talos_protocol::{
    ErrorCode, INITIALIZE, InitializeParams, Message, PROTOCOL_VERSION, RpcError, rpc::MessageKind,
};

use crate::failure::Failure;

/// A connection to `talosd`.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Client {
    pub fn new(stream: UnixStream) -> Result<Client, Failure> {
        let writer = stream.try_clone().map_err(|error| lost(&error))?;
        Ok(Client {
            reader: BufReader::new(stream),
            writer,
            next_id: 1,
        })
    }

    /// Sends `initialize`, which every connection must start with.
    pub fn initialize(&mut self) -> Result<Value, Failure> {
        self.initialize_declining(&[])
    }

    /// `initialize`, saying which of the daemon's requests this client does not answer
    /// (`contract/choose` from `talos run --json` or without a terminal).
    pub fn initialize_declining(&mut self, declines: &[&str]) -> Result<Value, Failure> {
        let initialize_params = InitializeParams {
            client_name: Some("talos-cli".into()),
            client_version: Some(env!("CARGO_PKG_VERSION").into()),
            protocol_version: Some(PROTOCOL_VERSION),
            declines: declines.iter().map(|m| m.to_string()).collect(),
            ..InitializeParams::default()
        };
        self.call(
            INITIALIZE,
            params(serde_json::to_value(&initialize_params)),
            &mut ignore_messages,
        )
    }

    /// Calls `method` and returns its result. Messages that arrive meanwhile go to
    /// `on_message`; a reply it returns is written to the daemon before reading on.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        on_message: &mut dyn FnMut(Message) -> Result<Option<Message>, Failure>,
    ) -> Result<Value, Failure> {
        let id = Value::from(self.next_id);
        self.next_id += 1;
        self.send(&Message::request(id.clone(), method, params))?;
        loop {
            let message = self.receive(method)?;
            match message.kind() {
                MessageKind::Response if message.id.as_ref() == Some(&id) => {
                    return match (message.error, message.result) {
                        (Some(error), _) => Err(Failure::Rpc(error)),
                        (None, result) => Ok(result.unwrap_or(Value::Null)),
                    };
                }
                // A response to something else cannot be ours to act on.
                MessageKind::Response => {}
                MessageKind::Request | MessageKind::Notification => {
                    if let Some(reply) = on_message(message)? {
                        self.send(&reply)?;
                    }
                }
                MessageKind::Invalid => {
                    return Err(Failure::Connection(format!(
                        "invalid message from talosd: {}",
                        message.to_line()
                    )));
                }
            }
        }
    }

    /// Waits up to `timeout` for the daemon to close the connection (after a shutdown).
    pub fn wait_for_close(&mut self, timeout: Duration) {
        if self
            .reader
            .get_ref()
            .set_read_timeout(Some(timeout))
            .is_err()
        {
            return;
        }
        let mut line = String::new();
        while let Ok(read) = self.reader.read_line(&mut line) {
            if read == 0 {
                return;
            }
            line.clear();
        }
    }

    fn send(&mut self, message: &Message) -> Result<(), Failure> {
        let mut line = message.to_line();
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .map_err(|error| lost(&error))?;
        self.writer.flush().map_err(|error| lost(&error))
    }

    fn receive(&mut self, method: &str) -> Result<Message, Failure> {
        let mut line = String::new();
        loop {
            line.clear();
            let read = self
                .reader
                .read_line(&mut line)
                .map_err(|error| lost(&error))?;
            if read == 0 {
                return Err(Failure::Connection(format!(
                    "talosd closed the connection before answering {method}"
                )));
            }
            if line.trim().is_empty() {
                continue;
            }
            return serde_json::from_str(&line).map_err(|error| {
                Failure::Connection(format!("invalid message from talosd: {error}"))
            });
        }
    }
}

/// A handler for calls that expect no traffic besides their response: notifications are
/// dropped and requests refused, so the daemon is never left waiting.
pub fn ignore_messages(message: Message) -> Result<Option<Message>, Failure> {
    Ok(refuse_request(&message))
}

/// The error reply to a daemon-to-client request this client does not handle.
pub fn refuse_request(message: &Message) -> Option<Message> {
    match (message.kind(), &message.id, &message.method) {
        (MessageKind::Request, Some(id), Some(method)) => Some(Message::error_response(
            id.clone(),
            RpcError::new(
                ErrorCode::MethodNotFound,
                format!("talos-cli does not handle {method}"),
            ),
        )),
        _ => None,
    }
}

/// Unwraps serialised wire params. The protocol types are plain data, so serialising them
/// cannot fail in practice; `null` would be refused by the daemon rather than panic here.
pub fn params(serialised: serde_json::Result<Value>) -> Value {
    serialised.unwrap_or(Value::Null)
}

fn lost(error: &io::Error) -> Failure {
    Failure::Connection(format!("connection to talosd lost: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::{BufRead, BufReader, Write};

    /// Runs `client.call("m", ..)` against a scripted daemon that answers the request with
    /// `lines` (the request's id is always 1) and returns the call's result, the handler's
    /// messages and what the client wrote after its request.
    fn check_call(lines: &[Value]) -> (Result<Value, Failure>, Vec<Message>, Vec<Value>) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let script: Vec<String> = lines.iter().map(|line| format!("{line}\n")).collect();
        let daemon = std::thread::spawn(move || {
            let mut reader = BufReader::new(theirs.try_clone().unwrap());
            let mut writer = theirs;
            let mut request = String::new();
            reader.read_line(&mut request).unwrap();
            for line in script {
                writer.write_all(line.as_bytes()).unwrap();
            }
            writer.shutdown(std::net::Shutdown::Write).unwrap();
            let written: Vec<Value> = reader
                .lines()
                .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
                .collect();
            (serde_json::from_str::<Value>(&request).unwrap(), written)
        });
        let mut client = Client::new(ours).unwrap();
        let mut seen = Vec::new();
        let result = client.call("m", json!({"p": 1}), &mut |message: Message| {
            seen.push(message.clone());
            Ok(refuse_request(&message))
        });
        drop(client);
        let (request, written) = daemon.join().unwrap();
        assert_eq!(
            request,
            json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"p": 1}})
        );
        (result, seen, written)
    }

    #[test]
    fn a_call_returns_its_own_result_after_handing_over_other_messages() {
        let (result, seen, written) = check_call(&[
            json!({"jsonrpc": "2.0", "method": "turn/event", "params": {"seq": 1}}),
            json!({"jsonrpc": "2.0", "id": "d1", "method": "x/y", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 7, "result": "not ours"}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"ok": true}}),
        ]);
        assert_eq!(result.unwrap(), json!({"ok": true}));
        assert_eq!(seen.len(), 2);
        assert_eq!(written.len(), 1);
        assert_eq!(written[0]["id"], json!("d1"));
        assert_eq!(written[0]["error"]["code"], json!(-32601));
    }

    #[test]
    fn an_error_response_and_a_closed_connection_are_failures() {
        let (result, _, _) = check_call(&[
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32003, "message": "session busy"}}),
        ]);
        assert!(matches!(result, Err(Failure::Rpc(error)) if error.message == "session busy"));
        let (result, _, _) = check_call(&[]);
        assert!(
            matches!(&result, Err(Failure::Connection(text)) if text.contains("before answering m")),
            "{result:?}"
        );
    }
}

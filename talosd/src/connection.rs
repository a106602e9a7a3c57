//! One client connection: a bidirectional JSON-RPC peer over newline-delimited JSON.
//!
//! A reader task splits lines (bounded length) and dispatches requests; one writer task
//! drains a bounded queue, so a slow client pushes back on whoever emits and nothing is ever
//! dropped. The peer can send requests to the client (`approval/request`) and await the
//! response; when the connection closes every pending request resolves as closed, which the
//! turn reads as a denial.
//!
//! What a request means is not this module's business: whoever accepts the connection passes a
//! [`Handler`] (the daemon's method table), so the connection depends on nothing above it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use talos_protocol::{ErrorCode, Message, RpcError, rpc::MessageKind};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::ids::ApprovalId;

/// Longest accepted line: a longer one gets an error and is skipped.
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// Outgoing messages waiting for the socket before senders wait.
const OUTGOING_QUEUE: usize = 256;
/// Requests one connection may have in flight at once.
const MAX_IN_FLIGHT: usize = 64;
/// Requests read and waiting for one of those slots; one more is answered `-32008` at once, so
/// the reader never waits and the answers behind it are always read.
const QUEUED_REQUESTS: usize = 1024;

/// Answers the requests a connection reads. The daemon's method table implements it
/// (`talosd::dispatch::Dispatch`); tests may pass their own.
pub trait Handler: Send + Sync + 'static {
    /// The result of one request from the client on `peer`'s connection, or its error.
    fn handle(
        &self,
        peer: Arc<Peer>,
        method: String,
        params: Value,
    ) -> impl Future<Output = Result<Value, RpcError>> + Send;
}

/// The connection closed before the answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// The daemon's side of one connection.
#[derive(Debug)]
pub struct Peer {
    pub id: u64,
    out: mpsc::Sender<String>,
    next_request_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Message>>>,
    /// Approval request ids -> JSON-RPC ids of the outstanding `approval/request`.
    aliases: Mutex<HashMap<ApprovalId, u64>>,
    /// The requests the client said at `initialize` it does not answer (`contract/choose`).
    declines: Mutex<Vec<String>>,
    pub closed: CancellationToken,
}

/// Removes a pending request's entries however the wait ends.
struct PendingGuard<'a> {
    peer: &'a Peer,
    id: u64,
    alias: Option<ApprovalId>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut pending) = self.peer.pending.lock() {
            pending.remove(&self.id);
        }
        if let (Some(alias), Ok(mut aliases)) = (&self.alias, self.peer.aliases.lock()) {
            aliases.remove(alias);
        }
    }
}

impl Peer {
    /// Connection `id`, whose outgoing lines go to `out`; nothing pending yet.
    fn new(id: u64, out: mpsc::Sender<String>) -> Peer {
        Peer {
            id,
            out,
            next_request_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            aliases: Mutex::new(HashMap::new()),
            declines: Mutex::new(Vec::new()),
            closed: CancellationToken::new(),
        }
    }

    /// Remembers the requests the client declines to answer (its last `initialize` wins).
    pub fn set_declines(&self, methods: &[String]) {
        if let Ok(mut declines) = self.declines.lock() {
            *declines = methods.to_vec();
        }
    }

    /// Whether the client said it does not answer `method`.
    pub fn declines(&self, method: &str) -> bool {
        self.declines
            .lock()
            .is_ok_and(|declines| declines.iter().any(|m| m == method))
    }

    /// Queues one message; waits while the queue is full.
    pub async fn send(&self, message: &Message) -> Result<(), Closed> {
        self.out.send(message.to_line()).await.map_err(|_| Closed)
    }

    pub async fn notify(&self, method: &str, params: Value) -> Result<(), Closed> {
        self.send(&Message::notification(method, params)).await
    }

    /// Sends a request to the client and waits for its response. `alias` lets the client
    /// answer through `approval/respond` on this same connection instead.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        alias: Option<ApprovalId>,
    ) -> Result<Message, Closed> {
        let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().map_err(|_| Closed)?.insert(id, tx);
        if let Some(alias) = &alias {
            self.aliases
                .lock()
                .map_err(|_| Closed)?
                .insert(alias.clone(), id);
        }
        let _guard = PendingGuard {
            peer: self,
            id,
            alias,
        };
        self.send(&Message::request(json!(id), method, params))
            .await?;
        tokio::select! {
            answer = rx => answer.map_err(|_| Closed),
            () = self.closed.cancelled() => Err(Closed),
        }
    }

    fn complete(&self, id: u64, message: Message) -> bool {
        let sender = self.pending.lock().ok().and_then(|mut p| p.remove(&id));
        sender.is_some_and(|s| s.send(message).is_ok())
    }

    /// Completes the outstanding request known by `alias` with `result`, if this connection
    /// has one.
    pub fn complete_alias(&self, alias: &str, result: Value) -> bool {
        let id = self.aliases.lock().ok().and_then(|a| a.get(alias).copied());
        match id {
            Some(id) => self.complete(id, Message::response(json!(id), result)),
            None => false,
        }
    }

    pub fn pending_requests(&self) -> usize {
        self.pending.lock().map(|p| p.len()).unwrap_or(0)
    }
}

/// Serves one accepted connection until it closes or `stopping` is cancelled, answering its
/// requests with `handler`.
pub async fn serve<H: Handler>(
    handler: Arc<H>,
    stream: UnixStream,
    id: u64,
    stopping: CancellationToken,
) {
    let (read_half, write_half) = stream.into_split();
    let (tx, rx) = mpsc::channel::<String>(OUTGOING_QUEUE);
    let peer = Arc::new(Peer::new(id, tx));
    let writer = tokio::spawn(write_lines(write_half, rx));
    let tasks = TaskTracker::new();
    let (requests, queued) = mpsc::channel::<Message>(QUEUED_REQUESTS);
    let dispatcher = tokio::spawn(dispatch_requests(
        handler.clone(),
        peer.clone(),
        queued,
        tasks.clone(),
    ));
    let mut reader = BufReader::new(read_half);
    loop {
        let line = tokio::select! {
            line = read_line(&mut reader) => line,
            () = stopping.cancelled() => break,
        };
        match line {
            Ok(Some(Line::Text(text))) if text.trim().is_empty() => {}
            Ok(Some(Line::Text(text))) => match incoming(&text) {
                // Answers and errors are handled here, in the order they arrive, and never
                // wait for a request slot: the first answer to an approval is final.
                Incoming::Response(message) => {
                    if let Some(id) = message.id.as_ref().and_then(Value::as_u64) {
                        peer.complete(id, message);
                    }
                }
                Incoming::Notification => {}
                Incoming::Error(reply) => {
                    if peer.send(&reply).await.is_err() {
                        break;
                    }
                }
                Incoming::Request(message) if answers_in_order(&message) => {
                    respond(handler.as_ref(), &peer, message).await;
                }
                // Other requests wait for a slot in the dispatcher, never in the reader, so
                // the answers behind them are still read.
                Incoming::Request(message) => match requests.try_send(message) {
                    Ok(()) => {}
                    Err(mpsc::error::TrySendError::Full(message)) => {
                        if peer.send(&too_many_requests(&message)).await.is_err() {
                            break;
                        }
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => break,
                },
            },
            Ok(Some(Line::TooLong)) => {
                if peer.send(&too_long()).await.is_err() {
                    break;
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    // Every waiting approval now resolves as closed: a disconnect is a denial, and requests
    // still queued are dropped unstarted.
    peer.closed.cancel();
    drop(requests);
    let _ = dispatcher.await;
    if let Ok(mut pending) = peer.pending.lock() {
        pending.clear();
    }
    tasks.close();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), tasks.wait()).await;
    drop(peer);
    let _ = writer.await;
}

/// Writes the connection's outgoing lines, flushing when none is waiting, until the queue
/// closes or the client stops reading.
async fn write_lines(write_half: OwnedWriteHalf, mut rx: mpsc::Receiver<String>) {
    let mut w = BufWriter::new(write_half);
    while let Some(line) = rx.recv().await {
        if w.write_all(line.as_bytes()).await.is_err() || w.write_all(b"\n").await.is_err() {
            break;
        }
        if rx.is_empty() && w.flush().await.is_err() {
            break;
        }
    }
    let _ = w.flush().await;
    let _ = w.shutdown().await;
}

/// The answer to a line over [`MAX_LINE_BYTES`].
fn too_long() -> Message {
    let error = RpcError::new(
        ErrorCode::InvalidRequest,
        format!("message longer than {MAX_LINE_BYTES} bytes"),
    );
    Message::error_response(Value::Null, error)
}

/// The answer to a request that found every slot of the connection taken.
fn too_many_requests(message: &Message) -> Message {
    let error = RpcError::new(
        ErrorCode::TooManyRequests,
        format!(
            "{MAX_IN_FLIGHT} requests are running and {QUEUED_REQUESTS} are waiting on this connection; retry once some are answered"
        ),
    );
    Message::error_response(message.id.clone().unwrap_or(Value::Null), error)
}

enum Line {
    Text(String),
    TooLong,
}

/// Reads one line of at most [`MAX_LINE_BYTES`]; a longer one is consumed and reported.
async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Line>> {
    let mut buf: Vec<u8> = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() && !too_long {
                None
            } else {
                Some(finish(buf, too_long))
            });
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = found.unwrap_or(available.len());
        reader.consume(consumed);
        if found.is_some() {
            return Ok(Some(finish(buf, too_long)));
        }
    }
}

fn finish(buf: Vec<u8>, too_long: bool) -> Line {
    if too_long {
        return Line::TooLong;
    }
    // Invalid UTF-8 becomes replacement characters and then a parse error, not a disconnect.
    Line::Text(String::from_utf8_lossy(&buf).into_owned())
}

/// Starts queued requests as slots free up; stops when the connection closes.
async fn dispatch_requests<H: Handler>(
    handler: Arc<H>,
    peer: Arc<Peer>,
    mut queued: mpsc::Receiver<Message>,
    tasks: TaskTracker,
) {
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    while let Some(message) = queued.recv().await {
        let permit = tokio::select! {
            permit = in_flight.clone().acquire_owned() => permit,
            () = peer.closed.cancelled() => return,
        };
        let Ok(permit) = permit else { return };
        if peer.closed.is_cancelled() {
            return;
        }
        let (handler, peer) = (handler.clone(), peer.clone());
        tasks.spawn(async move {
            respond(handler.as_ref(), &peer, message).await;
            drop(permit);
        });
    }
}

/// One line, classified before anything is done with it.
enum Incoming {
    Request(Message),
    /// A response to a request the daemon sent (an approval's answer).
    Response(Message),
    Notification,
    /// The error response the line gets.
    Error(Message),
}

fn incoming(line: &str) -> Incoming {
    let value = match serde_json::from_str::<Value>(line) {
        Ok(value) => value,
        Err(e) => {
            let error = RpcError::new(ErrorCode::ParseError, format!("parse error: {e}"));
            return Incoming::Error(Message::error_response(Value::Null, error));
        }
    };
    let message = match serde_json::from_value::<Message>(value.clone()) {
        Ok(message) => message,
        Err(e) => {
            let error = RpcError::new(ErrorCode::InvalidRequest, format!("invalid request: {e}"));
            return Incoming::Error(Message::error_response(usable_id(value.get("id")), error));
        }
    };
    match message.kind() {
        MessageKind::Request => Incoming::Request(message),
        MessageKind::Response => Incoming::Response(message),
        MessageKind::Notification => Incoming::Notification,
        MessageKind::Invalid => {
            let error = RpcError::new(
                ErrorCode::InvalidRequest,
                "invalid request: not a JSON-RPC 2.0 request, notification or response",
            );
            Incoming::Error(Message::error_response(
                usable_id(message.id.as_ref()),
                error,
            ))
        }
    }
}

/// An id a reply can carry (a string or a number), else `null`.
fn usable_id(id: Option<&Value>) -> Value {
    id.cloned()
        .filter(|id| id.is_string() || id.is_number())
        .unwrap_or(Value::Null)
}

/// Requests answered on the reader, in order with the responses around them: an approval's
/// answer through `approval/respond` must not overtake (or be overtaken by) a direct one.
fn answers_in_order(message: &Message) -> bool {
    message.method.as_deref() == Some(talos_protocol::APPROVAL_RESPOND)
}

async fn respond<H: Handler>(handler: &H, peer: &Arc<Peer>, message: Message) {
    let id = message.id.unwrap_or(Value::Null);
    let method = message.method.unwrap_or_default();
    let params = message.params.unwrap_or(Value::Null);
    let reply = match handler.handle(peer.clone(), method, params).await {
        Ok(result) => Message::response(id, result),
        Err(error) => Message::error_response(id, error),
    };
    let _ = peer.send(&reply).await;
}

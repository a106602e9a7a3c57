//! Bounded reads of what a model server sends back. Every body is read to at most a cap and,
//! for a whole answer, within a deadline: a server (or anything on its port) that sends
//! without end, or too slowly to ever finish, ends the request with an error that says so,
//! and the daemon's memory never follows it. An error body is only kept to its first bytes.

use std::time::Duration;

/// A whole JSON answer: `/props`, `/v1/models`, `/tokenize`, a chat answer not streamed.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// What is kept of an error body (the message shown is shorter still).
pub const MAX_ERROR_BYTES: usize = 64 * 1024;
/// One line of an event stream.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// A whole event stream: far above any reply of `model.max_tokens`.
pub const MAX_STREAM_BYTES: usize = 64 * 1024 * 1024;
/// How long a server's facts (`/props`, `/v1/models`) or one `/tokenize` may take in all.
pub const PROBE_DEADLINE: Duration = Duration::from_secs(30);
/// How long an error body may take to arrive before what came is used.
const ERROR_DEADLINE: Duration = Duration::from_secs(10);

/// The caps a read works to.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub bytes: usize,
    pub within: Duration,
}

/// Why a body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("its answer exceeded {0} bytes")]
    TooLarge(usize),
    #[error("its answer did not end within {0} s")]
    TooSlow(u64),
    #[error("its answer broke off")]
    Broken(#[source] reqwest::Error),
}

/// The whole body, at most `limits.bytes`, within `limits.within`.
pub async fn read(response: &mut reqwest::Response, limits: Limits) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    let reading = async {
        while let Some(chunk) = response.chunk().await.map_err(BodyError::Broken)? {
            if body.len() + chunk.len() > limits.bytes {
                return Err(BodyError::TooLarge(limits.bytes));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(())
    };
    match tokio::time::timeout(limits.within, reading).await {
        Ok(Ok(())) => Ok(body),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(BodyError::TooSlow(limits.within.as_secs())),
    }
}

/// The start of an error body as text: what arrives within a short deadline, to at most
/// [`MAX_ERROR_BYTES`]; the rest is never read.
pub async fn error_text(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    let reading = async {
        while let Ok(Some(chunk)) = response.chunk().await {
            let room = MAX_ERROR_BYTES - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= MAX_ERROR_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(ERROR_DEADLINE, reading).await;
    String::from_utf8_lossy(&body).into_owned()
}

//! How a turn ended and how its approvals and its reading were answered: [`CompletionStatus`],
//! [`Classification`], [`Decision`], [`ApprovalSource`], [`ReadingChoice`] and [`ChoiceSource`]. The method results, the turn events
//! and the trace record all speak these words, so they live here, below all three, and name
//! nothing else in the crate (re-exported where they were first published: `methods`, `event`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Coarse completion status of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CompletionStatus {
    /// Done: the change was made, or the read-only request answered.
    Complete,
    /// Some of what was requested happened, some did not.
    Partial,
    /// Stopped by policy or by a denied approval.
    Blocked,
    /// An answer without the requested action or evidence (nothing was changed).
    AdvisoryOnly,
    /// The turn failed (model unreachable, model error, a change that did not hold).
    Failed,
    /// The turn was cancelled (`turn/cancel`, or the daemon stopped).
    Cancelled,
}

/// Fine classification of a turn, decided from the turn's records alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Classification {
    /// Changed and the change was verified by reading it back.
    CompletedVerified,
    /// Changed, without a verification.
    CompletedUnverified,
    /// A read-only request was answered.
    ReadOnlyAnswered,
    /// Part of the requested work was done.
    Partial,
    /// A needed approval was denied.
    BlockedByApproval,
    /// The policy refused a needed call.
    BlockedByPolicy,
    /// An answer without the requested change or the evidence it needed.
    AdvisoryOnly,
    /// The turn failed.
    Failed,
    /// The turn was cancelled.
    Cancelled,
    /// The request could mean a change or only a question, and the person did not say which
    /// (the client cannot ask, or the question went unanswered): the turn ended before the
    /// model, without a guess. Status `BLOCKED`.
    ContractAmbiguous,
}

/// A person's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Decision {
    /// Allow this one call.
    Approve,
    /// Allow this call and remember write approval for the session (when eligible).
    ApproveForSession,
    /// Refuse the call; nothing is written.
    Deny,
}

/// Who or what resolved an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalSource {
    /// The client's answer (an error response or unreadable result counts as `deny`).
    Client,
    /// The connection closed before an answer: `deny`.
    Disconnect,
    /// No answer within `approval.timeout_secs`: `deny`.
    Timeout,
    /// The turn was cancelled (`turn/cancel`, or the daemon is stopping): `deny`.
    Cancelled,
    /// A session grant answered without asking; defined, not emitted today.
    Remembered,
}

/// The reading a person chose for an uncertain request (`contract/choose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReadingChoice {
    /// Change the named files.
    Change,
    /// Only answer a question; nothing is changed.
    Question,
}

/// Who or what ended a `contract/choose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChoiceSource {
    /// The client's answer.
    Client,
    /// The client cannot ask: it said so at `initialize` (`declines`), or answered with an
    /// error or a result that does not parse.
    Declined,
    /// The connection closed before an answer.
    Disconnect,
    /// No answer within `approval.timeout_secs`.
    Timeout,
    /// The turn was cancelled while it asked.
    Cancelled,
}

//! Turn events: one closed, tagged enum carrying the result kinds, plus approval and
//! outcome events. Adding a kind is a compile error at every exhaustive `match`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::instructions::InstructionFile;
use crate::methods::TurnOutcome;
pub use crate::verdict::ApprovalSource;
use crate::verdict::Decision;

/// Params of the `turn/event` notification. `seq` starts at 1 and increases by one per event
/// within a turn; events are never dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnEventParams {
    /// The session the turn runs in (`ses-` + 32 hex).
    pub session_id: String,
    /// The turn this event belongs to (`turn-` + 32 hex).
    pub turn_id: String,
    /// Position of the event in its turn: 1 for the first, no gaps.
    pub seq: u64,
    /// What happened.
    pub event: TurnEvent,
}

/// One thing that happened in a turn, tagged on the wire by `kind` (the variant's name in
/// snake_case) with camelCase fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum TurnEvent {
    /// A short success line (`Edited settings.py ...`).
    Ok {
        /// The line to show.
        text: String,
    },
    /// The model's complete streamed text for one model call, after its stream ended.
    Streamed {
        /// The whole text of the call (empty when the model answered only with tool calls).
        text: String,
    },
    /// A failure the runtime reports (model unreachable, model call failed, pin refused).
    Error {
        /// What failed, in one lowercase sentence.
        message: String,
    },
    /// Information from the runtime about what it is doing.
    Info {
        /// The line to show.
        text: String,
    },
    /// Information the runtime vouches for (read from its own records, not the model).
    TrustedInfo {
        /// The text to show (for example a protected file shown only to the person).
        text: String,
    },
    /// Tabular information from the runtime (a deterministic listing).
    Table {
        /// Column headings, in order.
        columns: Vec<String>,
        /// One entry per row, each with one cell per column.
        rows: Vec<Vec<String>>,
    },
    /// A model stream begins.
    StreamStart {
        /// Which stream; `answer` today.
        stream: String,
    },
    /// A piece of the model's text as it arrives.
    StreamChunk {
        /// Which stream; `answer` today.
        stream: String,
        /// The new text (concatenate the chunks to get the whole).
        text: String,
    },
    /// The stream ended, also when it broke off or the turn was cancelled.
    StreamEnd {
        /// Which stream; `answer` today.
        stream: String,
    },
    /// A proposed tool call: its target, or why it was rejected or denied.
    ToolProgress {
        /// The tool's canonical name (`talos.edit_file`), or the name as the model wrote it.
        tool: String,
        /// The call's id within the turn (`call-1`, ...).
        call_id: String,
        /// The target path, or the reason the call did not run.
        message: String,
    },
    /// The project's instruction files (`AGENTS.md`) this turn sends the model, root first:
    /// always the turn's first event, with an empty list when none was found or used.
    Instructions {
        /// Each file used, in the order the model reads them.
        files: Vec<InstructionFile>,
    },
    /// The turn's plan as steps, sent once near the start of the turn (before any call).
    Plan {
        /// In order: reads, changes, a verification, the answer.
        steps: Vec<PlanStep>,
    },
    /// Where one proposed call stands, from the turn's records: `running` once its checks
    /// passed (it may still ask for approval), then exactly one of the ends. A call refused
    /// before it ran has only its end.
    Call {
        /// The call's id within the turn (`call-1`, ...), as in `tool_progress`.
        call_id: String,
        /// The tool as the model named it.
        tool: String,
        /// `running`, `completed`, `failed`, `rejected` or `denied`.
        status: CallStatus,
        /// The workspace-relative target, when the call has one (`<protected-path>` for a
        /// protected name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<String>,
        /// Why it was rejected, denied or failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An `approval/request` is about to be sent to the client.
    ApprovalRequested {
        /// The approval's id (`apr-` + 32 hex), as in the request's params.
        request_id: String,
        /// The tool that asks.
        tool: String,
        /// What the call would do, e.g. `write operation: talos.edit_file`.
        description: String,
    },
    /// How an approval ended.
    ApprovalResolved {
        /// The approval's id, as in `approval_requested`.
        request_id: String,
        /// The decision in force.
        decision: Decision,
        /// Who or what decided.
        source: ApprovalSource,
    },
    /// The model is working on a reply whose text is held for the guards: the tokens it has
    /// generated so far in this model call. Sent at most every 250 ms while the reply streams,
    /// and once as soon as the request is sent (`tokens: 0`).
    Progress {
        /// The model call's index within the turn, from 0.
        model_call: usize,
        /// Tokens generated so far in this model call.
        tokens: u64,
        /// On the call's first progress (`tokens: 0`): the prompt's size as Talos counted it,
        /// which the server reads before its first token (on a CPU, the wait a person sees).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt_tokens: Option<u64>,
    },
    /// One model call's use of the context, after its reply ended.
    Usage {
        /// The model call's index within the turn, from 0.
        model_call: usize,
        /// Tokens of the prompt, as the server counted them (else Talos's own count).
        prompt_tokens: u64,
        /// Of those, tokens served from the server's prompt cache, when it said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cached_tokens: Option<u64>,
        /// Tokens the model generated, when the server said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        completion_tokens: Option<u64>,
        /// The context one request may use (the slot's size, or `model.ctx_per_request`).
        context_tokens: u64,
    },
    /// The turn's outcome; always the last event of a turn.
    Outcome {
        /// The same value the `turn/start` response carries.
        outcome: TurnOutcome,
    },
}

/// One step of a turn's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// e.g. `Change settings.py (30 → 60)`.
    pub text: String,
    /// `read`, `change`, `verify` or `answer`.
    pub kind: String,
    /// The workspace-relative file the step is about, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// Where one call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CallStatus {
    /// Past the checks; it may still ask for approval.
    Running,
    /// It ran and its checks held.
    Completed,
    /// It ran, or was approved, and failed.
    Failed,
    /// Refused by a check or the loop's discipline before it ran.
    Rejected,
    /// Denied by the policy or by the person.
    Denied,
}

impl TurnEvent {
    /// A `progress` event (`prompt_tokens` only on a model call's first).
    pub fn progress(model_call: usize, tokens: u64, prompt_tokens: Option<u64>) -> TurnEvent {
        TurnEvent::Progress {
            model_call,
            tokens,
            prompt_tokens,
        }
    }

    /// The status family a result kind belongs to.
    pub fn family(&self) -> &'static str {
        match self {
            TurnEvent::Ok { .. } => "ok",
            TurnEvent::Streamed { .. } => "ok",
            TurnEvent::Error { .. } => "error",
            TurnEvent::Info { .. } => "info",
            TurnEvent::TrustedInfo { .. } => "info",
            TurnEvent::Table { .. } => "info",
            TurnEvent::StreamStart { .. } => "stream",
            TurnEvent::StreamChunk { .. } => "stream",
            TurnEvent::StreamEnd { .. } => "stream",
            TurnEvent::ToolProgress { .. } => "stream",
            TurnEvent::Instructions { .. } => "info",
            TurnEvent::Plan { .. } => "info",
            TurnEvent::Call { .. } => "stream",
            TurnEvent::ApprovalRequested { .. } => "approval",
            TurnEvent::ApprovalResolved { .. } => "approval",
            TurnEvent::Progress { .. } => "stream",
            TurnEvent::Usage { .. } => "info",
            TurnEvent::Outcome { .. } => "outcome",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_internally_tagged_with_camel_case_fields() {
        let event = TurnEvent::ToolProgress {
            tool: "talos.edit_file".into(),
            call_id: "c1".into(),
            message: "m".into(),
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"kind": "tool_progress", "tool": "talos.edit_file", "callId": "c1", "message": "m"})
        );
        let back: TurnEvent = serde_json::from_value(
            json!({"kind": "stream_chunk", "stream": "answer", "text": "x"}),
        )
        .unwrap();
        assert_eq!(back.family(), "stream");
    }
}

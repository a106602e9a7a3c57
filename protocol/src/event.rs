//! Turn events: one closed, tagged enum carrying the seed's result kinds, plus approval and
//! outcome events. Adding a kind is a compile error at every exhaustive `match`.

use serde::{Deserialize, Serialize};

use crate::methods::{Decision, TurnOutcome};

/// Params of the `turn/event` notification. `seq` starts at 1 and increases by one per event
/// within a turn; events are never dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEventParams {
    pub session_id: String,
    pub turn_id: String,
    pub seq: u64,
    pub event: TurnEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum TurnEvent {
    /// A short success line (`Edited settings.py ...`).
    Ok {
        text: String,
    },
    /// The model's complete streamed text for one model call, after its stream ended.
    Streamed {
        text: String,
    },
    Error {
        message: String,
    },
    /// Information from the runtime about what it is doing.
    Info {
        text: String,
    },
    /// Information the runtime vouches for (read from its own records, not the model).
    TrustedInfo {
        text: String,
    },
    Table {
        columns: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    StreamStart {
        stream: String,
    },
    StreamChunk {
        stream: String,
        text: String,
    },
    StreamEnd {
        stream: String,
    },
    ToolProgress {
        tool: String,
        call_id: String,
        message: String,
    },
    ApprovalRequested {
        request_id: String,
        tool: String,
        description: String,
    },
    ApprovalResolved {
        request_id: String,
        decision: Decision,
        source: ApprovalSource,
    },
    Outcome {
        outcome: TurnOutcome,
    },
}

/// Who or what resolved an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalSource {
    Client,
    Disconnect,
    Timeout,
    Cancelled,
    Remembered,
}

impl TurnEvent {
    /// The seed's status family of a result kind.
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
            TurnEvent::ApprovalRequested { .. } => "approval",
            TurnEvent::ApprovalResolved { .. } => "approval",
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

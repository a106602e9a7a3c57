//! `contract/choose`: the daemon asks the person which of two readings an uncertain request
//! means, before the model is called (issue 34; docs/decisions/0063). A request that holds a
//! change verb and names an existing file, yet reads as a question only by default ("I think
//! DEBUG in config.py should change"), is never planned as a question in silence: the client
//! that started the turn shows both readings as a permission-style choice and answers with one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::verdict::ReadingChoice;

/// Request from the daemon to the client that started the turn: change, or only a question?
pub const CONTRACT_CHOOSE: &str = "contract/choose";

/// Params of the daemon-to-client request `contract/choose`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContractChooseParams {
    /// The turn that asks.
    pub turn_id: String,
    /// The session of that turn.
    pub session_id: String,
    /// The request as the person wrote it.
    pub request: String,
    /// The change reading: the files it would change.
    pub change: ChangeReading,
    /// The question reading: nothing is changed.
    pub question: QuestionReading,
}

/// The change reading of an uncertain request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeReading {
    /// The existing workspace files a change would change (workspace-relative).
    pub targets: Vec<String>,
    /// What to show for it: `Change config.py?`.
    pub description: String,
}

/// The question reading of an uncertain request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionReading {
    /// What to show for it: `Only answer a question`.
    pub description: String,
}

/// The client's JSON-RPC result for `contract/choose`. An error response, or a result that
/// does not parse, is no choice: the turn ends `CONTRACT_AMBIGUOUS`, never a guess.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContractChooseResult {
    /// The reading the person chose.
    pub choice: ReadingChoice,
}

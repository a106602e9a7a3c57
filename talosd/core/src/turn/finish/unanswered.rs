//! A question turn with no complete answer says so: an answer cut at the reply limit
//! is shown as far as it went, marked unfinished (`PARTIAL`); a reply cut before it said
//! anything, or a loop that stopped with only its own note, has no answer (`FAILED`). Decided
//! from the records ([`crate::request::outcome::AnswerEnd`]), never from the answer's words.

use crate::request::outcome::{self, AnswerEnd, Fine, TurnFacts};

/// What follows an answer cut at the reply limit.
pub const CUT_ANSWER: &str = "[Incomplete answer: the model's reply was cut at the reply limit, so the answer above stops before its end.]";

/// The answer when the reply was cut before any prose.
pub const CUT_BEFORE_ANY_ANSWER: &str =
    "[No answer: the model's reply was cut at the reply limit before it gave any answer.]";

/// What precedes the loop's note when the model never answered.
pub const LOOP_STOPPED_UNANSWERED: &str =
    "[No answer: the model did not answer the question before the tool loop stopped.]";

/// The answer the person sees when the way the model's answer ended decided the outcome;
/// else `answer` as it is.
pub(super) fn unanswered(facts: &TurnFacts, fine: Fine, answer: String) -> String {
    let whole = TurnFacts {
        answer_end: AnswerEnd::Whole,
        ..facts.clone()
    };
    let decided_by_answer =
        fine != Fine::ReadOnlyAnswered && outcome::classify(&whole) == Fine::ReadOnlyAnswered;
    if !decided_by_answer {
        return answer;
    }
    match facts.answer_end {
        AnswerEnd::Whole => answer,
        AnswerEnd::Cut => format!("{}\n\n{CUT_ANSWER}", answer.trim_end()),
        AnswerEnd::CutEmpty => CUT_BEFORE_ANY_ANSWER.to_string(),
        AnswerEnd::LoopStopped => format!("{LOOP_STOPPED_UNANSWERED}\n\n{}", answer.trim()),
    }
}

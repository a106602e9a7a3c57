//! A turn whose model said nothing at the end still answers the person: an empty answer is
//! filled from the turn's records (its outcome and the files it changed), never left blank on
//! a turn that wrote a file.

use crate::request::outcome::{Fine, MutationResult, TurnFacts};

/// `answer`, or when it holds no words, what the records say.
pub(super) fn filled(facts: &TurnFacts, fine: Fine, answer: String) -> String {
    if !answer.trim().is_empty() {
        return answer;
    }
    let changed: Vec<&str> = facts
        .mutations
        .iter()
        .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
        .map(|m| m.target.as_str())
        .collect();
    let files = if changed.is_empty() {
        String::new()
    } else {
        format!(" Changed: {}.", changed.join(", "))
    };
    format!(
        "[Talos: the model gave no answer. From the records, the turn is {}.{files}]",
        fine.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::outcome::MutationRecord;

    /// Proves an empty answer is filled from the records and any other answer is left alone.
    #[test]
    fn an_empty_answer_is_filled_from_the_records() {
        let facts = TurnFacts {
            mutations: vec![MutationRecord {
                target: "settings.py".into(),
                result: MutationResult::Succeeded { verified: true },
            }],
            ..TurnFacts::default()
        };
        let filled_in = filled(&facts, Fine::CompletedVerified, " \n".into());
        assert_eq!(
            filled_in,
            "[Talos: the model gave no answer. From the records, the turn is COMPLETED_VERIFIED. Changed: settings.py.]"
        );
        assert_eq!(
            filled(&facts, Fine::CompletedVerified, "TIMEOUT is 60.".into()),
            "TIMEOUT is 60."
        );
    }
}

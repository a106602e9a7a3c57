//! A turn that changed nothing never keeps a change claim: when the records show no
//! successful write, every sentence that says a file was changed, created, updated, fixed or
//! renamed, and a bare "Done.", is dropped, and the runtime says from the records why nothing
//! changed: how the request was read, or what stopped the change it asked for.

use super::sentences;
use crate::request::outcome::TurnFacts;

/// Whether a sentence claims a change the records do not show, on a turn with no successful
/// write. On a turn that asked for a change, any claim of success counts too ("All three files
/// are in place").
pub(super) fn contradicted(facts: &TurnFacts, sentence: &str) -> bool {
    sentences::claims_change(sentence)
        || sentences::claims_done(sentence)
        || (facts.mutation_requested && sentences::claims_success(sentence))
}

/// The runtime's statement that nothing changed, and why, from the records: the contract's
/// reading of a request that asked for no change, the read-only turn, or the change the model
/// never proposed.
pub(super) fn nothing_changed(facts: &TurnFacts) -> String {
    let why = if !facts.mutation_requested {
        let reading = if facts.reading.is_empty() {
            "one that changes no file"
        } else {
            facts.reading.as_str()
        };
        format!("the request was read as {reading}")
    } else if !facts.mutation_allowed {
        "this turn could not change files".to_string()
    } else if facts.mutations.is_empty() {
        let to = if facts.expected_targets.is_empty() {
            String::new()
        } else {
            format!(" to {}", facts.expected_targets.join(", "))
        };
        format!("the request asked for a change{to}, and the model proposed none")
    } else {
        "no change the model proposed was made".to_string()
    };
    format!(
        "[Truth check: Nothing was changed: {why}. The model's claim that it changed a file was removed.]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_names_the_reading_or_what_stopped_the_change() {
        let question = TurnFacts {
            reading: "a question about config.py".into(),
            ..TurnFacts::default()
        };
        let not_proposed = TurnFacts {
            mutation_requested: true,
            mutation_allowed: true,
            expected_targets: vec!["settings.py".into()],
            ..TurnFacts::default()
        };
        let read_only = TurnFacts {
            mutation_requested: true,
            ..TurnFacts::default()
        };
        let rows = [
            (
                question,
                "Nothing was changed: the request was read as a question about config.py.",
            ),
            (
                not_proposed,
                "Nothing was changed: the request asked for a change to settings.py, and the model proposed none.",
            ),
            (
                read_only,
                "Nothing was changed: this turn could not change files.",
            ),
        ];
        for (facts, says) in rows {
            assert!(nothing_changed(&facts).contains(says), "{facts:?}");
        }
    }
}

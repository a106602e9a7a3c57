//! The two readings of an uncertain request, in the words the person is shown: the question
//! the daemon asks before the model is called ("Change config.py?" / "Only answer a question"),
//! and, when nobody can answer it, the turn's answer naming both ("… could mean: change
//! config.py, or only answer a question about it; say which"). Never a guess: the texts only
//! name what [`super::with_files`] found uncertain.

use super::{Reading, TaskContract};

/// The two readings of an uncertain request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readings {
    /// The existing files a change reading would change.
    pub targets: Vec<String>,
    /// The change reading as a question: `Change config.py?`.
    pub change: String,
    /// The question reading: `Only answer a question`.
    pub question: String,
    /// The answer of a turn that could not ask: both readings, and what to do.
    pub ambiguous: String,
}

/// The question reading's words, the same for every request.
pub const ONLY_A_QUESTION: &str = "Only answer a question";

/// The two readings, when the contract's reading is uncertain.
pub fn readings(contract: &TaskContract) -> Option<Readings> {
    let Reading::Uncertain { targets } = &contract.reading else {
        return None;
    };
    let named = joined(targets);
    let them = if targets.len() == 1 { "it" } else { "them" };
    Some(Readings {
        targets: targets.clone(),
        change: format!("Change {named}?"),
        question: ONLY_A_QUESTION.to_string(),
        ambiguous: format!(
            "This request could mean: change {named}, or only answer a question about {them}; say which. Nothing was changed and the model was not asked: ask again as a change (\"Change {first} so that ...\") or as a question (\"What does {first} ...?\").",
            first = targets.first().map_or("the file", String::as_str),
        ),
    })
}

/// `a`, `a and b`, `a, b and c`.
fn joined(names: &[String]) -> String {
    match names {
        [] => "the named files".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::contract::resolve;

    fn uncertain(targets: &[&str]) -> TaskContract {
        TaskContract {
            reading: Reading::Uncertain {
                targets: targets.iter().map(|t| t.to_string()).collect(),
            },
            ..resolve("What is in config.py?")
        }
    }

    /// Proves the readings name every target, and that a settled contract has none.
    #[test]
    fn the_readings_name_the_targets_rows() {
        for (targets, change, ambiguous_starts) in [
            (
                vec!["config.py"],
                "Change config.py?",
                "This request could mean: change config.py, or only answer a question about it; say which.",
            ),
            (
                vec!["a.py", "b.py", "c.py"],
                "Change a.py, b.py and c.py?",
                "This request could mean: change a.py, b.py and c.py, or only answer a question about them; say which.",
            ),
        ] {
            let got = readings(&uncertain(&targets)).unwrap();
            assert_eq!(got.change, change);
            assert_eq!(got.question, ONLY_A_QUESTION);
            assert!(
                got.ambiguous.starts_with(ambiguous_starts),
                "{}",
                got.ambiguous
            );
        }
        assert_eq!(readings(&resolve("What is in config.py?")), None);
    }
}

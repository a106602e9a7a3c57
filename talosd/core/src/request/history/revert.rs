//! Revert follow-ups ("change it back", "put it back", "undo that", "restore the old value"),
//! resolved from the session's records and never from the words around them. The change they
//! undo is the latest remembered turn that changed a file. Where its records hold the
//! replacement it made (a verified "from A to B" on one file), the follow-up is that replacement
//! the other way round on that file, pinned like any from/to replacement; where they hold only
//! the files, it is a checkpoint restore, answered with the commands that do it; where the
//! session's records hold no change at all, the turn says so instead of guessing a target.

use super::{PriorTurn, replacement_made};
use crate::request::contract::{
    Reason, TaskContract, TaskType, reversed_replacement, with_replacement_values,
};
use crate::request::intent::{TargetRef, TargetRole, TargetSource, merge};

/// Words a follow-up may open with before its verb ("now", "ok so", "can you please").
#[rustfmt::skip]
const LEADING: &[&str] = &[
    "now", "please", "ok", "okay", "and", "then", "so", "alright", "actually", "oh", "oops",
    "hmm", "great", "thanks", "well", "right", "sorry", "hey", "just", "can", "could", "would",
    "will", "you", "talos", "kindly", "let's", "lets", "i", "want", "need", "to", "go",
    "ahead",
];

/// Words a follow-up may close with ("please", "for me", "again").
const TRAILING: &[&str] = &[
    "please", "thanks", "again", "now", "then", "for", "me", "pls",
];

/// Verbs of "<verb> it back".
#[rustfmt::skip]
const BACK_VERBS: &[&str] = &[
    "change", "put", "set", "switch", "turn", "move", "flip", "bring", "revert", "roll", "make",
];

/// Verbs that undo by themselves ("undo that", "revert it").
const UNDO_VERBS: &[&str] = &["revert", "undo", "reverse", "rollback", "restore"];

/// What "undo" may name: the change itself, not a file or a thing of the person's.
#[rustfmt::skip]
const UNDONE: &[&str] = &[
    "it", "that", "this", "them", "those", "these", "the", "your", "my", "last",
    "previous", "latest", "change", "changes", "edit", "edits", "what", "you", "just", "did",
    "made", "changed", "turn", "step", "value", "values", "old", "original", "version", "one",
    "setting", "settings", "before", "was", "how", "way", "it's", "to", "back", "as",
];

/// The old state, as people name it ("the old value", "what it was before").
#[rustfmt::skip]
const OLD_STATE: &[&[&str]] = &[
    &["the", "old", "value"], &["the", "old", "values"], &["the", "previous", "value"],
    &["the", "previous", "values"], &["the", "original", "value"], &["the", "original", "values"],
    &["the", "old", "version"], &["the", "previous", "version"], &["the", "original", "version"],
    &["the", "original"], &["the", "old", "one"], &["the", "old", "setting"],
    &["the", "old", "settings"], &["what", "it", "was"], &["what", "it", "was", "before"],
    &["how", "it", "was"], &["how", "it", "was", "before"], &["the", "way", "it", "was"],
    &["the", "way", "it", "was", "before"], &["before"], &["as", "it", "was"],
    &["as", "before"], &["like", "before"], &["like", "it", "was"], &["it", "was"],
];

/// A revert the person asked for: with the value they named ("change it back to 30"), if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Asked {
    pub value: Option<String>,
}

/// Whether the request asks to undo the last change, read from its words alone.
pub(crate) fn asked(request: &str) -> Option<Asked> {
    let words: Vec<String> = request
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_')))
        .map(|w| w.replace('\u{2019}', "'"))
        .filter(|w| !w.is_empty())
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let start = lower.iter().position(|w| !LEADING.contains(&w.as_str()))?;
    let mut end = lower.len();
    while end > start && TRAILING.contains(&lower[end - 1].as_str()) {
        end -= 1;
    }
    let said: Vec<&str> = lower[start..end].iter().map(String::as_str).collect();
    let original: Vec<&str> = words[start..end].iter().map(String::as_str).collect();
    back(&said, &original)
        .or_else(|| undo(&said))
        .or_else(|| restore(&said))
}

/// A revert follow-up resolved from the records, or `None` when the request is not one.
/// `current` is the request resolved on its own: a checkpoint restore asked in words
/// ("undo your last change") is a revert too, and what it forbids still holds.
pub(super) fn resolve(
    history: &[PriorTurn],
    request: &str,
    current: &TaskContract,
) -> Option<TaskContract> {
    let restore_asked = current.task_type == TaskType::CheckpointRestore;
    let asked = match asked(request) {
        Some(asked) => asked,
        None if restore_asked => Asked { value: None },
        None => return None,
    };
    let Some(last) = history.iter().rev().find(|t| !t.changed.is_empty()) else {
        // With nothing recorded, a restore asked in words keeps its answer (the commands).
        return (!restore_asked).then(|| {
            plain(
                TaskType::CheckpointRestore,
                request,
                Reason::NothingToRevert,
            )
        });
    };
    let named: Vec<&str> = current
        .roleful_targets
        .iter()
        .filter(|t| t.role != TargetRole::Forbidden)
        .map(|t| t.path.as_str())
        .collect();
    let reversed = replacement_made(last)
        .filter(|change| named.is_empty() || named.contains(&change.target.as_str()))
        .and_then(|change| {
            let kernel = kernel(&last.contract.original_request);
            let text = match &asked.value {
                Some(value) => with_replacement_values(kernel, &change.to, value),
                None => reversed_replacement(kernel),
            }?;
            Some((change.target, text))
        });
    let Some((target, text)) = reversed else {
        return Some(plain(
            TaskType::CheckpointRestore,
            request,
            Reason::CheckpointRestore,
        ));
    };
    let recorded = TargetRef {
        path: target,
        role: TargetRole::MustMutate,
        source: TargetSource::MessageHistory,
        reason: "recorded-change",
    };
    let forbidden_now = current
        .roleful_targets
        .iter()
        .filter(|t| t.role == TargetRole::Forbidden)
        .cloned();
    let targets = merge(std::iter::once(recorded).chain(forbidden_now));
    let original = format!("{text}\n\nRevert follow-up: {}", request.trim());
    Some(TaskContract::compiled(
        TaskType::FileEdit,
        true,
        original,
        Reason::RevertInherited,
        Vec::new(),
        targets,
    ))
}

/// A contract with no target and no change.
fn plain(task_type: TaskType, request: &str, reason: Reason) -> TaskContract {
    TaskContract::compiled(
        task_type,
        false,
        request.to_string(),
        reason,
        Vec::new(),
        Vec::new(),
    )
}

/// The request an inherited contract continues, without its follow-ups
/// ("…\n\nConfirmation follow-up: yes").
fn kernel(original: &str) -> &str {
    let mut at = 0;
    while let Some(found) = original[at..].find("\n\n") {
        let start = at + found;
        let next = &original[start + 2..];
        let marker = next.split_once(' ').is_some_and(|(kind, rest)| {
            kind.chars().all(char::is_alphabetic) && rest.starts_with("follow-up: ")
        });
        if marker {
            return &original[..start];
        }
        at = start + 2;
    }
    original
}

/// "<verb> <it|that|TIMEOUT|settings.py …> back [to <value>|to what it was]".
fn back(said: &[&str], original: &[&str]) -> Option<Asked> {
    let verb = *said.first()?;
    if !BACK_VERBS.contains(&verb) {
        return None;
    }
    let back_at = said.iter().position(|w| *w == "back")?;
    // The thing put back: one to four words, or none ("roll back", "change back").
    if back_at > 5 || said[1..back_at].iter().any(|w| UNDO_VERBS.contains(w)) {
        return None;
    }
    let tail = &said[back_at + 1..];
    match tail {
        [] => Some(Asked { value: None }),
        ["to", rest @ ..] if OLD_STATE.contains(&rest) => Some(Asked { value: None }),
        ["to", _] => Some(Asked {
            value: Some(original[back_at + 2].to_string()),
        }),
        rest if OLD_STATE.contains(&rest) => Some(Asked { value: None }),
        _ => None,
    }
}

/// "undo that", "revert it", "reverse the last change", "undo what you just did", "undo".
fn undo(said: &[&str]) -> Option<Asked> {
    let (verb, rest) = said.split_first()?;
    let verb_rest = if *verb == "roll" && rest.first() == Some(&"back") {
        &rest[1..]
    } else if UNDO_VERBS.contains(verb) && *verb != "restore" {
        rest
    } else {
        return None;
    };
    (verb_rest.len() <= 5 && verb_rest.iter().all(|w| UNDONE.contains(w)))
        .then_some(Asked { value: None })
}

/// "restore the old value", "go back to what it was", "back to the original", "set it to the
/// old value", "restore it".
fn restore(said: &[&str]) -> Option<Asked> {
    let old = |rest: &[&str]| OLD_STATE.contains(&rest);
    let hit = match said {
        ["restore", "it" | "that" | "this" | "them"] => true,
        ["restore", rest @ ..] | ["go", "back", "to", rest @ ..] | ["back", "to", rest @ ..] => {
            old(rest)
        }
        [verb, _, "to", rest @ ..] | [verb, _, _, "to", rest @ ..] if BACK_VERBS.contains(verb) => {
            old(rest)
        }
        _ => false,
    };
    hit.then_some(Asked { value: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row: the request, and the revert it asks for (`None`: not a revert).
    fn check(request: &str, expected: Option<Option<&str>>) {
        let asked = asked(request).map(|a| a.value);
        assert_eq!(
            asked,
            expected.map(|v| v.map(str::to_string)),
            "{request:?}"
        );
    }

    /// Proves the revert words are read as a family and ordinary requests are not.
    #[test]
    fn revert_words() {
        for request in [
            "change it back",
            "Now change it back.",
            "now, change it back please",
            "Can you put it back?",
            "put that back",
            "set it back",
            "switch it back to what it was",
            "change TIMEOUT back",
            "change the timeout back to the old value",
            "revert that",
            "Revert it.",
            "undo that",
            "Undo.",
            "undo the last change",
            "undo what you just did",
            "roll it back",
            "roll back",
            "reverse that change",
            "restore the old value",
            "Restore the original value!",
            "go back to the previous value",
            "set it to the old value",
            "change it to what it was before",
            "ok, restore it",
        ] {
            check(request, Some(None));
        }
        check("change it back to 30", Some(Some("30")));
        check("Set TIMEOUT back to 45.", Some(Some("45")));
        for request in [
            "change the title back and forth in index.html",
            "put the button back on the left in index.html",
            "undo the changes in my notes.md",
            "restore the database from backup.sql",
            "how do I undo that?",
            "what did you change?",
            "change TIMEOUT from 30 to 60",
            "go ahead",
            "back up settings.py",
            "",
            ",",
        ] {
            check(request, None);
        }
    }

    /// Proves the inherited request is found under its follow-ups.
    #[test]
    fn kernel_rows() {
        assert_eq!(kernel("change X from 1 to 2"), "change X from 1 to 2");
        assert_eq!(
            kernel(
                "change X from 1 to 2\n\nRevert follow-up: change it back\n\nConfirmation follow-up: yes"
            ),
            "change X from 1 to 2"
        );
        assert_eq!(
            kernel("first\n\nsecond paragraph"),
            "first\n\nsecond paragraph"
        );
    }
}

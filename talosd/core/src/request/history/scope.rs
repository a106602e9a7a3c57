//! Which earlier turns a question about the session's changes asks about: "what did you
//! change" is the last turn; "in the last two turns" is two; "so far", "today", "in this
//! session" and "everything you changed" are every turn the session remembers. The session's
//! records carry no clock, so "today" is read as the session.

/// The turns a changes question names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeScope {
    /// The last `n` remembered turns (at least one).
    LastTurns(usize),
    /// Every turn the session remembers.
    Session,
}

/// Words that name the whole session.
#[rustfmt::skip]
const SESSION: &[&str] = &[
    "so far", "today", "this session", "the session", "since we started", "since the start",
    "since the beginning", "everything you", "all the changes", "all your changes", "all changes",
    "all the files", "all files", "all of the files", "all of your changes", "in total",
    "altogether", "overall", "until now", "up to now", "till now",
];

/// The nouns a count of turns is said in ("the last two turns", "your last 3 edits").
#[rustfmt::skip]
const TURN_NOUNS: &[&str] = &[
    "turn", "turns", "request", "requests", "message", "messages", "step", "steps", "change",
    "changes", "edit", "edits", "prompt", "prompts", "task", "tasks",
];

const NUMBERS: &[(&str, usize)] = &[
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("couple", 2),
    ("few", 3),
];

/// The turns the request asks about; the last turn when it names none.
pub fn changes_scope(request: &str) -> ChangeScope {
    let lower = request.to_lowercase().replace('\u{2019}', "'");
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let joined = format!(" {} ", words.join(" "));
    if SESSION.iter().any(|m| joined.contains(&format!(" {m} "))) {
        return ChangeScope::Session;
    }
    for (k, word) in words.iter().enumerate() {
        if !matches!(*word, "last" | "past" | "previous" | "recent") {
            continue;
        }
        // "the last two turns", "the last couple of turns", "the past 3 requests"
        let mut at = k + 1;
        let count = count_of(words.get(at).copied().unwrap_or(""));
        if count.is_some() {
            at += 1;
            if words.get(at) == Some(&"of") {
                at += 1;
            }
        }
        if words.get(at).is_some_and(|w| TURN_NOUNS.contains(w)) {
            return ChangeScope::LastTurns(count.unwrap_or(1).max(1));
        }
    }
    ChangeScope::LastTurns(1)
}

/// A count as a digit or a word.
fn count_of(word: &str) -> Option<usize> {
    word.parse::<usize>().ok().or_else(|| {
        NUMBERS
            .iter()
            .find(|(name, _)| *name == word)
            .map(|(_, n)| *n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(request: &str, expected: ChangeScope) {
        assert_eq!(changes_scope(request), expected, "{request:?}");
    }

    /// Proves each way of naming turns gives its count, and no count gives the last turn.
    #[test]
    fn scope_rows() {
        use ChangeScope::{LastTurns, Session};
        check("What did you change in the last two turns?", LastTurns(2));
        check("what did you change in the last 3 turns", LastTurns(3));
        check(
            "which files did you touch in the past couple of requests",
            LastTurns(2),
        );
        check(
            "What have you changed in your last few edits?",
            LastTurns(3),
        );
        check("what did you change in the last turn?", LastTurns(1));
        check("What did you change?", LastTurns(1));
        check("what did you change so far?", Session);
        check("What did you change today", Session);
        check("which files did you touch in this session?", Session);
        check("show me everything you changed", Session);
        check("list all your changes", Session);
        check("what did you change in the last 0 turns", LastTurns(1));
    }
}

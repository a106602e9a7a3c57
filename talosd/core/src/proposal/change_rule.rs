//! What a change must put in place, from the plan's expectations (issue 24): one place for the
//! decoding constraint (which admits only new text that passes) and the verifier's literal
//! check after the write (which says when a change did not do what the request said).
//!
//! - "change TIMEOUT from 30 to 60": a [`ChangeRule::Replace`]. An edit's `old_string` is a
//!   line holding `30` as a word, and its `new_string` is that line with `30` replaced by `60`;
//!   after the write the file holds `60` where it held `30`.
//! - "Overwrite notes.txt with exactly: hello": a [`ChangeRule::Exact`]: the written bytes are
//!   the literal (the write flow corrects them; the constraint offers only the literal).

use crate::planning::plan::{Expectation, TurnPlan};

/// A rule for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeRule {
    Replace {
        target: String,
        from: String,
        to: String,
    },
    Exact {
        target: String,
        content: String,
    },
}

impl ChangeRule {
    pub fn target(&self) -> &str {
        match self {
            ChangeRule::Replace { target, .. } | ChangeRule::Exact { target, .. } => target,
        }
    }

    /// What the request asked of the target, as the approval and the answer say it ("replace
    /// 30 with 60 in settings.py").
    pub fn asked(&self) -> String {
        match self {
            ChangeRule::Replace { target, from, to } => {
                format!("replace {from} with {to} in {target}")
            }
            ChangeRule::Exact { target, .. } => format!("give {target} exactly the stated content"),
        }
    }

    /// What [`check`] found when it held, for the trace's verification ("settings.py has 30
    /// replaced by 60"): "verified" names what was checked.
    pub fn held(&self) -> String {
        match self {
            ChangeRule::Replace { target, from, to } => {
                format!("{target} has {from} replaced by {to}")
            }
            ChangeRule::Exact { target, .. } => {
                format!("{target} holds exactly the requested text")
            }
        }
    }

    /// Whether the rule asks for a small change of an existing file, so a whole-file write of
    /// it is refused before approval (an exact literal is a whole-file write by design).
    pub fn small_change(&self) -> bool {
        match self {
            ChangeRule::Replace { .. } => true,
            ChangeRule::Exact { .. } => false,
        }
    }
}

/// The rules the plan's expectations hold.
pub fn rules(plan: &TurnPlan) -> Vec<ChangeRule> {
    plan.expectations()
        .iter()
        .filter_map(|e| match e {
            Expectation::Replacement { target, from, to } => Some(ChangeRule::Replace {
                target: target.clone(),
                from: from.clone(),
                to: to.clone(),
            }),
            Expectation::ExactContent { target, content } => Some(ChangeRule::Exact {
                target: target.clone(),
                content: content.clone(),
            }),
            Expectation::MustChange { .. } => None,
        })
        .collect()
}

/// The rule for `target`, if any.
pub fn rule_for<'a>(rules: &'a [ChangeRule], target: &str) -> Option<&'a ChangeRule> {
    rules.iter().find(|r| r.target() == target)
}

/// Every edit of `text` a [`ChangeRule::Replace`] admits: each line holding `from` as a word
/// (once in the file, so the edit applies), paired with that line where every such `from` is
/// `to`. Lines first to last.
pub fn replacements(text: &str, from: &str, to: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || word_positions(line, from).is_empty() {
            continue;
        }
        if text.matches(line).count() != 1 || out.iter().any(|(old, _)| old == line) {
            continue;
        }
        out.push((line.to_string(), replace_words(line, from, to)));
    }
    out
}

/// The edits a rule admits for `text` (empty for an exact literal).
pub fn replacements_of(rule: &ChangeRule, text: &str) -> Vec<(String, String)> {
    match rule {
        ChangeRule::Replace { from, to, .. } => replacements(text, from, to),
        ChangeRule::Exact { .. } => Vec::new(),
    }
}

/// The verifier's literal check of a written file: `None` when it holds what the rule asks,
/// else what is wrong, in one sentence.
pub fn check(rule: &ChangeRule, before: Option<&str>, after: &str) -> Option<String> {
    match rule {
        ChangeRule::Replace { target, from, to } => {
            let count = |text: &str, word: &str| word_positions(text, word).len();
            let before = before.unwrap_or("");
            // Where the file held the old value, fewer of it must remain; the new value must
            // be there more often than before (a file that never held the old value, as a
            // stale request may say, needs only the new one).
            let held = count(before, from) > 0;
            let replaced = (!held || count(after, from) < count(before, from))
                && count(after, to) > count(before, to);
            (!replaced).then(|| format!("{target} does not have {from} replaced by {to}"))
        }
        ChangeRule::Exact { target, content } => {
            (after != content).then(|| format!("{target} does not hold exactly the requested text"))
        }
    }
}

/// Byte offsets where `word` occurs in `text` with no word character right before or after
/// (a value like `30` inside `300` is not it). Empty `word`: none.
fn word_positions(text: &str, word: &str) -> Vec<usize> {
    if word.is_empty() {
        return Vec::new();
    }
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let starts_word = is_word(word.chars().next());
    let ends_word = is_word(word.chars().last());
    text.match_indices(word)
        .map(|(at, _)| at)
        .filter(|&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            let joined_before = starts_word && is_word(before);
            let joined_after = ends_word && is_word(after);
            !(joined_before || joined_after)
        })
        .collect()
}

fn replace_words(line: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut last = 0;
    for at in word_positions(line, from) {
        out.push_str(&line[last..at]);
        out.push_str(to);
        last = at + from.len();
    }
    out.push_str(&line[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_are_the_lines_holding_the_old_value_as_a_word() {
        let rows: [(&str, &str, &str, &[(&str, &str)]); 5] = [
            (
                "TIMEOUT = 30\nRETRIES = 3\n",
                "30",
                "60",
                &[("TIMEOUT = 30", "TIMEOUT = 60")],
            ),
            ("x = 300\ny = 30\n", "30", "60", &[("y = 30", "y = 60")]),
            (
                "<title>Home</title>\n<h1>Home</h1>\n",
                "Home",
                "Welcome",
                &[
                    ("<title>Home</title>", "<title>Welcome</title>"),
                    ("<h1>Home</h1>", "<h1>Welcome</h1>"),
                ],
            ),
            ("a = 1\na = 1\n", "1", "2", &[]),
            (
                "v = 1.0.0 # 1.0.0\n",
                "1.0.0",
                "1.1.0",
                &[("v = 1.0.0 # 1.0.0", "v = 1.1.0 # 1.1.0")],
            ),
        ];
        for (text, from, to, expected) in rows {
            let got = replacements(text, from, to);
            let expected: Vec<(String, String)> = expected
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(got, expected, "{text:?}: {from} -> {to}");
        }
    }

    #[test]
    fn the_literal_check_asks_for_the_replacement_made() {
        let rule = ChangeRule::Replace {
            target: "settings.py".into(),
            from: "30".into(),
            to: "60".into(),
        };
        let before = Some("TIMEOUT = 30\nRETRIES = 3\n");
        assert_eq!(check(&rule, before, "TIMEOUT = 60\nRETRIES = 3\n"), None);
        assert_eq!(
            check(&rule, before, "RETRIES = 30, TIMEOUT = 60\nRETRIES = 3\n"),
            Some("settings.py does not have 30 replaced by 60".into())
        );
        assert!(check(&rule, before, "TIMEOUT = 600\nRETRIES = 3\n").is_some());
        // The file never held 30 (the request was stale): the new value is enough.
        assert_eq!(check(&rule, Some("TIMEOUT = 45\n"), "TIMEOUT = 60\n"), None);
        let exact = ChangeRule::Exact {
            target: "n.txt".into(),
            content: "hi\n".into(),
        };
        assert_eq!(check(&exact, None, "hi\n"), None);
        assert!(check(&exact, None, "hi").is_some());
    }
}

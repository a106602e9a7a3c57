//! What a change must put in place, from the plan's expectations: one place for the decoding
//! constraint (which admits only the edits that do it) and the verifier's check after the
//! write (which says when a change did not do what the request said). Each rule is the
//! request's [`ChangeAsk`] for one target:
//!
//! - "change TIMEOUT from 30 to 60" (`Replace`): an edit's `old_string` is a line holding `30`
//!   as a word (a line naming TIMEOUT when the request names the key), and its `new_string`
//!   is that line with `30` replaced by `60`;
//! - "set TIMEOUT to 60", "turn DEBUG off" (`SetKey`): the line assigning the key, with its
//!   value replaced in the file's own spelling (`crate::text::assignment`);
//! - "rename the function add to sum" (`RenameSymbol`): each line holding `add` as a word,
//!   with every such word replaced;
//! - "Overwrite notes.txt with exactly: hello", "Create VERSION containing 2.0.0"
//!   (`Content`): the written bytes are the literal (the write flow corrects them).
//!
//! After the write, the file must be the file before with the asked change made and nothing
//! else: a change of a line the request did not name is never verified.

use crate::planning::plan::{Expectation, TurnPlan};
use crate::request::change::ChangeAsk;
use crate::text::assignment;

/// A rule for one target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeRule {
    pub target: String,
    pub ask: ChangeAsk,
}

impl ChangeRule {
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether the rule is a whole file's content (a write), not a change of some lines.
    pub fn is_content(&self) -> bool {
        matches!(self.ask, ChangeAsk::Content { .. })
    }

    /// What the request asked of the target, as the approval and the answer say it ("change
    /// TIMEOUT from 30 to 60 in settings.py").
    pub fn asked(&self) -> String {
        match &self.ask {
            ChangeAsk::Content { .. } => format!("give {} exactly the stated content", self.target),
            ask => format!("{} in {}", ask.describe(), self.target),
        }
    }

    /// What [`check`] found when it held, for the trace's verification ("settings.py has 30
    /// replaced by 60"): "verified" names what was checked.
    pub fn held(&self) -> String {
        let target = &self.target;
        match &self.ask {
            ChangeAsk::Replace { from, to, .. } => format!("{target} has {from} replaced by {to}"),
            ChangeAsk::SetKey { key, value } => format!("{key} in {target} holds {value}"),
            ChangeAsk::RenameSymbol { from, to } => {
                format!("{target} holds {to} and no {from}")
            }
            ChangeAsk::Content { .. } => format!("{target} holds exactly the requested text"),
            ChangeAsk::CommentOut { needle } => {
                format!("the line with {needle} in {target} is commented out")
            }
            ChangeAsk::Uncomment { needle } => {
                format!("the line with {needle} in {target} is back in")
            }
            ChangeAsk::RemoveLine { needle } => {
                format!("the line with {needle} is gone from {target}")
            }
        }
    }

    /// Whether the rule asks for a small change of an existing file, so a whole-file write of
    /// it is refused before approval (an exact literal is a whole-file write by design).
    pub fn small_change(&self) -> bool {
        !self.is_content()
    }
}

/// The rules the plan's expectations hold.
pub fn rules(plan: &TurnPlan) -> Vec<ChangeRule> {
    plan.expectations()
        .iter()
        .filter_map(|e| match e {
            Expectation::Change { target, ask } => Some(ChangeRule {
                target: target.clone(),
                ask: ask.clone(),
            }),
            Expectation::ExactContent { target, content } => Some(ChangeRule {
                target: target.clone(),
                ask: ChangeAsk::Content {
                    content: content.clone(),
                },
            }),
            Expectation::MustChange { .. } => None,
        })
        .collect()
}

/// The rule for `target`, if any.
pub fn rule_for<'a>(rules: &'a [ChangeRule], target: &str) -> Option<&'a ChangeRule> {
    rules.iter().find(|r| r.target() == target)
}

/// Every edit of `text` a `Replace` admits: each line holding `from` as a word (once in the
/// file, so the edit applies), paired with that line where every such `from` is `to`. With a
/// key the request named, only the lines naming it, when any does. Lines first to last.
pub fn replacements(text: &str, from: &str, to: &str, key: Option<&str>) -> Vec<(String, String)> {
    let all = word_lines(text, from, |line| replace_words(line, from, to));
    match key {
        Some(key) => {
            let named: Vec<(String, String)> = all
                .iter()
                .filter(|(old, _)| assignment::names_key(old, key))
                .cloned()
                .collect();
            if named.is_empty() { all } else { named }
        }
        None => all,
    }
}

/// The edits a rule admits for `text` (empty for a whole file's content).
pub fn replacements_of(rule: &ChangeRule, text: &str) -> Vec<(String, String)> {
    match &rule.ask {
        ChangeAsk::Replace { from, to, key } => replacements(text, from, to, key.as_deref()),
        ChangeAsk::SetKey { key, value } => assignment::assignments(text, key)
            .into_iter()
            .map(|a| {
                let new = a.with_value(value);
                (a.line, new)
            })
            .filter(|(old, new)| old != new && text.matches(old.as_str()).count() == 1)
            .collect(),
        ChangeAsk::RenameSymbol { from, to } => {
            word_lines(text, from, |line| replace_words(line, from, to))
        }
        ChangeAsk::CommentOut { needle } => {
            let (open, close) = comment_marker(&rule.target);
            word_lines(text, needle, |line| {
                let body = line.trim_start();
                let indent = &line[..line.len() - body.len()];
                format!("{indent}{open}{body}{close}")
            })
            .into_iter()
            .filter(|(old, _)| !old.trim_start().starts_with(open.trim_end()))
            .collect()
        }
        ChangeAsk::Uncomment { needle } => {
            let (open, close) = comment_marker(&rule.target);
            word_lines(text, needle, |line| {
                let body = line.trim_start();
                let indent = &line[..line.len() - body.len()];
                let inner = body
                    .strip_prefix(open)
                    .or_else(|| body.strip_prefix(open.trim_end()))
                    .unwrap_or(body);
                let inner = inner
                    .strip_suffix(close)
                    .or_else(|| inner.strip_suffix(close.trim_start()))
                    .unwrap_or(inner);
                format!("{indent}{inner}")
            })
            .into_iter()
            .filter(|(old, _)| old.trim_start().starts_with(open.trim_end()))
            .collect()
        }
        ChangeAsk::RemoveLine { needle } => word_lines(text, needle, |_| String::new())
            .into_iter()
            .map(|(old, _)| (format!("{old}\n"), String::new()))
            .filter(|(old, _)| text.matches(old.as_str()).count() == 1)
            .collect(),
        ChangeAsk::Content { .. } => Vec::new(),
    }
}

/// The comment marker of a file by its name: `# ` for Python, shell, YAML, TOML, Makefiles
/// and the like, `// ` for the C family, JavaScript, Rust, Go and Java, `-- ` for SQL and
/// Lua, and a pair for CSS and markup.
fn comment_marker(target: &str) -> (&'static str, &'static str) {
    let name = target.rsplit('/').next().unwrap_or(target);
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "rs" | "c" | "h" | "cpp" | "hpp" | "cc"
        | "go" | "java" | "kt" | "kts" | "swift" | "cs" | "scss" | "php" | "dart" | "scala"
        | "gradle" => ("// ", ""),
        "sql" | "lua" | "hs" => ("-- ", ""),
        "css" => ("/* ", " */"),
        "html" | "htm" | "xml" | "md" | "vue" | "svg" => ("<!-- ", " -->"),
        "ini" => ("; ", ""),
        _ => ("# ", ""),
    }
}

/// The verifier's check of a written file: `None` when it holds what the rule asks, else what
/// is wrong, in one sentence.
pub fn check(rule: &ChangeRule, before: Option<&str>, after: &str) -> Option<String> {
    let target = &rule.target;
    let before = before.unwrap_or("");
    match &rule.ask {
        ChangeAsk::Content { content } => (trim_end(after) != trim_end(content))
            .then(|| format!("{target} does not hold exactly the requested text")),
        ChangeAsk::Replace { from, to, .. } => {
            let pairs = replacements_of(rule, before);
            if pairs.is_empty() {
                return stale_replacement(target, before, after, from, to);
            }
            one_of(target, &pairs, before, after, from).map(|problem| {
                problem.unwrap_or_else(|| format!("{target} does not have {from} replaced by {to}"))
            })
        }
        ChangeAsk::SetKey { key, value } => check_set(target, key, value, before, after),
        ChangeAsk::CommentOut { needle }
        | ChangeAsk::Uncomment { needle }
        | ChangeAsk::RemoveLine { needle } => {
            let pairs = replacements_of(rule, before);
            if pairs.is_empty() {
                return Some(format!("{target} had no line with {needle} to change"));
            }
            one_of(target, &pairs, before, after, needle).map(|problem| {
                problem.unwrap_or_else(|| {
                    format!("{target} was not changed as asked: {}", rule.ask.describe())
                })
            })
        }
        ChangeAsk::RenameSymbol { from, to } => {
            if word_positions(before, from).is_empty() {
                return Some(format!("{target} did not hold {from} before the change"));
            }
            if trim_end(after) == trim_end(&replace_words(before, from, to)) {
                return None;
            }
            let left = after
                .split('\n')
                .filter(|l| !word_positions(l, from).is_empty())
                .count();
            Some(if left > 0 {
                format!("{target} still holds {from} on {left} line(s)")
            } else {
                format!("{target} was changed beyond renaming {from} to {to}")
            })
        }
    }
}

/// `None` when `after` is `before` with exactly one of `pairs` made and the choice was the
/// request's; `Some(Some(why))` when it is one of them but several lines could have been
/// meant; `Some(None)` when it is none of them.
fn one_of(
    target: &str,
    pairs: &[(String, String)],
    before: &str,
    after: &str,
    from: &str,
) -> Option<Option<String>> {
    let made = pairs
        .iter()
        .any(|(old, new)| trim_end(&before.replacen(old.as_str(), new, 1)) == trim_end(after));
    match (made, pairs.len()) {
        (true, 1) => None,
        (true, n) => Some(Some(format!(
            "{from} was on {n} lines of {target} and the request did not say which one to change"
        ))),
        (false, _) => Some(None),
    }
}

/// A replacement whose old value the file never held (a stale request): the new value must be
/// there more often than before.
fn stale_replacement(
    target: &str,
    before: &str,
    after: &str,
    from: &str,
    to: &str,
) -> Option<String> {
    let count = |text: &str, word: &str| word_positions(text, word).len();
    let held = count(before, from) > 0;
    let replaced =
        (!held || count(after, from) < count(before, from)) && count(after, to) > count(before, to);
    (!replaced).then(|| format!("{target} does not have {from} replaced by {to}"))
}

/// The key holds the new value on every line assigning it, and every other line is as before.
fn check_set(target: &str, key: &str, value: &str, before: &str, after: &str) -> Option<String> {
    let was = assignment::assignments(before, key);
    let now = assignment::assignments(after, key);
    if was.is_empty() {
        return Some(format!("{target} had no line assigning {key}"));
    }
    if now.is_empty() {
        return Some(format!("{target} no longer assigns {key}"));
    }
    if let Some(wrong) = now
        .iter()
        .find(|a| !assignment::same_value(a.value(), value))
    {
        return Some(format!(
            "{key} in {target} holds {} where the request asked for {value}",
            wrong.value()
        ));
    }
    let others = |text: &str, lines: &[assignment::Assignment]| -> Vec<String> {
        text.split('\n')
            .map(|l| l.trim_end_matches('\r').to_string())
            .filter(|l| !lines.iter().any(|a| &a.line == l))
            .filter(|l| !l.trim().is_empty())
            .collect()
    };
    (others(before, &was) != others(after, &now))
        .then(|| format!("{target} was changed beyond setting {key} to {value}"))
}

/// The lines of `text` holding `word` as a word, each once in the file, paired with `edit` of
/// it. Lines first to last.
fn word_lines(text: &str, word: &str, edit: impl Fn(&str) -> String) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || word_positions(line, word).is_empty() {
            continue;
        }
        if text.matches(line).count() != 1 || out.iter().any(|(old, _)| old == line) {
            continue;
        }
        out.push((line.to_string(), edit(line)));
    }
    out
}

fn trim_end(text: &str) -> &str {
    text.trim_end_matches(['\n', '\r'])
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
mod tests;

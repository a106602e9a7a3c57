//! The model's text cut into sentences, and the sentences that conflict with the records: a
//! claimed change or a claimed success, a clean verdict, a refusal or capability denial. The
//! records decide *whether* the model's text is contradicted; these word lists only pick
//! which sentences to drop, so the rest of the answer reaches the person unchanged.

const CLAIM_MARKERS: &[&str] = &[
    "i have updated",
    "i've updated",
    "i updated",
    "i have edited",
    "i've edited",
    "i edited",
    "i have changed",
    "i've changed",
    "i changed",
    "i have applied",
    "i've applied",
    "i applied",
    "i have written",
    "i've written",
    "i wrote",
    "i have created",
    "i've created",
    "i created",
    "i have modified",
    "i've modified",
    "i modified",
    "i have saved",
    "i've saved",
    "i saved",
    "changes have been applied",
    "changes were applied",
    "the file has been updated",
    "the file has been modified",
    "the file has been edited",
    "the file has been saved",
    "has been updated to",
    "has been modified to",
];
const NO_CHANGE_CONTEXT: &[&str] = &[
    "changed nothing",
    "no changes were",
    "modified zero",
    "did not change",
    "didn't change",
];
/// Words that claim the whole task is finished.
const SUCCESS_WORDS: &[&str] = &["done", "complete", "completed", "finished", "successfully"];
/// Phrases that claim every part was done.
const SUCCESS_PHRASES: &[&str] = &[
    "all three",
    "all two",
    "all four",
    "all files",
    "all the files",
    "all of them",
    "all changes",
    "all the changes",
    "both files",
    "every file",
    "each file",
];
const INCAPABLE: &[&str] = &[
    "i can't create files",
    "i cannot create files",
    "i can't modify files",
    "i cannot modify files",
    "i can't edit files",
    "i cannot edit files",
    "i can't write files",
    "i cannot write files",
    "i don't have access to your",
    "i do not have access to your",
    "i can't access your",
    "i cannot access your",
    "i can't access files",
    "i cannot access files",
    "i can't read files",
    "i cannot read files",
    "i'm unable to access",
    "i am unable to access",
    "unable to modify files",
    "as an ai language model",
    "i don't have the ability to",
    "i do not have the ability to",
];
/// The shape of a refusal, for a turn the records already show as a capability denial.
const REFUSAL_SHAPES: &[&str] = &[
    "i can't",
    "i cannot",
    "i can not",
    "i'm unable",
    "i am unable",
    "i'm not able",
    "i am not able",
    "unable to",
    "i don't have",
    "i do not have",
    "as an ai",
    "i won't",
    "i will not",
    "not possible for me",
];
const CLEAN_VERDICTS: &[&str] = &[
    "no problems",
    "no problem",
    "no issues",
    "no issue",
    "no mismatches",
    "no mismatch",
    "no errors",
    "no bugs",
    "nothing wrong",
    "nothing is wrong",
    "nothing to fix",
    "everything looks fine",
    "everything looks good",
    "everything looks correct",
    "everything is fine",
    "everything is correct",
    "everything is working",
    "all good",
    "looks correct",
    "works correctly",
    "is working now",
    "is working correctly",
    "all selectors match",
    "all ids match",
];
/// A sentence that names a problem is not a clean verdict, whatever else it says.
const PROBLEM_WORDS: &[&str] = &[
    "not",
    "n't",
    "missing",
    "broken",
    "wrong",
    "mismatch",
    "error",
    "fail",
    "fails",
    "bug",
    "problem",
    "issue",
    "undefined",
    "unused",
    "never",
    "typo",
    "incorrect",
    "invalid",
];
/// Words of a favourable verdict, dropped only on a turn whose checks found problems.
const FAVOURABLE_WORDS: &[&str] = &[
    "fine",
    "correct",
    "correctly",
    "good",
    "works",
    "working",
    "consistent",
    "match",
    "matches",
    "properly",
    "valid",
    "ok",
    "okay",
    "great",
    "perfect",
];

/// The text without the sentences `conflicts` picks, and whether any was dropped.
pub fn keep(text: &str, conflicts: impl Fn(&str) -> bool) -> (String, bool) {
    let mut kept = String::new();
    let mut dropped = false;
    for sentence in split(text) {
        if conflicts(sentence) {
            dropped = true;
        } else {
            kept.push_str(sentence);
        }
    }
    (kept.trim().to_string(), dropped)
}

/// Sentences with their trailing whitespace: a sentence ends at `.`, `!` or `?` followed by
/// whitespace, or at a line break. Concatenated they are the text.
pub fn split(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        let ends =
            c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace));
        if !ends {
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some((j, w)) = chars.peek().copied() {
            if !w.is_whitespace() {
                break;
            }
            end = j + w.len_utf8();
            chars.next();
        }
        out.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn lower(text: &str) -> String {
    text.to_lowercase().replace('’', "'")
}

fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect()
}

/// "I have updated X", "the file has been saved", "config.py was changed", "I've renamed it":
/// a past change verb opening the sentence, after "I" or "we" (with "have", "just", ...
/// between), or after "was", "has been", "is now" in a sentence about a file.
pub fn claims_change(text: &str) -> bool {
    let lower = lower(text);
    let claimed = CLAIM_MARKERS.iter().any(|m| lower.contains(m))
        || starts_with_change_verb(&lower)
        || change_verb_after(&lower, SUBJECTS)
        || (about_a_file(text, &lower) && change_verb_after(&lower, PASSIVE))
        || passive_change_to_a_value(&lower);
    claimed && !NO_CHANGE_CONTEXT.iter().any(|m| lower.contains(m))
}

/// Words after which a past change verb is a first-person claim ("I fixed", "we've added").
const SUBJECTS: &[&str] = &["i", "i've", "we", "we've"];
/// Words after which a past change verb is a passive claim ("was changed", "has been
/// updated", "is now fixed"); "is" alone describes code as often as a change.
const PASSIVE: &[&str] = &["was", "were", "been", "now"];
/// Words that may stand between the subject or auxiliary and the verb.
const BETWEEN: &[&str] = &[
    "have",
    "has",
    "just",
    "also",
    "already",
    "now",
    "successfully",
];

/// Whether a word of `lead` is followed, past any of [`BETWEEN`], by a past change verb (or
/// "set", which opening a sentence is an imperative, after a subject a claim).
fn change_verb_after(lower: &str, lead: &[&str]) -> bool {
    let words = words(lower);
    words.iter().enumerate().any(|(i, w)| {
        lead.contains(w)
            && words[i + 1..]
                .iter()
                .find(|next| !BETWEEN.contains(next))
                .is_some_and(|verb| PAST_CHANGE_VERBS.contains(verb) || *verb == "set")
    })
}

/// "The title was changed to Welcome", "the port has been set to 8080": a passive change verb
/// followed by "to" states a new value, whatever holds it.
fn passive_change_to_a_value(lower: &str) -> bool {
    let words = words(lower);
    words.windows(3).enumerate().any(|(i, w)| {
        PASSIVE.contains(&w[0])
            && (PAST_CHANGE_VERBS.contains(&w[1]) || w[1] == "set")
            && w[2] == "to"
            && !words[..i].contains(&"not")
    }) || words.windows(4).any(|w| {
        PASSIVE.contains(&w[0])
            && BETWEEN.contains(&w[1])
            && (PAST_CHANGE_VERBS.contains(&w[2]) || w[2] == "set")
            && w[3] == "to"
    })
}

/// Words that make a passive change the whole of the work ("All requested updates were
/// applied", "every change has been made", "the requested edits were saved").
const WHOLE_WORK: &[&str] = &["all", "every", "everything", "each", "both", "requested"];

/// A passive claim that the whole of the work was done: on a turn the records show partly done
/// or failed, a success claim in all but its words.
fn whole_work_done(lower: &str) -> bool {
    let words = words(lower);
    let whole = words.iter().any(|w| WHOLE_WORK.contains(w));
    let made = words.windows(2).any(|w| {
        PASSIVE.contains(&w[0])
            && (PAST_CHANGE_VERBS.contains(&w[1]) || matches!(w[1], "made" | "verified"))
    }) || words.windows(3).any(|w| {
        PASSIVE.contains(&w[0])
            && BETWEEN.contains(&w[1])
            && (PAST_CHANGE_VERBS.contains(&w[2]) || matches!(w[2], "made" | "verified"))
    });
    whole && made
}

/// A sentence that names a file, or "the file(s)".
fn about_a_file(text: &str, lower: &str) -> bool {
    !file_names(text).is_empty() || lower.contains("the file")
}

/// Words of a bare claim that the work is finished ("Done.", "All done!", "Task completed.").
const DONE_WORDS: &[&str] = &[
    "all",
    "everything",
    "is",
    "it's",
    "it",
    "the",
    "task",
    "now",
    "that's",
    "that",
    "i'm",
    "am",
    "have",
    "has",
    "been",
    "and",
    "changes",
    "change",
    "request",
    "work",
];

/// A sentence that only says the work is done, with nothing else in it: on a turn that
/// changed nothing it is a change claim in all but words.
pub fn claims_done(sentence: &str) -> bool {
    let lower = lower(sentence);
    let words = words(&lower);
    words.iter().any(|w| SUCCESS_WORDS.contains(w))
        && words
            .iter()
            .all(|w| SUCCESS_WORDS.contains(w) || DONE_WORDS.contains(w))
}

/// Past-tense change verbs that open a claim with no subject ("Created the site files.",
/// "Updated settings.py."); words that are also imperatives ("set", "put") are left out.
const PAST_CHANGE_VERBS: &[&str] = &[
    "created",
    "updated",
    "edited",
    "modified",
    "changed",
    "added",
    "wrote",
    "written",
    "fixed",
    "replaced",
    "removed",
    "deleted",
    "renamed",
    "moved",
    "implemented",
    "built",
    "saved",
    "applied",
    "inserted",
    "appended",
    "rewrote",
    "refactored",
    "generated",
    "turned",
    "commented",
    "uncommented",
    "increased",
    "decreased",
    "bumped",
    "enabled",
    "disabled",
];

/// Whether a (lower-cased) sentence starts with a past-tense change verb.
fn starts_with_change_verb(lower: &str) -> bool {
    words(lower)
        .first()
        .is_some_and(|first| PAST_CHANGE_VERBS.contains(first))
}

/// A claimed change, or a claim that the whole task is done ("Done!", "all three files").
pub fn claims_success(sentence: &str) -> bool {
    if claims_change(sentence) {
        return true;
    }
    let lower = lower(sentence);
    let words = words(&lower);
    (SUCCESS_WORDS.iter().any(|w| words.contains(w))
        || SUCCESS_PHRASES.iter().any(|p| lower.contains(p))
        || whole_work_done(&lower))
        && !PROBLEM_WORDS
            .iter()
            .any(|p| words.iter().any(|w| w == p || w.ends_with(p)))
}

/// The model says it cannot do what the turn lets it do (the known phrasings).
pub fn denies_capability(text: &str) -> bool {
    let lower = lower(text);
    INCAPABLE.iter().any(|m| lower.contains(m))
}

/// A refusal-shaped sentence ("I can't ...", "I'm unable to ...").
pub fn refuses(sentence: &str) -> bool {
    let lower = lower(sentence);
    denies_capability(sentence) || REFUSAL_SHAPES.iter().any(|m| lower.contains(m))
}

/// Words that say a thing is there or works.
const PRESENCE: &[&str] = &[
    "is present",
    "are present",
    "exists",
    "exist in",
    "is defined",
    "are defined",
    "is used",
    "is applied",
    "is found",
    "are found",
    "works",
    "is working",
    "is wired",
    "is connected",
    "matches",
    "is in both",
    "is correctly",
];

/// A sentence that says something is there or works, with no negation in it: beside a
/// finding that it is missing or broken, the opposite of the record.
pub fn affirms_presence(sentence: &str) -> bool {
    let lower = lower(sentence);
    let words = words(&lower);
    PRESENCE.iter().any(|p| lower.contains(p))
        && !words.iter().any(|w| {
            matches!(
                *w,
                "not" | "no" | "never" | "missing" | "without" | "nowhere"
            ) || w.ends_with("n't")
        })
}

/// The text gives a clean verdict in the known phrasings: nothing wrong, everything works.
pub fn claims_no_problems(text: &str) -> bool {
    let lower = lower(text);
    CLEAN_VERDICTS.iter().any(|m| lower.contains(m)) || no_problem_of_any_kind(&lower)
}

/// Kinds of fault a clean verdict says there are none of.
const FAULT_NOUNS: &[&str] = &[
    "problems", "problem", "issues", "issue", "errors", "error", "bugs", "bug", "mistakes",
    "defects", "faults",
];

/// "no" followed within a few words by a fault noun, whatever is between ("There are no
/// static HTML, CSS, or JavaScript problems."): a clean verdict however it is worded.
fn no_problem_of_any_kind(lower: &str) -> bool {
    let words = words(lower);
    words.iter().enumerate().any(|(i, w)| {
        *w == "no"
            && words[i + 1..]
                .iter()
                .take(8)
                .any(|next| FAULT_NOUNS.contains(next))
    })
}

/// On a turn whose checks found problems: a sentence with a clean or favourable verdict that
/// names no problem.
pub fn clean_verdict(sentence: &str) -> bool {
    if claims_no_problems(sentence) {
        return true;
    }
    let lower = lower(sentence);
    let words = words(&lower);
    !names_problem(sentence) && FAVOURABLE_WORDS.iter().any(|f| words.contains(f))
}

/// Whether a text names a problem in words ("wrong", "missing", "broken", ...); a sentence
/// that says there is none ("no problems") does not.
pub fn names_problem(text: &str) -> bool {
    if claims_no_problems(text) {
        return false;
    }
    let lower = lower(text);
    let words = words(&lower);
    PROBLEM_WORDS
        .iter()
        .any(|p| words.iter().any(|w| w == p || w.ends_with(p)))
}

/// Words of `text` shaped like file names (a stem and a short alphanumeric extension), by
/// their last path component; URLs are not file names.
pub fn file_names(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| !w.contains("://"))
        .flat_map(|w| w.split(|c: char| ",;:()[]{}<>`\"'*|".contains(c)))
        .map(|w| w.trim_end_matches(['.', '!', '?']).trim_start_matches("./"))
        .filter(|w| {
            let Some((stem, ext)) = w.rsplit_once('.') else {
                return false;
            };
            let stem = stem.rsplit('/').next().unwrap_or(stem);
            (!stem.is_empty() || w.starts_with('.'))
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        })
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_cut_and_picked_by_their_conflict() {
        // (text, which conflict, kept, dropped)
        type Pick = fn(&str) -> bool;
        let rows: Vec<(&str, Pick, &str, bool)> = vec![
            (
                // A sentence that opens with a past-tense change verb is a change claim.
                "Edited settings.py. Done!",
                claims_success,
                "",
                true,
            ),
            (
                "Created the BMI calculator website files. Set the colour later.",
                claims_change,
                "Set the colour later.",
                true,
            ),
            (
                "Update settings.py next. Edit it yourself.",
                claims_change,
                "Update settings.py next. Edit it yourself.",
                false,
            ),
            (
                "All done.\nTIMEOUT is 60.",
                claims_success,
                "TIMEOUT is 60.",
                true,
            ),
            (
                "I could not finish b.txt.",
                claims_success,
                "I could not finish b.txt.",
                false,
            ),
            (
                "All requested updates were applied and verified. TIMEOUT is 60.",
                claims_success,
                "TIMEOUT is 60.",
                true,
            ),
            ("Every change has been made.", claims_success, "", true),
            (
                "The title was changed to Welcome. The page has two headings.",
                claims_change,
                "The page has two headings.",
                true,
            ),
            (
                "The port has now been set to 8080.",
                claims_change,
                "",
                true,
            ),
            (
                // A value the code moves to is a description, not a change.
                "The counter is set to zero on load.",
                claims_change,
                "The counter is set to zero on load.",
                false,
            ),
            (
                "The title was not changed to Welcome.",
                claims_change,
                "The title was not changed to Welcome.",
                false,
            ),
            (
                "Everything looks fine. The #list id is missing.",
                clean_verdict,
                "The #list id is missing.",
                true,
            ),
            ("The page is wired correctly.", clean_verdict, "", true),
            (
                "The button is not working.",
                clean_verdict,
                "The button is not working.",
                false,
            ),
            ("There are no errors at all.", clean_verdict, "", true),
            (
                "Sorry, I can't do that. Here is a list: milk",
                refuses,
                "Here is a list: milk",
                true,
            ),
            ("It sets TIMEOUT.", refuses, "It sets TIMEOUT.", false),
            // Issue 34: a change claim in the shapes people write it, and a bare "Done.".
            (
                "config.py was changed. It is loaded first.",
                claims_change,
                "It is loaded first.",
                true,
            ),
            (
                "I've renamed it. We also set DEBUG off. Bye",
                claims_change,
                "Bye",
                true,
            ),
            (
                "DEBUG is set to True in config.py. It was written in 2019.",
                claims_change,
                "DEBUG is set to True in config.py. It was written in 2019.",
                false,
            ),
            (
                "All done! The loop is finished.",
                claims_done,
                "The loop is finished.",
                true,
            ),
        ];
        for (text, pick, kept, dropped) in rows {
            assert_eq!(keep(text, pick), (kept.to_string(), dropped), "{text:?}");
        }
        assert_eq!(split("a.b c. d"), vec!["a.b c. ", "d"]);
    }
}

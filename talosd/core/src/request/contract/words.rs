//! The words mutation intent is read in: the core and build verbs, determiners, the chatty
//! prefix a request may open with, and whether a target follows a word. A sibling below
//! `mutation`, `questions` and `read_only`, which all test requests with them.

use crate::request::targets::{self, TargetSpan};
use crate::text::lexical::Lex;

/// Core mutation verbs (among them set, insert, improve, polish, adjust, tweak, bump and
/// convert).
#[rustfmt::skip]
pub(super) const CORE_VERBS: &[&str] = &[
    "edit", "modify", "change", "update", "fix", "repair", "overwrite", "rewrite", "replace",
    "redesign", "restyle", "re-style", "re-design", "write", "create", "save", "apply", "append",
    "add", "remove", "delete", "move", "copy", "rename", "mkdir", "refactor", "put", "implement",
    "set", "insert", "improve", "polish", "adjust", "tweak", "bump", "convert",
    // The verbs of everyday edits: a value raised or lowered, a flag turned on or off, one
    // thing swapped for another, a line commented out or back in.
    "turn", "switch", "toggle", "enable", "disable", "increase", "decrease", "raise", "lower",
    "reduce", "swap", "uncomment", "prepend", "correct", "drop", "double", "halve", "increment",
    "decrement", "activate", "deactivate", "reformat",
];

pub(super) const BUILD_VERBS: &[&str] =
    &["make", "build", "create", "generate", "setup", "scaffold"];

#[rustfmt::skip]
const CHATTY: &[&str] = &[
    "ah", "oh", "ok", "okay", "right", "alright", "so", "well", "sure", "yeah", "yep", "yup",
    "cool", "great", "nice", "thanks", "hey", "hi", "hello", "now",
];

#[rustfmt::skip]
pub(super) const DETERMINERS: &[&str] = &[
    "a", "an", "the", "any", "my", "your", "our", "this", "that", "these", "those", "its", "their",
    "some", "all", "every",
];

/// Whether `word` is one of the core mutation verbs.
pub(super) fn is_core(word: &str) -> bool {
    CORE_VERBS.contains(&word)
}

/// Past a chatty prefix ("ok so", "hmm, well"), "now" and "please".
pub(super) fn after_prefix(lex: &Lex<'_>, i: usize) -> usize {
    let mut j = i;
    loop {
        let w = lex.word(j);
        if CHATTY.contains(&w) || (w.starts_with("hmm") && w.chars().all(|c| c == 'h' || c == 'm'))
        {
            j += 1;
        } else if lex.seq(j, "thank you") {
            j += 2;
        } else if matches!(
            w,
            "please" | "pls" | "plz" | "kindly" | "just" | "also" | "then"
        ) {
            j += 1;
        } else if lex.seq(j, "go ahead and") {
            j += 3;
        } else {
            return j;
        }
    }
}

/// Whether a target span starts right after `offset` (past blanks, backticks and "the ").
pub(super) fn next_is_target(lex: &Lex<'_>, spans: &[TargetSpan], offset: usize) -> bool {
    let rest = &lex.lower[offset..];
    let mut at = offset + (rest.len() - rest.trim_start_matches([' ', '`', '\t']).len());
    if lex.lower[at..].starts_with("the ") {
        at += 4;
    }
    targets::span_starting_at(spans, at).is_some()
}

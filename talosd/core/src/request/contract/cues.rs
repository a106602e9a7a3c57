//! Cues both the task classifier and the direct-answer rules test: the diagnosis and
//! workspace words, and whether a request asks for a directory listing. A sibling below
//! `classify` and `direct`, so neither reaches into the other for them.

use crate::text::lexical::Lex;

#[rustfmt::skip]
pub(super) const DIAGNOSE: &[&str] = &[
    "inspect", "diagnose", "check whether", "check if", "mismatch", "selector", "linkage", "wired",
    "wiring", "broken reference", "suspicious reference", "do not change", "don't change",
    "dont change", "broken", "what is wrong", "what's wrong",
];
#[rustfmt::skip]
pub(super) const WORKSPACE: &[&str] = &[
    "workspace", "repo", "repository", "project", "codebase", "what files", "what is in this",
    "what's in this", "explain this", "this folder", "this directory", "this site",
];
const LISTING_NOUNS: &[&str] = &["files", "folders", "directories", "items", "entries"];
const PLACES: &[&str] = &["folder", "directory", "workspace", "repo", "repository"];

pub(super) fn asks_for_listing(lex: &Lex<'_>) -> bool {
    lex.has_any(&[
        "list files",
        "list the files",
        "show me the files",
        "show the files",
        "what files",
        "which files",
    ]) || simple_listing_shape(lex)
}

/// The whole request is one of the simple listing shapes ("what files are in this folder?",
/// "list the files here", "show me the files", "ls").
pub(super) fn simple_listing_shape(lex: &Lex<'_>) -> bool {
    let w = |k: usize| lex.word(k);
    let mut k = 0;
    let optional = |k: &mut usize, options: &[&str]| {
        if options.contains(&w(*k)) {
            *k += 1;
        }
    };
    let place_tail = |k: &mut usize| {
        if w(*k) == "here" {
            *k += 1;
        } else if w(*k) == "in"
            && matches!(w(*k + 1), "this" | "the" | "current")
            && PLACES.contains(&w(*k + 2))
        {
            *k += 3;
        }
    };
    let matched = match w(0) {
        "what" | "which" if LISTING_NOUNS.contains(&w(1)) => {
            k = 2;
            if lex.seq(k, "do we have") {
                k += 3;
            } else {
                optional(&mut k, &["are", "exist"]);
            }
            optional(&mut k, &["in", "inside"]);
            optional(&mut k, &["this", "the", "current", "here"]);
            optional(&mut k, PLACES);
            true
        }
        "what's" | "whats" => {
            k = 1;
            optional(&mut k, &["in"]);
            w(k) == "here" && {
                k += 1;
                true
            }
        }
        "what" if w(1) == "is" => {
            k = 2;
            optional(&mut k, &["in"]);
            w(k) == "here" && {
                k += 1;
                true
            }
        }
        "list" => {
            k = 1;
            optional(&mut k, &["the", "all"]);
            if LISTING_NOUNS.contains(&w(k)) || matches!(w(k), "contents" | "directory") {
                k += 1;
                place_tail(&mut k);
                true
            } else {
                false
            }
        }
        "show" => {
            k = if w(1) == "me" { 2 } else { 1 };
            optional(&mut k, &["the"]);
            if LISTING_NOUNS.contains(&w(k)) {
                k += 1;
                place_tail(&mut k);
                true
            } else {
                false
            }
        }
        "ls" | "dir" => {
            k = 1;
            optional(&mut k, &["la", "l", "a"]);
            true
        }
        _ => false,
    };
    let rest_start = if k == 0 {
        0
    } else {
        lex.words.get(k - 1).map_or(lex.lower.len(), |x| x.end)
    };
    matched
        && k >= lex.words.len()
        && lex.lower[rest_start..]
            .chars()
            .all(|c| c.is_whitespace() || matches!(c, '.' | '!' | '?' | '-'))
}

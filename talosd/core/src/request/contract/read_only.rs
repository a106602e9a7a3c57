//! Global read-only negation: "do not change anything", "don't edit files", "leave files
//! unchanged", "change nothing" make the whole turn non-mutating, while scoped limiters only
//! narrow a requested change: "do not change anything else", "don't touch styles.css",
//! "do not create a local tailwind.min.css file", "do not touch the footer".

use super::words::{DETERMINERS, is_core, next_is_target};
use crate::request::targets::{self, TargetSpan};
use crate::text::lexical::Lex;

#[rustfmt::skip]
const GLOBAL_NEGATION_VERBS: &[&str] = &[
    "change", "edit", "modify", "write", "create", "save", "apply", "touch", "mutate", "fix",
];

/// What may follow a negated verb and still only limit the scope of a requested change.
#[rustfmt::skip]
const SCOPED_TAILS: &[&str] = &[
    "anything else", "everything else", "anything outside", "anything beyond", "any other",
    "other file", "other files", "other parts", "other things", "private file", "private files",
    "protected file", "protected files", "secret file", "secret files", "secrets", "credentials",
    "else", "the rest", "unrelated", "anything except", "everything except", "anything but",
    "anything other than", "anything apart from",
];

/// Objects of a negated verb that make the whole turn read-only.
#[rustfmt::skip]
const GLOBAL_OBJECTS: &[&str] = &[
    "anything", "everything", "something", "nothing", "file", "files", "code", "codebase",
    "workspace", "repo", "repository", "project", "folder", "folders", "directory", "directories",
    "it", "them", "this", "that", "things", "thing", "stuff", "content", "contents", "site",
    "website", "of", "yet", "now", "anymore", "until", "unless", "before", "while", "just",
    "please", "and", "or", "but", "so", "any", "single", "to", "in", "on", "into", "with", "at",
    "for", "from", "there", "here", "anywhere", "disk",
];

#[rustfmt::skip]
const LOCAL_QUALIFIERS: &[&str] = &[
    "local", "broken", "placeholder", "fake", "stub", "orphan", "orphaned", "extra", "new",
    "separate", "unlinked",
];

pub(super) fn global_read_only_negation(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    #[rustfmt::skip]
    const PHRASES: &[&str] = &[
        "leave files unchanged", "leave the files unchanged", "leave everything unchanged",
        "leave everything as is", "no file changes", "read-only mode", "read only mode",
        "stay read-only", "stay read only", "keep it read-only", "keep it read only",
    ];
    if lex.has_any(PHRASES) {
        return true;
    }
    let nothing = lex.positions("nothing").into_iter().any(|k| {
        k > 0 && lex.tight(k - 1) && (is_core(lex.word(k - 1)) || lex.word(k - 1) == "touch")
    });
    if nothing || lex.has_any(&["make no changes", "make no edits", "with no changes"]) {
        return true;
    }
    for i in 0..lex.words.len() {
        if lex.word(i) == "without" && lex.word(i + 1) == "changing" && lex.tight(i) {
            if !scoped_limiter(lex, spans, lex.words[i + 1].end) {
                return true;
            }
            continue;
        }
        let Some(negator) = lex.seq_any(i, &["do not", "don't", "dont", "never"]) else {
            continue;
        };
        let verb = i + Lex::len_of(negator);
        if !lex.tight(verb - 1) {
            continue;
        }
        let w = lex.word(verb);
        let object = lex.word(verb + 1);
        let change_nouns = ["changes", "change", "edits", "edit", "modifications"];
        if w == "make"
            && (change_nouns.contains(&object)
                || (matches!(object, "any" | "a") && change_nouns.contains(&lex.word(verb + 2))))
        {
            return true;
        }
        if GLOBAL_NEGATION_VERBS.contains(&w) && !scoped_limiter(lex, spans, lex.words[verb].end) {
            return true;
        }
    }
    false
}

/// Whether what follows a negated verb (from byte `after`) only limits the change: "anything
/// else", a named file, a qualified named file, a Tailwind file, or a specific thing ("the
/// color scheme"). "anything", "files", "it" or nothing at all make it global.
fn scoped_limiter(lex: &Lex<'_>, spans: &[TargetSpan], after: usize) -> bool {
    let rest = &lex.lower[after..];
    let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '`' | '"'));
    let tail_start = after + (rest.len() - trimmed.len());
    let next_span = spans.partition_point(|s| s.start < tail_start);
    if spans
        .get(next_span)
        .is_some_and(|s| s.start <= tail_start + 4)
    {
        return true;
    }
    if trimmed.is_empty() || trimmed.starts_with([',', '.', ';', ':', '!', '?', ')']) {
        return false;
    }
    let phrase_start = |s: &&str| {
        trimmed.starts_with(*s)
            && !trimmed[s.len()..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric)
    };
    if SCOPED_TAILS.iter().any(phrase_start) {
        return true;
    }
    let first = lex.word_at_or_after(tail_start);
    let mut k = first;
    while matches!(lex.word(k), "a" | "an" | "the" | "any" | "my")
        || LOCAL_QUALIFIERS.contains(&lex.word(k))
    {
        k += 1;
    }
    let names_target = lex
        .words
        .get(k)
        .is_some_and(|w| targets::inside_span(spans, w.start));
    if names_target || lex.word(k) == "tailwind" {
        return true;
    }
    let mut noun = first;
    if DETERMINERS.contains(&lex.word(noun)) {
        noun += 1;
    }
    let w = lex.word(noun);
    let in_named_file = matches!(w, "anything" | "everything" | "code" | "file" | "files")
        && matches!(lex.word(noun + 1), "in" | "inside" | "within")
        && lex
            .words
            .get(noun + 1)
            .is_some_and(|inw| next_is_target(lex, spans, inw.end));
    if in_named_file {
        return true;
    }
    let qualified_files =
        LOCAL_QUALIFIERS.contains(&w) && matches!(lex.word(noun + 1), "file" | "files");
    !(w.is_empty() || GLOBAL_OBJECTS.contains(&w) || qualified_files)
}

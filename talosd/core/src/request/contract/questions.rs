//! Questions that are not requests: status questions about a prior change ("did you make the
//! changes?", unless "… if not, fix it"), advisory questions ("should I edit x?", "how would
//! you fix it?", "is it safe to delete y?"), instructional questions ("how to add a route"),
//! capability-only questions ("can you create websites?") and inline-output requests ("just
//! show me the code").

use super::words::{BUILD_VERBS, DETERMINERS, after_prefix, is_core};
use crate::text::lexical::Lex;

/// A question about a prior change ("did you make the changes?"), unless it carries a
/// conditional apply clause ("… if not, fix it").
pub(crate) fn is_status_question(lex: &Lex<'_>) -> bool {
    status_question(lex, &lex.clause_starts())
}

pub(super) fn status_question(lex: &Lex<'_>, starts: &[usize]) -> bool {
    if conditional_apply(lex) {
        return false;
    }
    starts.iter().any(|&s| status_at(lex, after_prefix(lex, s)))
}

fn conditional_apply(lex: &Lex<'_>) -> bool {
    #[rustfmt::skip]
    const APPLY: &[&str] = &[
        "fix", "repair", "update", "change", "edit", "make", "create", "write", "apply",
    ];
    (0..lex.words.len()).any(|i| {
        let opener = lex.seq(i, "if not") || matches!(lex.word(i), "otherwise" | "then");
        opener
            && (i + 1..lex.words.len())
                .take_while(|&j| lex.words[j].start <= lex.words[i].end + 80)
                .any(|j| APPLY.contains(&lex.word(j)))
    })
}

fn status_at(lex: &Lex<'_>, j: usize) -> bool {
    #[rustfmt::skip]
    const DID_YOU: &[&str] = &[
        "make", "apply", "do", "finish", "complete", "update", "change", "edit", "fix", "repair",
        "write", "create", "save", "touch", "modify",
    ];
    #[rustfmt::skip]
    const CHANGE_NOUNS: &[&str] = &[
        "change", "changes", "edit", "edits", "fix", "fixes", "repair", "update", "updates",
    ];
    #[rustfmt::skip]
    const DONE: &[&str] = &[
        "done", "finished", "complete", "completed", "working", "fixed", "applied", "saved",
        "written", "made", "updated", "changed",
    ];
    #[rustfmt::skip]
    const HAVE_YOU: &[&str] = &[
        "made", "applied", "done", "finished", "completed", "updated", "changed", "edited",
        "written", "created", "saved", "fixed", "repaired",
    ];
    #[rustfmt::skip]
    const WHAT_YOU: &[&str] = &[
        "make", "made", "do", "done", "change", "changed", "update", "updated", "edit", "edited",
        "write", "written", "create", "created", "fix", "fixed", "touch", "touched", "modify",
        "modified",
    ];
    let w = |k: usize| lex.word(j + k);
    let subject_then = |k: usize, words: &[&str]| -> bool {
        let noun = if matches!(w(k), "it" | "this" | "that") {
            k + 1
        } else if w(k) == "the" && CHANGE_NOUNS.contains(&w(k + 1)) {
            k + 2
        } else if CHANGE_NOUNS.contains(&w(k)) || matches!(w(k), "file" | "files") {
            k + 1
        } else if w(k) == "the" && matches!(w(k + 1), "file" | "files") {
            k + 2
        } else {
            return false;
        };
        words.contains(&w(noun))
    };
    match w(0) {
        "did" if w(1) == "you" => DID_YOU.contains(&w(2)),
        "did" => subject_then(1, &["work", "apply", "finish", "complete"]),
        "is" => (1..12).any(|k| DONE.contains(&w(k)) && !(1..k).any(|m| w(m).is_empty())),
        "are" | "were" | "was" => subject_then(1, DONE),
        "have" | "has" if w(1) == "you" => HAVE_YOU.contains(&w(2)),
        "what" | "which" => {
            // "what did you change", "which files have you touched", "what changes did you make"
            let k = usize::from(matches!(
                w(1),
                "file" | "files" | "change" | "changes" | "edit" | "edits"
            ));
            matches!(w(k + 1), "did" | "have") && w(k + 2) == "you" && WHAT_YOU.contains(&w(k + 3))
        }
        "show" | "tell" | "list" | "summarize" | "summarise" => shown_changes(lex, j, WHAT_YOU),
        "why" if w(1) == "did" && w(2) == "you" && w(3) == "not" => DID_YOU.contains(&w(4)),
        "why" if w(1) == "didn't" || (w(1) == "did" && matches!(w(2), "nothing" | "it")) => {
            (2..12).any(|k| matches!(w(k), "change" | "update" | "happen" | "apply" | "work"))
        }
        "does" if w(1) == "it" => w(2) == "work",
        _ => false,
    }
}

/// "Show me what you changed", "tell me what you have done", "list your changes", "show me the
/// changes you made": the person asks for the session's record, not for a diff of their own.
fn shown_changes(lex: &Lex<'_>, j: usize, what_you: &[&str]) -> bool {
    let w = |k: usize| lex.word(j + k);
    let k = 1 + usize::from(matches!(w(1), "me" | "us"));
    let changes = |k: usize| matches!(w(k), "changes" | "edits" | "change" | "edit");
    if w(k) == "what" && w(k + 1) == "you" {
        let verb = k + 2 + usize::from(matches!(w(k + 2), "have" | "did" | "ve" | "just"));
        return what_you.contains(&w(verb));
    }
    (w(k) == "your" && changes(k + 1)) || (w(k) == "the" && changes(k + 1) && w(k + 2) == "you")
}

/// "Should I edit x?", "How would you fix it?", "Is it safe to delete y?", "What happens if …".
pub(super) fn advisory_at(lex: &Lex<'_>, starts: &[usize]) -> Option<usize> {
    for &s in starts {
        let j = after_prefix(lex, s);
        let w = |k: usize| lex.word(j + k);
        let hit = (matches!(w(0), "should" | "would" | "could" | "can" | "may")
            && matches!(w(1), "i" | "we")
            && is_core(w(2)))
            || (matches!(w(0), "what" | "how")
                && matches!(w(1), "would" | "should" | "could")
                && matches!(w(2), "you" | "i" | "we")
                && is_core(w(3)))
            || (w(0) == "is" && w(1) == "it" && (2..6).any(|k| w(k) == "to" && is_core(w(k + 1))))
            || (w(0) == "would" && w(1) == "it" && w(2) == "be")
            || lex.seq(j, "what would happen if")
            || lex.seq(j, "what will happen if")
            || lex.seq(j, "what happens if")
            || lex.seq(j, "do you think");
        if hit {
            return Some(j);
        }
    }
    (0..lex.words.len()).find(|&k| {
        matches!(lex.word(k), "whether" | "if")
            && matches!(lex.word(k + 1), "i" | "we")
            && matches!(lex.word(k + 2), "should" | "could" | "can" | "may")
            && is_core(lex.word(k + 3))
    })
}

/// "how to <verb>", "how can|could|should|do I <verb>", "explain|show|tell me how to <verb>".
pub(super) fn instructional_at(lex: &Lex<'_>) -> Option<usize> {
    (0..lex.words.len()).find(|&k| {
        if lex.word(k) != "how" {
            return false;
        }
        let w = |n: usize| lex.word(k + n);
        (w(1) == "to" && is_core(w(2)))
            || (matches!(w(1), "can" | "could" | "should" | "do" | "does")
                && matches!(w(2), "i" | "we" | "one")
                && is_core(w(3)))
    })
}

pub(super) fn capability_only(lex: &Lex<'_>, starts: &[usize]) -> bool {
    #[rustfmt::skip]
    const MARKERS: &[&str] = &[
        "your skills", "your skill", "your capabilities", "capable of", "are you able to",
        "is it possible for you", "is that possible for you", "do you support", "can you even",
    ];
    if lex.has_any(MARKERS) {
        return true;
    }
    lex.lower.contains('?')
        && starts.iter().any(|&s| {
            let j = after_prefix(lex, s);
            let verb = j + 2;
            matches!(lex.word(j), "can" | "could")
                && matches!(lex.word(j + 1), "you" | "talos")
                && (is_core(lex.word(verb)) || BUILD_VERBS.contains(&lex.word(verb)))
                && {
                    let object = lex.word(verb + 1);
                    object.len() > 3
                        && object.ends_with('s')
                        && !DETERMINERS.contains(&object)
                        && !matches!(object, "this" | "its" | "us" | "yours")
                        && (lex.word(verb + 2).is_empty() || lex.word(verb + 2) == "or")
                }
        })
}

pub(super) fn inline_output(lex: &Lex<'_>) -> bool {
    lex.has_any(&[
        "output only the code",
        "only output the code",
        "just show me the code",
        "show me the code",
        "just the code",
        "code only",
        "answer inline",
        "inline please",
        "reply inline",
        "in the chat",
        "in chat",
        "print it here",
        "paste it here",
    ])
}

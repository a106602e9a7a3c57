//! Mutation intent: whether the person's own words ask for a change, and why, checked in
//! this order (global read-only negation, status question, advisory and instructional
//! questions, … explicit verbs and markers, non-mutating). The text it reads has quoted
//! passages blanked, so a quoted "fix the bug" is never a request.

use super::Reason;
use super::questions::{
    advisory_at, capability_only, inline_output, instructional_at, status_question,
};
use super::read_only::global_read_only_negation;
use super::words::{BUILD_VERBS, after_prefix, is_core, next_is_target};
use crate::request::targets::{self, TargetSpan};
use crate::text::lexical::Lex;

#[rustfmt::skip]
pub(crate) const ARTIFACT_NOUNS: &[&str] = &[
    "website", "site", "webapp", "app", "application", "page", "webpage", "calculator",
    "component", "file", "project", "tool", "ui", "interface", "stylesheet", "script", "game",
    "dashboard", "form", "config",
];

/// Words that negate the verb right after them.
#[rustfmt::skip]
const NEGATING: &[&str] = &[
    "not", "don't", "dont", "never", "without", "no", "cannot", "can't", "won't", "shouldn't",
    "mustn't",
];

/// Words that make the verb after them a description, not a request ("when I update x.md").
#[rustfmt::skip]
const NON_IMPERATIVE: &[&str] = &[
    "i", "we", "they", "he", "she", "someone", "when", "whenever", "if", "after", "before",
];

#[rustfmt::skip]
const MARKERS: &[&str] = &[
    "edit it", "edit the", "edit this", "edit that", "modify it", "modify the", "modify this",
    "modify that", "change it", "change the", "change this", "change that", "change everything",
    "change all", "update it", "update the", "update this", "update that", "fix it", "fix the",
    "fix this", "fix that", "overwrite it", "overwrite the", "overwrite this", "rewrite it",
    "rewrite the", "rewrite this", "replace it", "replace the", "replace this", "redesign",
    "restyle", "re-style", "re-design", "save it", "save the", "apply the", "apply these",
    "apply those", "remove the", "delete the", "darker and more minimal",
];

/// Markers that need a following word ("make it darker", not "can you make it?").
#[rustfmt::skip]
const OPEN_MARKERS: &[&str] = &[
    "make it", "make the", "make this", "make that", "write a", "write the", "create a",
    "create the", "add a", "add the", "refactor",
];

/// The request's mutation reason, first rule wins.
pub(crate) fn reason(lex: &Lex<'_>, spans: &[TargetSpan]) -> Reason {
    let starts = lex.clause_starts();
    let first_request = starts
        .iter()
        .copied()
        .filter(|&s| request_at(lex, s))
        .chain(comma_starts(lex).filter(|&s| comma_request(lex, spans, s)))
        .chain(scope_starts(lex, spans, &starts).filter(|&s| request_at(lex, s)))
        .min();
    let unsuppressed = |at: usize| first_request.is_none_or(|r| r > lex.clause_of(&starts, at));
    if global_read_only_negation(lex, spans) {
        return Reason::GlobalReadOnlyNegation;
    }
    if status_question(lex, &starts) {
        return Reason::PriorChangeStatusQuestion;
    }
    if let Some(at) = advisory_at(lex, &starts)
        && unsuppressed(at)
    {
        return Reason::AdvisoryMutationQuestion;
    }
    if let Some(at) = instructional_at(lex)
        && unsuppressed(at)
    {
        return Reason::InstructionalMutationQuestion;
    }
    if spans.is_empty() && capability_only(lex, &starts) {
        return Reason::CapabilityOnlyArtifactQuestion;
    }
    if spans.is_empty() && inline_output(lex) {
        return Reason::InlineOutputRequest;
    }
    if !spans.is_empty() && defect_then_fix(lex, &starts) {
        return Reason::FileScopedDefectFix;
    }
    if fix_problem_in_file(lex, spans) {
        return Reason::FixProblemInFileTarget;
    }
    if review_then_mutation(lex) {
        return Reason::ReviewAndFix;
    }
    if batch_apply(lex) {
        return Reason::BatchWorkspaceApply;
    }
    if targets::source_to_outputs(lex, spans).is_some() {
        return Reason::SourceToTargetArtifact;
    }
    if read_then_mutation(lex) {
        return Reason::ReadThenMutation;
    }
    if first_request == Some(0) {
        return Reason::RequestPattern;
    }
    if terminal_build(lex, &starts) {
        return Reason::TerminalBuildArtifact;
    }
    if natural_artifact(lex) {
        return Reason::NaturalArtifact;
    }
    if verb_with_file_target(lex, spans) {
        return Reason::MutationVerbWithFileTarget;
    }
    if marker(lex) {
        return Reason::MutationMarker;
    }
    if first_request.is_some() {
        return Reason::RequestPattern;
    }
    Reason::NonMutating
}

/// The word after a leading place phrase that names a file with no comma after it ("In
/// settings.py change …", "For the Makefile use …"): it opens the clause as the comma would.
fn scope_starts<'a>(
    lex: &'a Lex<'_>,
    spans: &'a [TargetSpan],
    starts: &'a [usize],
) -> impl Iterator<Item = usize> + 'a {
    starts.iter().filter_map(move |&s| {
        let j = after_prefix(lex, s);
        if !matches!(lex.word(j), "in" | "inside" | "within" | "for" | "on") {
            return None;
        }
        let mut at = lex.words.get(j)?.end;
        let rest = &lex.lower[at..];
        at += rest.len() - rest.trim_start_matches([' ', '`']).len();
        if lex.lower[at..].starts_with("the ") {
            at += 4;
        }
        let span = spans.iter().find(|span| span.start == at)?;
        let next = lex.word_at_or_after(span.end);
        (next < lex.words.len()).then_some(next)
    })
}

/// Words right after a comma ("Don't delete index.html, rename it …"): an imperative there is a
/// request too.
fn comma_starts<'a>(lex: &'a Lex<'_>) -> impl Iterator<Item = usize> + 'a {
    (1..lex.words.len()).filter(|&i| {
        let gap = &lex.lower[lex.words[i - 1].end..lex.words[i].start];
        gap.contains(',') && gap.chars().all(|c| c == ',' || c.is_whitespace())
    })
}

/// An imperative after a comma counts when its object follows ("…, rename it to home.html",
/// "…, fix app.js"), not in a list of nouns ("the parts, change log and copy").
fn comma_request(lex: &Lex<'_>, spans: &[TargetSpan], s: usize) -> bool {
    const OBJECTS: &[&str] = &[
        "it",
        "them",
        "this",
        "that",
        "the",
        "a",
        "an",
        "my",
        "our",
        "all",
        "everything",
        "only",
    ];
    let j = after_prefix(lex, s);
    request_at(lex, s)
        && (OBJECTS.contains(&lex.word(j + 1))
            || lex
                .words
                .get(j + 1)
                .is_some_and(|w| targets::inside_span(spans, w.start)))
}

/// The word right before word `i` (whitespace between only) negates it.
fn negated(lex: &Lex<'_>, i: usize) -> bool {
    i > 0 && lex.tight(i - 1) && NEGATING.contains(&lex.word(i - 1))
}

/// An artifact noun (or its plural) at word `j`.
fn artifact_noun(lex: &Lex<'_>, j: usize) -> bool {
    let w = lex.word(j);
    ARTIFACT_NOUNS.contains(&w)
        || w.strip_suffix('s')
            .is_some_and(|s| ARTIFACT_NOUNS.contains(&s))
        || (w == "sheet" && j > 0 && lex.word(j - 1) == "style")
}

/// "make|build|create|generate|set up|scaffold" + up to ten words + an artifact noun, in one
/// clause.
fn build_artifact_at(lex: &Lex<'_>, j: usize) -> bool {
    let verb_len = if lex.seq(j, "set up") {
        2
    } else if BUILD_VERBS.contains(&lex.word(j)) {
        1
    } else {
        return false;
    };
    let first = j + verb_len;
    (first..(first + 11).min(lex.words.len()))
        .take_while(|&k| k == first || !crate::text::lexical::is_sentence_gap(gap(lex, k)))
        .any(|k| artifact_noun(lex, k))
}

fn gap<'t>(lex: &Lex<'t>, k: usize) -> &'t str {
    let before = if k == 0 { 0 } else { lex.words[k - 1].end };
    &lex.lower[before..lex.words.get(k).map_or(lex.lower.len(), |w| w.start)]
}

fn directory_creation_at(lex: &Lex<'_>, j: usize) -> bool {
    if !matches!(lex.word(j), "make" | "create") {
        return false;
    }
    let mut k = j + 1;
    for optional in ["me", "a", "new"] {
        if lex.word(k) == optional || (optional == "a" && lex.word(k) == "an") {
            k += 1;
        }
    }
    matches!(
        lex.word(k),
        "directories" | "directory" | "dirs" | "dir" | "folders" | "folder"
    )
}

/// A request action at word `j`: a core verb, a build-artifact phrase, "make it|this|that|the",
/// or a directory creation.
fn action_at(lex: &Lex<'_>, j: usize) -> bool {
    let build_object = BUILD_VERBS.contains(&lex.word(j))
        && lex.word(j) != "make"
        && matches!(
            lex.word(j + 1),
            "a" | "an" | "the" | "me" | "some" | "new" | "my" | "our"
        );
    let make_object = lex.word(j) == "make" && matches!(lex.word(j + 1), "a" | "an" | "me");
    build_object
        || make_object
        || is_core(lex.word(j))
        || everyday_action_at(lex, j)
        || build_artifact_at(lex, j)
        || (lex.word(j) == "make"
            && matches!(lex.word(j + 1), "it" | "this" | "that" | "the" | "them"))
        || directory_creation_at(lex, j)
}

/// Whether the request holds a change verb anywhere that no negation governs ("comment out"
/// counts; "comment" alone does not). A wish names its change in other forms of the verb too:
/// "worth bumping", "should be changed", "needs to be turned off".
pub(super) fn has_change_verb(lex: &Lex<'_>) -> bool {
    (0..lex.words.len()).any(|k| {
        let form = is_core(lex.word(k)) || everyday_action_at(lex, k) || verb_form_at(lex, k);
        form && !negated(lex, k) && !(k > 0 && NON_IMPERATIVE.contains(&lex.word(k - 1)))
    })
}

/// A core verb's -ing form (not as a noun after an article: "the setting"), or its past
/// participle after a form of "be" or "get" ("should be removed", "got deleted").
fn verb_form_at(lex: &Lex<'_>, k: usize) -> bool {
    let word = lex.word(k);
    let before = if k == 0 { "" } else { lex.word(k - 1) };
    let (stem, passive) = if let Some(stem) = word.strip_suffix("ing") {
        (stem, false)
    } else if let Some(stem) = word.strip_suffix("ed") {
        (stem, true)
    } else {
        return false;
    };
    let context = if passive {
        matches!(before, "be" | "been" | "being" | "get" | "got" | "gets")
    } else {
        !matches!(
            before,
            "the" | "a" | "an" | "this" | "that" | "these" | "those"
        )
    };
    let undoubled = stem
        .char_indices()
        .last()
        .filter(|&(at, c)| at > 0 && stem[..at].ends_with(c))
        .map(|(at, _)| &stem[..at]);
    context && (is_core(stem) || is_core(&format!("{stem}e")) || undoubled.is_some_and(is_core))
}

/// The everyday edits whose verb is also a common word: "comment out X", "use B instead of
/// A", "make X false" (a value right after the thing it sets).
fn everyday_action_at(lex: &Lex<'_>, j: usize) -> bool {
    let clause = |from: usize, words: usize| {
        (from..(from + words).min(lex.words.len()))
            .take_while(move |&k| k == from || !crate::text::lexical::is_sentence_gap(gap(lex, k)))
    };
    match lex.word(j) {
        "comment" => clause(j + 1, 6).any(|k| lex.word(k) == "out"),
        "clean" | "tidy" => lex.word(j + 1) == "up",
        "get" => lex.seq(j + 1, "rid of"),
        "format" | "sort" => j + 1 < lex.words.len() && !matches!(lex.word(j + 1), "of" | "is"),
        "use" => clause(j + 1, 8).any(|k| lex.seq(k, "instead of") || lex.seq(k, "rather than")),
        "make" => clause(j + 1, 5).skip(1).any(|k| {
            let w = lex.word(k);
            matches!(w, "true" | "false" | "on" | "off" | "yes" | "no") || w.parse::<f64>().is_ok()
        }),
        _ => false,
    }
}

/// The explicit request patterns (an action verb, "only <verb>", "use write_file to", ...),
/// tried at a clause start.
pub(crate) fn request_at(lex: &Lex<'_>, i: usize) -> bool {
    let j = after_prefix(lex, i);
    if action_at(lex, j) {
        return true;
    }
    if lex.word(j) == "only" && is_core(lex.word(j + 1)) {
        return true;
    }
    if lex.word(j) == "use" {
        let k = if lex.word(j + 1) == "talos" {
            j + 2
        } else {
            j + 1
        };
        if matches!(lex.word(k), "write_file" | "edit_file")
            && lex.word(k + 1) == "to"
            && is_core(lex.word(k + 2))
        {
            return true;
        }
    }
    let after =
        if matches!(lex.word(j), "can" | "could" | "would" | "will") && lex.word(j + 1) == "you" {
            Some(if lex.word(j + 2) == "please" {
                j + 3
            } else {
                j + 2
            })
        } else if lex.seq(j, "i want you to") || lex.seq(j, "i need you to") {
            Some(j + 4)
        } else if matches!(lex.word(j), "let's" | "lets") {
            Some(j + 1)
        } else {
            None
        };
    if after.is_some_and(|k| action_at(lex, k)) {
        return true;
    }
    i == 0 && build_me_anywhere(lex)
}

/// "… could you build me a small calculator app …" anywhere in the request.
fn build_me_anywhere(lex: &Lex<'_>) -> bool {
    (0..lex.words.len()).any(|k| {
        if !matches!(lex.word(k), "can" | "could" | "would" | "will") || lex.word(k + 1) != "you" {
            return false;
        }
        let v = if lex.word(k + 2) == "please" {
            k + 3
        } else {
            k + 2
        };
        BUILD_VERBS.contains(&lex.word(v)) && lex.word(v + 1) == "me" && build_artifact_at(lex, v)
    })
}

/// "There is a bug in calc.py … Fix multiply …" (a defect named with a file, then a fix).
fn defect_then_fix(lex: &Lex<'_>, starts: &[usize]) -> bool {
    #[rustfmt::skip]
    const DEFECTS: &[&str] = &[
        "bug", "bugs", "broken", "error", "errors", "issue", "issues", "problem", "problems",
        "typo", "typos", "wrong", "fails", "failing", "crash", "crashes", "incorrect",
    ];
    let Some(defect) = (0..lex.words.len()).find(|&k| DEFECTS.contains(&lex.word(k))) else {
        return false;
    };
    starts.iter().filter(|&&s| s > defect).any(|&s| {
        let j = after_prefix(lex, s);
        let fix = |k: usize| matches!(lex.word(k), "fix" | "repair" | "correct");
        fix(j)
            || (matches!(lex.word(j), "can" | "could" | "would" | "will")
                && lex.word(j + 1) == "you"
                && (fix(j + 2) || (lex.word(j + 2) == "please" && fix(j + 3))))
    })
}

/// "Fix the bug in calc.py", "Please fix the failing test in FooTest.java".
fn fix_problem_in_file(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    (0..lex.words.len()).any(|k| {
        matches!(lex.word(k), "fix" | "repair")
            && !negated(lex, k)
            && (k + 1..(k + 8).min(lex.words.len()))
                .take_while(|&m| !crate::text::lexical::is_sentence_gap(gap(lex, m)))
                .any(|m| {
                    matches!(lex.word(m), "in" | "inside" | "within" | "of")
                        && next_is_target(lex, spans, lex.words[m].end)
                })
    })
}

fn review_then_mutation(lex: &Lex<'_>) -> bool {
    (0..lex.words.len()).any(|k| {
        let opener = matches!(lex.word(k), "review" | "inspect" | "check" | "diagnose")
            || lex.seq(k, "look at");
        opener
            && !negated(lex, k)
            && (k + 1..lex.words.len())
                .take_while(|&m| lex.words[m].start <= lex.words[k].end + 160)
                .any(|m| {
                    matches!(lex.word(m), "and" | "then") && {
                        let mut v = m + 1;
                        while matches!(lex.word(v), "then" | "please" | "also") {
                            v += 1;
                        }
                        is_core(lex.word(v))
                    }
                })
    })
}

fn batch_apply(lex: &Lex<'_>) -> bool {
    let batch_tool = lex.positions("apply_workspace_batch").into_iter().any(|k| {
        (k + 1..lex.words.len())
            .take_while(|&m| lex.words[m].start <= lex.words[k].end + 160)
            .any(|m| {
                matches!(
                    lex.word(m),
                    "apply" | "create" | "copy" | "move" | "rename" | "mkdir"
                )
            })
    });
    batch_tool
        || lex.has("apply operations_json")
        || lex.has_any(&[
            "apply these operations",
            "apply the operations",
            "apply exactly these operations",
        ])
        || (0..lex.words.len()).any(|k| {
            matches!(lex.word(k), "create" | "make" | "mkdir")
                && matches!(lex.word(k + 1), "directories" | "folders" | "dirs")
        })
}

fn read_then_mutation(lex: &Lex<'_>) -> bool {
    let j = after_prefix(lex, 0);
    matches!(lex.word(j), "read" | "open")
        && (j + 1..lex.words.len())
            .take_while(|&m| lex.words[m].start <= lex.words[j].end + 121)
            .any(|m| {
                matches!(lex.word(m), "and" | "then") && {
                    let mut v = m + 1;
                    while matches!(lex.word(v), "then" | "please") {
                        v += 1;
                    }
                    is_core(lex.word(v)) || BUILD_VERBS.contains(&lex.word(v))
                }
            })
}

/// "A dark BMI calculator page. Build it." (the last clause asks to build what came before).
fn terminal_build(lex: &Lex<'_>, starts: &[usize]) -> bool {
    let Some(&last) = starts.last() else {
        return false;
    };
    let mut j = after_prefix(lex, last);
    if matches!(lex.word(j), "can" | "could" | "would" | "will") && lex.word(j + 1) == "you" {
        j += 2;
        if lex.word(j) == "please" {
            j += 1;
        }
    }
    let verb = matches!(
        lex.word(j),
        "build" | "create" | "make" | "generate" | "scaffold"
    );
    let object = matches!(lex.word(j + 1), "it" | "that" | "this" | "one" | "them");
    let mut end = j + 2;
    if lex.seq(end, "for me") {
        end += 2;
    }
    if matches!(lex.word(end), "please" | "now") {
        end += 1;
    }
    verb && object && end >= lex.words.len() && (0..last).any(|k| artifact_noun(lex, k))
}

fn natural_artifact(lex: &Lex<'_>) -> bool {
    let asks = ["can", "could", "would", "will"]
        .iter()
        .any(|m| lex.has(&format!("{m} you make it")));
    asks && (0..lex.words.len()).any(|k| artifact_noun(lex, k))
        && (lex.has_any(&["here", "folder", "file", "open and use", "i just want"]))
}

fn verb_with_file_target(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    spans.iter().any(|span| {
        let Some(mut v) = lex.word_before(span.start) else {
            return false;
        };
        let blank = |from: usize, to: usize| {
            lex.lower[from..to]
                .chars()
                .all(|c| c.is_whitespace() || c == '`')
        };
        if !blank(lex.words[v].end, span.start) {
            return false;
        }
        if lex.word(v) == "only" && v > 0 && lex.tight(v - 1) {
            v -= 1;
        }
        // "Make main.py print the total": make with a file for its object opens a request.
        let make_file = lex.word(v) == "make" && lex.clause_starts().contains(&v);
        (is_core(lex.word(v)) || make_file)
            && !negated(lex, v)
            && !(v > 0 && NON_IMPERATIVE.contains(&lex.word(v - 1)))
    })
}

fn marker(lex: &Lex<'_>) -> bool {
    let plain = MARKERS
        .iter()
        .flat_map(|m| lex.positions(m))
        .any(|k| !negated(lex, k));
    let open = OPEN_MARKERS.iter().any(|m| {
        lex.positions(m)
            .into_iter()
            .any(|k| !negated(lex, k) && lex.words.get(k + Lex::len_of(m)).is_some())
    });
    plain || open
}

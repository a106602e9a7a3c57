//! Clauses of a request for role derivation: split at sentence ends, `;`, newlines and before
//! "and|but do not"; each clause cut into a mutation fragment and a constraint fragment at the
//! first constraint marker ("Rewrite styles.css| so index.html still works"). Inside a constraint
//! fragment, ", and update X too" starts a new clause: X is a mutation target, not verify-only.

use crate::request::targets::{self, TargetSpan, dedup};
use crate::request::task::Legacy;
use crate::text::lexical::{self, Lex};

/// Words that may stand between ", and" and the verb of a new mutation ("…, and also update").
const NEW_TARGET_FILLERS: &[&str] = &["also", "then"];

/// Markers that open the constraint fragment of a clause.
#[rustfmt::skip]
const CONSTRAINT_MARKERS: &[&str] = &[
    " so ", " without breaking ", " without changing ", " compatible with ",
    " stay compatible with ", " stays compatible with ", " while keeping ", " making sure ",
    " ensuring ", " such that ",
];

/// Verbs that make a fragment's targets must-mutate (among them create, write, overwrite,
/// replace, repair, refactor, add and append).
#[rustfmt::skip]
const EXPLICIT_VERBS: &[&str] = &[
    "improve", "edit", "update", "rewrite", "modify", "change", "fix", "adjust", "tweak",
    "restyle", "redesign", "polish", "create", "write", "overwrite", "replace", "repair",
    "refactor", "add", "append",
];

/// "only if necessary" and its kin mark a target as may-mutate.
#[rustfmt::skip]
const OPTIONAL_MARKERS: &[&str] = &[
    "only if necessary", "only if needed", "when necessary", "when needed", "if necessary",
    "if needed", "as necessary", "as needed",
];

/// Words after "do not" that do not forbid anything ("don't forget to update x.md").
#[rustfmt::skip]
const NON_FORBIDDING: &[&str] = &[
    "worry", "hesitate", "forget", "need", "want", "know", "think", "mind", "bother", "mean",
    "like", "be", "have", "wait", "stop", "explain", "just",
];

#[derive(Debug, Clone, Copy)]
struct Clause {
    start: usize,
    split: usize,
    end: usize,
}

#[derive(Debug)]
pub(super) struct Clauses {
    list: Vec<Clause>,
}

impl Clauses {
    pub(super) fn of(lex: &Lex<'_>) -> Clauses {
        let mut starts = vec![0];
        for i in 1..lex.words.len() {
            let gap = &lex.lower[lex.words[i - 1].end..lex.words[i].start];
            let negation_after_conjunction = matches!(lex.word(i - 1), "and" | "but")
                && (lex.seq(i, "do not") || matches!(lex.word(i), "don't" | "dont"));
            if lexical::is_sentence_gap(gap) || gap.contains(';') || negation_after_conjunction {
                starts.push(lex.words[i].start);
            }
        }
        starts.push(lex.lower.len());
        let list = starts
            .windows(2)
            .map(|pair| {
                let (start, end) = (pair[0], pair[1]);
                let text = &lex.lower[start..end];
                let split = CONSTRAINT_MARKERS
                    .iter()
                    .filter_map(|m| text.find(m))
                    .min()
                    .map_or(end, |i| start + i);
                Clause { start, split, end }
            })
            .flat_map(|clause| split_new_target(lex, clause))
            .collect();
        Clauses { list }
    }

    /// Expected targets named in a non-negated, non-advisory mutation fragment with an
    /// explicit verb (forbidden targets never).
    pub(super) fn mutation_targets(
        &self,
        lex: &Lex<'_>,
        spans: &[TargetSpan],
        legacy: &Legacy,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.list {
            let fragment = &lex.lower[c.start..c.split];
            let trimmed = fragment.trim_start();
            let advisory = ["what would", "how would", "show me how", "explain how"]
                .iter()
                .any(|m| fragment.contains(m))
                || ["review ", "inspect ", "check "]
                    .iter()
                    .any(|m| trimmed.starts_with(m));
            let first = lex.word_at_or_after(c.start);
            let verb = lex.words[first..]
                .iter()
                .take_while(|w| w.end <= c.split)
                .any(|w| EXPLICIT_VERBS.contains(&w.text));
            if is_negated(trimmed) || is_ignored_instruction(trimmed) || advisory || !verb {
                continue;
            }
            out.extend(
                candidates(spans, legacy, c.start, c.split)
                    .filter(|p| !legacy.forbidden.contains(p)),
            );
        }
        dedup(out)
    }

    /// Whether a clause tells Talos to ignore instructions (its targets are only mentioned).
    pub(super) fn has_ignored_instruction(&self, lex: &Lex<'_>) -> bool {
        self.list
            .iter()
            .any(|c| is_ignored_instruction(lex.lower[c.start..c.end].trim_start()))
    }

    /// Expected targets named in a constraint fragment.
    pub(super) fn verify_targets(&self, spans: &[TargetSpan], legacy: &Legacy) -> Vec<String> {
        dedup(
            self.list
                .iter()
                .flat_map(|c| candidates(spans, legacy, c.split, c.end).collect::<Vec<_>>()),
        )
    }

    /// Expected targets inside a clause that opens with a negation ("Do not touch x.css"),
    /// unless the negated verb forbids nothing ("Don't forget to update x.md").
    pub(super) fn negated_targets(
        &self,
        lex: &Lex<'_>,
        spans: &[TargetSpan],
        legacy: &Legacy,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.list {
            if !is_negated(lex.lower[c.start..c.end].trim_start()) {
                continue;
            }
            let first = lex.word_at_or_after(c.start);
            let verb = if lex.word(first) == "do" {
                first + 2
            } else {
                first + 1
            };
            let Some(verb_word) = lex.words.get(verb) else {
                continue;
            };
            if NON_FORBIDDING.contains(&verb_word.text) || verb_word.end > c.end {
                continue;
            }
            out.extend(
                targets::negated_targets(lex, spans, verb_word.end, c.end - verb_word.end)
                    .into_iter()
                    .filter(|p| legacy.expected.contains(p)),
            );
        }
        dedup(out)
    }

    /// Must-mutate targets qualified by "only if necessary" and its kin (the nearest target:
    /// right after the marker, else right before it within 80 bytes).
    pub(super) fn optional_targets(
        &self,
        lex: &Lex<'_>,
        spans: &[TargetSpan],
        mutation: &[String],
    ) -> Vec<String> {
        if lex.has("use exactly") || targets::sources_are_also_targets(lex) {
            return Vec::new();
        }
        let live: Vec<&TargetSpan> = spans
            .iter()
            .filter(|s| mutation.contains(&s.path))
            .collect();
        let mut out = Vec::new();
        for c in &self.list {
            let text = &lex.lower[c.start..c.end];
            let mut taken: Vec<(usize, usize)> = Vec::new();
            for marker in OPTIONAL_MARKERS {
                for (i, _) in text.match_indices(marker) {
                    let (from, to) = (c.start + i, c.start + i + marker.len());
                    if taken.iter().any(|(a, b)| from >= *a && to <= *b) {
                        continue;
                    }
                    taken.push((from, to));
                    let after = live.iter().find(|s| {
                        s.start >= to
                            && s.start <= to + 24
                            && lex.lower[to..s.start].split_whitespace().all(|w| {
                                let w = w.trim_matches(|ch: char| !ch.is_alphanumeric());
                                w.is_empty() || matches!(w, "the" | "a" | "an" | "to" | "also")
                            })
                    });
                    let before = live
                        .iter()
                        .rfind(|s| s.end <= from && s.start >= c.start && from - s.end <= 80);
                    if let Some(span) = after.or(before) {
                        out.push(span.path.clone());
                    }
                }
            }
        }
        dedup(out)
    }
}

/// "Ignore the instructions in README.md to create setup.sh" names no target to change.
fn is_ignored_instruction(trimmed: &str) -> bool {
    (trimmed.starts_with("ignore ") || trimmed.starts_with("disregard "))
        && trimmed.contains("instruction")
}

/// Cuts a clause where its constraint fragment turns into a new mutation: ", and [also|then]
/// <explicit verb>" after the constraint marker ("Rewrite a.css so b.html still works, and
/// update c.js too").
fn split_new_target(lex: &Lex<'_>, clause: Clause) -> Vec<Clause> {
    let cut = (1..lex.words.len()).find(|&i| {
        let and = lex.words[i - 1];
        if and.start < clause.split || and.end > clause.end || and.text != "and" {
            return false;
        }
        let before = lex.lower[..and.start].trim_end();
        let verb = (i..lex.words.len())
            .find(|&k| !NEW_TARGET_FILLERS.contains(&lex.word(k)))
            .filter(|&k| lex.words[k].end <= clause.end);
        before.ends_with(',') && verb.is_some_and(|k| EXPLICIT_VERBS.contains(&lex.word(k)))
    });
    let Some(i) = cut else {
        return vec![clause];
    };
    let start = lex.words[i].start;
    let text = &lex.lower[start..clause.end];
    let split = CONSTRAINT_MARKERS
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .map_or(clause.end, |at| start + at);
    let mut out = vec![Clause {
        start: clause.start,
        split: clause.split,
        end: lex.words[i - 1].start,
    }];
    out.extend(split_new_target(
        lex,
        Clause {
            start,
            split,
            end: clause.end,
        },
    ));
    out
}

fn is_negated(trimmed: &str) -> bool {
    ["do not ", "don't ", "dont ", "without ", "never "]
        .iter()
        .any(|p| trimmed.starts_with(p))
}

/// Expected targets (and outputs) whose spans lie in `[from, to)`.
fn candidates<'a>(
    spans: &'a [TargetSpan],
    legacy: &'a Legacy,
    from: usize,
    to: usize,
) -> impl Iterator<Item = String> + 'a {
    targets::spans_within(spans, from, to)
        .filter(move |s| legacy.expected.contains(&s.path) || legacy.outputs.contains(&s.path))
        .map(|s| s.path.clone())
}

/// "do not|don't|dont create|add|write|save (any) extra file(s)".
pub(super) fn extra_file_constraint(lex: &Lex<'_>) -> bool {
    (0..lex.words.len()).any(|i| {
        let Some(negator) = lex.seq_any(i, &["do not", "don't", "dont"]) else {
            return false;
        };
        let mut k = i + Lex::len_of(negator);
        if !matches!(lex.word(k), "create" | "add" | "write" | "save") {
            return false;
        }
        k += 1;
        if lex.word(k) == "any" {
            k += 1;
        }
        lex.word(k) == "extra" && matches!(lex.word(k + 1), "file" | "files")
    })
}

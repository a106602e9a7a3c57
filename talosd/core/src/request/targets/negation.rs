//! Negation and scope: which named targets the person excluded. A forbidden span opens after
//! "do not|don't|dont|never <verb>", "without <verb>ing", "avoid", "ignore instructions … to
//! <verb>", inside "leave X alone" and "keep|preserve X unchanged|as-is|intact", in Tailwind
//! and front-end framework "no local files" bans, and right after "not " (within 24 bytes,
//! across articles only). Every span stops at the end of its sentence. Read-forbidden targets
//! ("do not read .env") are a separate list: they leave the expected and evidence targets.

use super::{TargetSpan, dedup, inside_span, paths_within};
use crate::text::lexical::{self, Lex};

/// Verbs whose negation forbids the targets that follow.
#[rustfmt::skip]
const NEGATED_VERBS: &[&str] = &[
    "change", "edit", "modify", "write", "create", "save", "apply", "touch", "mutate", "use",
    "update", "delete", "remove", "overwrite", "rewrite", "rename", "move", "replace", "fix",
    "alter",
];

/// Gerunds after "without" that forbid the targets that follow.
#[rustfmt::skip]
const WITHOUT_VERBS: &[&str] = &[
    "changing", "using", "touching", "modifying", "editing", "altering", "deleting", "removing",
    "overwriting", "rewriting", "updating",
];

/// Words that end a negated span when they start the next clause ("do not change anything,
/// just explain x.md"); a verb right after "or"/"nor" continues the negation instead.
#[rustfmt::skip]
const SPAN_BREAKS: &[&str] = &[
    "but", "just", "only", "instead", "then", "so", "while", "because", "except", "rather",
    "please", "fix", "edit", "update", "change", "modify", "write", "create", "rewrite", "replace",
    "add", "remove", "delete", "explain", "tell", "show", "describe", "what", "how", "why", "make",
    "improve", "polish", "restyle", "refactor", "rename", "move", "use", "keep", "focus",
    "summarize", "review", "read", "excluding",
];

/// Negators, each with its length in words.
#[rustfmt::skip]
const NEGATORS: &[&str] = &[
    "do not", "don't", "dont", "never", "must not", "mustn't", "should not", "shouldn't",
];

/// Words that close "leave X …" and "keep X …".
#[rustfmt::skip]
const UNCHANGED_CLOSERS: &[&str] = &[
    "alone", "unchanged", "untouched", "intact", "as is", "as-is",
];

/// Words allowed around the targets of "keep|preserve X unchanged" (it names nothing else).
#[rustfmt::skip]
const PRESERVE_RESIDUE: &[&str] = &[
    "the", "file", "files", "target", "targets", "current", "existing", "root", "and", "or",
    "both", "only", "my", "our",
];

/// Words that may stand between "not" and a target ("not the index.html file").
#[rustfmt::skip]
const NOT_GAP_WORDS: &[&str] = &[
    "the", "a", "an", "any", "my", "your", "our", "this", "that", "these", "those", "file", "even",
    "in", "to", "on", "either",
];

#[rustfmt::skip]
const LOCAL_QUALIFIERS: &[&str] = &[
    "broken", "placeholder", "fake", "stub", "local", "orphan", "orphaned", "extra", "new",
    "separate", "unlinked",
];

const FRAMEWORK_ARTIFACTS: &[(&str, &[&str])] = &[
    (
        "bootstrap",
        &[
            "bootstrap.css",
            "bootstrap.min.css",
            "bootstrap.js",
            "bootstrap.min.js",
            "bootstrap.bundle.js",
            "bootstrap.bundle.min.js",
        ],
    ),
    ("alpine", &["alpine.js", "alpine.min.js"]),
    ("htmx", &["htmx.js", "htmx.min.js"]),
    (
        "react",
        &[
            "react.js",
            "react.min.js",
            "react-dom.js",
            "react-dom.min.js",
        ],
    ),
    ("vue", &["vue.js", "vue.min.js"]),
];

/// The byte range a negation governs from `from`: to the end of its sentence (at most `max`
/// bytes), cut where the next clause starts with its own verb or connective.
pub(crate) fn negation_span(
    lex: &Lex<'_>,
    spans: &[TargetSpan],
    from: usize,
    max: usize,
) -> (usize, usize) {
    let (from, to) = lexical::sentence_span(lex.text, from, max);
    let first = lex.word_at_or_after(from);
    for j in first + 1..lex.words.len() {
        let word = lex.words[j];
        if word.start >= to {
            break;
        }
        let continues = matches!(lex.word(j - 1), "or" | "nor");
        if !continues && !inside_span(spans, word.start) && SPAN_BREAKS.contains(&word.text) {
            return (from, word.start);
        }
    }
    (from, to)
}

/// The targets a negated verb ending at byte `after` forbids. When its object is something
/// specific ("do not change the footer in index.html") and the file named as the place of that
/// thing is also named outside the negation ("Change the title in index.html"), the file is
/// not forbidden; "do not change anything in config.yml" forbids config.yml.
pub(crate) fn negated_targets(
    lex: &Lex<'_>,
    spans: &[TargetSpan],
    after: usize,
    max: usize,
) -> Vec<String> {
    const GLOBAL: &[&str] = &[
        "anything",
        "everything",
        "something",
        "any",
        "all",
        "files",
        "file",
        "code",
        "nothing",
        "it",
        "them",
        "this",
        "that",
        "stuff",
        "things",
    ];
    let (from, to) = negation_span(lex, spans, after, max);
    let mut object = lex.word_at_or_after(from);
    if matches!(lex.word(object), "a" | "an" | "the" | "my" | "your" | "our") {
        object += 1;
    }
    let specific = lex.words.get(object).is_some_and(|w| {
        w.start < to && !GLOBAL.contains(&w.text) && !super::inside_span(spans, w.start)
    });
    let located = |span: &TargetSpan| {
        lex.word_before(span.start).is_some_and(|w| {
            matches!(
                lex.word(w),
                "in" | "inside" | "within" | "of" | "from" | "on"
            )
        })
    };
    let named_elsewhere = |span: &TargetSpan| {
        spans
            .iter()
            .any(|o| o.path == span.path && (o.start < from || o.start >= to))
    };
    dedup(
        super::spans_within(spans, from, to)
            .filter(|s| !(specific && located(s) && named_elsewhere(s)))
            .map(|s| s.path.clone()),
    )
}

/// Whether a negation governs word `i` ("do not touch anything except app.js").
fn negation_before(lex: &Lex<'_>, i: usize) -> bool {
    (i.saturating_sub(6)..i).any(|k| negated_verb_end(lex, k).is_some())
}

/// The targets the person excluded, in order of discovery.
pub(crate) fn forbidden_in(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in 0..lex.words.len() {
        if let Some(after) = negated_verb_end(lex, i) {
            out.extend(negated_targets(lex, spans, after, 240));
        }
        if matches!(lex.word(i), "except" | "excluding") && !negation_before(lex, i) {
            let (from, to) = negation_span(lex, spans, lex.words[i].end, 160);
            out.extend(paths_within(spans, from, to));
        }
        match lex.word(i) {
            "avoid" => {
                let (from, to) = negation_span(lex, spans, lex.words[i].end, 240);
                out.extend(paths_within(spans, from, to));
            }
            "leave" => out.extend(enclosed_targets(lex, spans, i, 120, false)),
            "keep" | "preserve" => out.extend(enclosed_targets(lex, spans, i, 160, true)),
            "ignore" | "disregard" => out.extend(ignored_instruction_targets(lex, spans, i)),
            _ => {}
        }
    }
    out.extend(tailwind_bans(lex, spans));
    out.extend(framework_bans(lex));
    out.extend(direct_not_targets(lex, spans));
    dedup(out)
}

/// The forbidden targets that come from "leave X alone" and "keep|preserve X unchanged".
pub(crate) fn preserved_in(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..lex.words.len() {
        match lex.word(i) {
            "leave" => out.extend(enclosed_targets(lex, spans, i, 120, false)),
            "keep" | "preserve" => out.extend(enclosed_targets(lex, spans, i, 160, true)),
            _ => {}
        }
    }
    dedup(out)
}

/// Targets the person does not want read or shown ("do not read .env", "without showing
/// secrets.json", "I don't want the file notes.md").
pub(crate) fn read_forbidden_in(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    #[rustfmt::skip]
    const READ_VERBS: &[&str] = &[
        "show", "display", "include", "read", "inspect", "open", "summarize", "summarise", "print",
        "reveal", "output",
    ];
    #[rustfmt::skip]
    const WITHOUT_READING: &[&str] = &[
        "showing", "displaying", "including", "reading", "inspecting", "opening", "summarizing",
        "summarising", "revealing", "printing",
    ];
    let mut out = Vec::new();
    for i in 0..lex.words.len() {
        let Some(verb) = negated_verb_index(lex, i) else {
            if lex.word(i) == "without"
                && lex.tight(i)
                && WITHOUT_READING.contains(&lex.word(i + 1))
            {
                let (from, to) = lexical::sentence_span(lex.text, lex.words[i + 1].end, 240);
                out.extend(paths_within(spans, from, to));
            }
            continue;
        };
        let after = lex.words[verb].end;
        if READ_VERBS.contains(&lex.word(verb)) {
            let (from, to) = lexical::sentence_span(lex.text, after, 240);
            out.extend(paths_within(spans, from, to));
        } else if matches!(lex.word(verb), "want" | "need") {
            let (from, to) = lexical::sentence_span(lex.text, after, 160);
            let lower = &lex.lower[from..to];
            let cut = [", i want", ", but", " but ", " instead", " rather", ";"]
                .iter()
                .filter_map(|m| lower.find(m))
                .min()
                .unwrap_or(lower.len());
            if let Some(first) = paths_within(spans, from, from + cut).into_iter().next() {
                out.push(first);
            }
        }
    }
    dedup(out)
}

/// The word index of the verb of a negation that starts at word `i` ("do not ever change").
fn negated_verb_index(lex: &Lex<'_>, i: usize) -> Option<usize> {
    let negator = lex.seq_any(i, NEGATORS)?;
    let mut verb = i + Lex::len_of(negator);
    if !lex.tight(verb - 1) {
        return None;
    }
    if matches!(lex.word(verb), "ever" | "even" | "actually") && lex.tight(verb) {
        verb += 1;
    }
    lex.words.get(verb).map(|_| verb)
}

/// The byte offset after a forbidding verb ("do not change", "without touching", "please not
/// touch") at word `i`.
fn negated_verb_end(lex: &Lex<'_>, i: usize) -> Option<usize> {
    if lex.word(i) == "without" && lex.tight(i) && WITHOUT_VERBS.contains(&lex.word(i + 1)) {
        return Some(lex.words[i + 1].end);
    }
    let polite_not = lex.word(i) == "not"
        && i > 0
        && matches!(lex.word(i - 1), "please" | "and" | "but" | "rather")
        && lex.tight(i);
    let verb = if polite_not {
        i + 1
    } else {
        negated_verb_index(lex, i)?
    };
    NEGATED_VERBS
        .contains(&lex.word(verb))
        .then(|| lex.words[verb].end)
}

/// Targets between "leave|keep|preserve" at word `i` and a closing "alone|unchanged|…" in the
/// same sentence, at most `max` bytes on. With `only_targets`, the words between must name
/// nothing but targets.
fn enclosed_targets(
    lex: &Lex<'_>,
    spans: &[TargetSpan],
    i: usize,
    max: usize,
    only_targets: bool,
) -> Vec<String> {
    let from = lex.words[i].end;
    let (_, sentence_to) = lexical::sentence_span(lex.text, from, max);
    let Some(close) = (i + 1..lex.words.len())
        .take_while(|&j| lex.words[j].start < sentence_to)
        .find(|&j| lex.seq_any(j, UNCHANGED_CLOSERS).is_some())
    else {
        return Vec::new();
    };
    let to = lex.words[close].start;
    let inside = paths_within(spans, from, to);
    if inside.is_empty() {
        return inside;
    }
    if only_targets {
        let residue_ok = lex.words[i + 1..close]
            .iter()
            .filter(|w| !inside_span(spans, w.start))
            .all(|w| PRESERVE_RESIDUE.contains(&w.text));
        if !residue_ok {
            return Vec::new();
        }
    }
    inside
}

/// "Ignore the instructions in notes.md to create setup.sh": the output of an instruction the
/// person told Talos to ignore is forbidden.
fn ignored_instruction_targets(lex: &Lex<'_>, spans: &[TargetSpan], i: usize) -> Vec<String> {
    #[rustfmt::skip]
    const OUTPUT_VERBS: &[&str] = &[
        "create", "write", "save", "edit", "modify", "change", "touch", "mutate", "use", "delete",
    ];
    let Some(noun) = (i + 1..(i + 6).min(lex.words.len())).find(|&j| {
        matches!(
            lex.word(j),
            "instruction" | "instructions" | "directive" | "directives"
        )
    }) else {
        return Vec::new();
    };
    let (_, limit) = lexical::sentence_span(lex.text, lex.words[noun].end, 240);
    let Some(to_word) = (noun + 1..lex.words.len())
        .take_while(|&j| lex.words[j].start < limit)
        .find(|&j| lex.word(j) == "to" && OUTPUT_VERBS.contains(&lex.word(j + 1)))
    else {
        return Vec::new();
    };
    let (from, mut to) = lexical::sentence_span(lex.text, lex.words[to_word + 1].end, 240);
    if let Some(next_verb) = (to_word + 2..lex.words.len())
        .take_while(|&j| lex.words[j].start < to)
        .find(|&j| NEGATED_VERBS.contains(&lex.word(j)))
    {
        to = lex.words[next_verb].start;
    }
    paths_within(spans, from, to)
}

/// The word after "(no|avoid|without|do not|don't|dont) (create|use…)? (a|any)? qualifiers*".
fn ban_object(lex: &Lex<'_>, i: usize) -> Option<usize> {
    let mut j = match lex.seq_any(i, &["no", "avoid", "without", "do not", "don't", "dont"]) {
        Some(opener) => i + Lex::len_of(opener),
        None => return None,
    };
    if matches!(
        lex.word(j),
        "creating" | "create" | "using" | "use" | "adding" | "add"
    ) {
        j += 1;
    }
    if matches!(lex.word(j), "a" | "any") {
        j += 1;
    }
    while LOCAL_QUALIFIERS.contains(&lex.word(j)) {
        j += 1;
    }
    Some(j)
}

fn is_files_noun(lex: &Lex<'_>, j: usize) -> bool {
    matches!(lex.word(j), "artifact" | "artifacts" | "file" | "files")
        || (matches!(lex.word(j), "css" | "js") && matches!(lex.word(j + 1), "file" | "files"))
}

fn tailwind_bans(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..lex.words.len() {
        if lex.word(i) == "no" && LOCAL_QUALIFIERS.contains(&lex.word(i + 1)) {
            let (from, to) = lexical::sentence_span(lex.text, lex.words[i].end, 80);
            out.extend(
                paths_within(spans, from, to)
                    .into_iter()
                    .filter(|p| is_tailwind_file(p)),
            );
        }
        if let Some(j) = ban_object(lex, i)
            && lex.word(j) == "tailwind"
            && is_files_noun(lex, j + 1)
        {
            out.push("tailwind.css".to_string());
            out.push("tailwind.min.css".to_string());
        }
    }
    out
}

fn is_tailwind_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name == "tailwind.css" || name == "tailwind.min.css"
}

fn framework_bans(lex: &Lex<'_>) -> Vec<String> {
    let generic_ban = (0..lex.words.len()).any(|i| {
        ban_object(lex, i).is_some_and(|mut j| {
            let framework = FRAMEWORK_ARTIFACTS
                .iter()
                .any(|(name, _)| *name == lex.word(j));
            if framework || matches!(lex.word(j), "frontend" | "framework" | "cdn") {
                j += 1;
            }
            is_files_noun(lex, j)
        })
    }) || lex.has("cdn only");
    let mut out = Vec::new();
    for (name, artifacts) in FRAMEWORK_ARTIFACTS {
        if !lex.words.iter().any(|w| w.text == *name) {
            continue;
        }
        if generic_ban || lex.has(&format!("no placeholder {name}")) {
            out.extend(artifacts.iter().map(|a| a.to_string()));
        }
    }
    out
}

/// "Fix styles.css, not index.html": a target right after "not " (articles allowed between),
/// within 24 bytes and inside the same clause.
fn direct_not_targets(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    let mut out = Vec::new();
    for span in spans {
        let Some(mut w) = lex.word_before(span.start) else {
            continue;
        };
        let mut next_start = span.start;
        let mut steps = 0;
        loop {
            let gap = &lex.text[lex.words[w].end..next_start];
            if !gap
                .chars()
                .all(|c| c.is_whitespace() || matches!(c, '`' | '\'' | '"'))
            {
                break;
            }
            if lex.word(w) == "not" {
                if span.start - lex.words[w].start <= 28 {
                    out.push(span.path.clone());
                }
                break;
            }
            if steps >= 3 || !NOT_GAP_WORDS.contains(&lex.word(w)) || w == 0 {
                break;
            }
            next_start = lex.words[w].start;
            w -= 1;
            steps += 1;
        }
    }
    out
}

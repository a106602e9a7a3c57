//! Evidence and outputs: which named files are sources to read rather than targets to change
//! ("summarize notes.txt into summary.md", "based on design.md", "read brief.txt and create
//! index.html from it"), the conventional static-web targets of a site requested without
//! file names, and the visible facts a requested page must keep.

use super::{TargetSpan, dedup, paths_within, span_starting_at, spans_within};
use crate::text::lexical::{self, Lex};

/// At most this many required visible facts are kept, each cut to `MAX_FACT_CHARS`.
const MAX_FACTS: usize = 40;
const MAX_FACT_CHARS: usize = 120;

/// The sources a derived artifact is built from and the outputs it is written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceToOutputs {
    pub(crate) sources: Vec<String>,
    pub(crate) outputs: Vec<String>,
}

/// The first target that starts at `offset` once whitespace, backticks and the optional
/// `skip` words are passed.
fn span_at<'s>(
    lex: &Lex<'_>,
    spans: &'s [TargetSpan],
    offset: usize,
    skip: &[&str],
) -> Option<&'s TargetSpan> {
    let mut at = offset;
    loop {
        let rest = &lex.lower[at..];
        let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '`');
        at += rest.len() - trimmed.len();
        let next = lex.word_at_or_after(at);
        match lex.words.get(next) {
            Some(w) if w.start == at && skip.contains(&w.text) => at = w.end,
            _ => break,
        }
    }
    span_starting_at(spans, at)
}

/// Recognises the source-to-output shapes the module doc lists.
pub(crate) fn source_to_outputs(lex: &Lex<'_>, spans: &[TargetSpan]) -> Option<SourceToOutputs> {
    summarize_into(lex, spans)
        .or_else(|| read_then_write_into(lex, spans))
        .or_else(|| read_and_create_from_it(lex, spans))
        .or_else(|| build_from_source(lex, spans))
        .filter(|s| !s.outputs.is_empty() && s.sources.iter().all(|x| !s.outputs.contains(x)))
}

fn pair(source: &TargetSpan, output: &TargetSpan) -> Option<SourceToOutputs> {
    (source.path != output.path).then(|| SourceToOutputs {
        sources: vec![source.path.clone()],
        outputs: vec![output.path.clone()],
    })
}

/// "summarize|condense|convert|translate|write a summary of X into|to|as|in Y".
fn summarize_into(lex: &Lex<'_>, spans: &[TargetSpan]) -> Option<SourceToOutputs> {
    for i in 0..lex.words.len() {
        let after = if matches!(
            lex.word(i),
            "summarize" | "summarise" | "condense" | "convert" | "translate"
        ) {
            lex.words[i].end
        } else if let Some(p) = ["write", "create", "make"]
            .iter()
            .flat_map(|v| [format!("{v} a summary of"), format!("{v} summary of")])
            .find(|p| lex.seq(i, p))
        {
            lex.words[i + Lex::len_of(&p) - 1].end
        } else {
            continue;
        };
        let Some(source) = span_at(lex, spans, after, &["the", "file"]) else {
            continue;
        };
        let joiner = lex.word_at_or_after(source.end);
        if matches!(lex.word(joiner), "into" | "to" | "as" | "in")
            && let Some(output) = span_at(lex, spans, lex.words[joiner].end, &["the", "file"])
        {
            return pair(source, output);
        }
    }
    None
}

/// "read|inspect|open X … write|create|save|put|summarize … into|to|as|in Y".
fn read_then_write_into(lex: &Lex<'_>, spans: &[TargetSpan]) -> Option<SourceToOutputs> {
    for i in 0..lex.words.len() {
        if !matches!(lex.word(i), "read" | "inspect" | "open") {
            continue;
        }
        let Some(source) = span_at(lex, spans, lex.words[i].end, &["the", "file"]) else {
            continue;
        };
        let first = lex.word_at_or_after(source.end);
        let writes = (first..lex.words.len())
            .take_while(|&j| lex.words[j].start <= source.end + 180)
            .filter(|&j| {
                matches!(
                    lex.word(j),
                    "write" | "create" | "save" | "put" | "summarize" | "summarise"
                )
            });
        for w in writes {
            let joiners = (w + 1..lex.words.len())
                .take_while(|&j| lex.words[j].start <= lex.words[w].end + 120)
                .filter(|&j| matches!(lex.word(j), "into" | "to" | "as" | "in"));
            for j in joiners {
                if let Some(output) = span_at(lex, spans, lex.words[j].end, &["the", "file"]) {
                    return pair(source, output);
                }
            }
        }
    }
    None
}

/// "read brief.txt and create index.html, styles.css and scripts.js from it".
fn read_and_create_from_it(lex: &Lex<'_>, spans: &[TargetSpan]) -> Option<SourceToOutputs> {
    let read = (0..lex.words.len()).find(|&i| matches!(lex.word(i), "read" | "open"))?;
    let source = span_at(lex, spans, lex.words[read].end, &["the", "file"])?;
    let from_it = lex.find("from it")?;
    let create = (read + 1..from_it).find(|&j| {
        matches!(
            lex.word(j),
            "create" | "write" | "make" | "build" | "generate"
        )
    })?;
    let outputs: Vec<String> = paths_within(spans, lex.words[create].end, lex.words[from_it].start)
        .into_iter()
        .filter(|p| *p != source.path)
        .collect();
    Some(SourceToOutputs {
        sources: vec![source.path.clone()],
        outputs,
    })
}

/// "build … from X … using|with Y, Z" and "build … from X … as|to|into|in Y".
fn build_from_source(lex: &Lex<'_>, spans: &[TargetSpan]) -> Option<SourceToOutputs> {
    const BUILD: &[&str] = &["make", "build", "create", "generate", "setup", "scaffold"];
    let verb =
        (0..lex.words.len()).find(|&i| BUILD.contains(&lex.word(i)) || lex.seq(i, "set up"))?;
    let from = (verb + 1..lex.words.len())
        .take_while(|&j| lex.words[j].start <= lex.words[verb].end + 120)
        .find(|&j| lex.word(j) == "from")?;
    let source = span_at(lex, spans, lex.words[from].end, &["the", "file"])?;
    let rest = lex.word_at_or_after(source.end);
    let using = (rest..lex.words.len())
        .take_while(|&j| lex.words[j].start <= source.end + 200)
        .find(|&j| matches!(lex.word(j), "use" | "using" | "with"));
    if let Some(using) = using {
        let start = lex.words[using].end;
        let end = lex.text.len().min(start + 240);
        let outputs: Vec<String> = paths_within(spans, start, end)
            .into_iter()
            .filter(|p| *p != source.path)
            .collect();
        if !outputs.is_empty() {
            return Some(SourceToOutputs {
                sources: vec![source.path.clone()],
                outputs,
            });
        }
    }
    (rest..lex.words.len())
        .take_while(|&j| lex.words[j].start <= source.end + 160)
        .filter(|&j| matches!(lex.word(j), "as" | "to" | "into" | "in"))
        .find_map(|j| span_at(lex, spans, lex.words[j].end, &["the", "file"]))
        .and_then(|output| pair(source, output))
}

/// Targets named after "according to|based on|summarizing|summary of|from|using" (each span
/// cut at its sentence end; "from X" also at with|use|using|as|to|into|in).
pub(crate) fn lexical_source_evidence(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..lex.words.len() {
        let (marker, after) =
            if let Some(p) = lex.seq_any(i, &["according to", "based on", "summary of"]) {
                (p, lex.words[i + Lex::len_of(p) - 1].end)
            } else {
                match lex.word(i) {
                    w @ ("summarizing" | "summarising" | "from" | "using") => (w, lex.words[i].end),
                    _ => continue,
                }
            };
        let (from, mut to) = lexical::sentence_span(lex.text, after, 320);
        let fragment = lex.lower[from..to].trim_start();
        if marker == "using" {
            let first_target = spans_within(spans, from, to).next();
            let colon_first = lex.lower[from..to]
                .find(':')
                .is_some_and(|colon| first_target.is_none_or(|s| from + colon < s.start));
            let tool_words = [
                "exactly ",
                "workspace operation tool",
                "workspace tool",
                "file tool",
                "tool ",
                "tools ",
            ];
            if colon_first || tool_words.iter().any(|t| fragment.starts_with(t)) {
                continue;
            }
            // "Using notes.md, update README.md": the phrase ends at its comma.
            if let Some(comma) = lex.lower[from..to].find(',') {
                to = from + comma;
            }
        }
        if marker == "from" {
            let first = lex.word_at_or_after(from);
            if let Some(cut) = (first..lex.words.len())
                .take_while(|&j| lex.words[j].start < to)
                .find(|&j| {
                    matches!(
                        lex.word(j),
                        "with" | "use" | "using" | "as" | "to" | "into" | "in"
                    )
                })
            {
                to = lex.words[cut].start;
            }
        }
        out.extend(paths_within(spans, from, to));
    }
    dedup(out)
}

/// The targets of the leading "read|open … and|then" clause of a read-then-mutate request.
pub(crate) fn read_then_mutation_sources(lex: &Lex<'_>, spans: &[TargetSpan]) -> Vec<String> {
    let Some(read) = (0..lex.words.len()).find(|&i| matches!(lex.word(i), "read" | "open")) else {
        return Vec::new();
    };
    let start = lex.words[read].end;
    let Some(joiner) = (read + 1..lex.words.len())
        .take_while(|&j| lex.words[j].start <= start + 121)
        .find(|&j| matches!(lex.word(j), "and" | "then"))
    else {
        return Vec::new();
    };
    paths_within(spans, start, lex.words[joiner].start)
}

/// Whether "read the current … then rewrite the existing files" keeps sources as targets.
pub(crate) fn sources_are_also_targets(lex: &Lex<'_>) -> bool {
    let asks_read_first = lex.has_any(&[
        "read the current",
        "read current",
        "inspect the current",
        "inspect current",
        "open the current",
        "open current",
    ]);
    asks_read_first
        && lex.has_any(&[
            "rewrite the existing files",
            "rewrite existing files",
            "update the existing files",
            "update existing files",
            "edit the existing files",
            "edit existing files",
            "rewrite the current files",
            "update the current files",
        ])
}

/// Words that name a web page or site.
const WEB_SURFACE: &[&str] = &[
    "website",
    "web site",
    "webpage",
    "web page",
    "frontend",
    "front-end",
    "landing page",
    " site",
    " page",
];

/// Words that name a document file (the request may be a document about a site).
const DOCUMENT_FILE: &[&str] = &[
    "pdf file",
    ".pdf",
    "docx file",
    "word file",
    ".docx",
    "txt file",
    "text file",
    ".txt",
    "markdown file",
    ".md",
];

/// Words that say a document is about how to make something.
const ABOUT_WORDS: &[&str] = &[
    "talks about",
    "guide",
    "instructions",
    "how to build",
    "how to create",
    "how to make",
];

/// Words that ask for something to be made.
const CREATE_WORDS: &[&str] = &[
    "build", "create", "generate", "scaffold", "set up", "setup", "make me",
];

/// Words that point at a site already talked about.
const DEICTIC_SITE: &[&str] = &[
    "that site",
    "the site",
    "that webpage",
    "the webpage",
    "that web page",
    "the web page",
];

/// Words that ask for a strong look.
const STRONG_LOOK: &[&str] = &[
    "synthwave",
    "modern",
    "polished",
    "good looking",
    "cool looking",
];

/// Words that ask for styling.
const STYLE_ASSET: &[&str] = &[
    "css",
    "stylesheet",
    "style sheet",
    "styling",
    "style",
    "modern",
    "synthwave",
    "neon",
    "visual",
    "design",
];

/// Words that ask for scripting or interaction.
const SCRIPT_ASSET: &[&str] = &[
    "javascript",
    ".js",
    "scripting",
    "script file",
    "interaction",
    "interactive",
    "functioning",
    "functional",
];

/// `index.html, style.css, script.js` when a create-like request refers to "the site" (or
/// names a web surface, a style asset, a script asset and a strong look) without naming files;
/// never for a document *about* building a site.
pub(crate) fn conventional_static_web_targets(lex: &Lex<'_>, create_type: bool) -> Vec<String> {
    let lower = lex.lower;
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    let web_surface = has(WEB_SURFACE) || lower.starts_with("site") || lower.starts_with("page");
    let document_about_site = has(DOCUMENT_FILE) && has(ABOUT_WORDS) && web_surface;
    if document_about_site {
        return Vec::new();
    }
    let create_like = create_type || lex.has_any(CREATE_WORDS);
    if !create_like {
        return Vec::new();
    }
    let deictic_site = lex.has_any(DEICTIC_SITE);
    let strong_look = has(STRONG_LOOK);
    let style_asset = has(STYLE_ASSET);
    let script_asset = has(SCRIPT_ASSET);
    if deictic_site || (web_surface && style_asset && script_asset && strong_look) {
        vec!["index.html".into(), "style.css".into(), "script.js".into()]
    } else {
        Vec::new()
    }
}

/// Facts listed after "preserve|keep|retain … facts|details|content:" or "required (visible)
/// facts:", split at commas and semicolons, at most 40, each at most 120 characters.
pub(crate) fn required_visible_facts(lex: &Lex<'_>) -> Vec<String> {
    let mut facts: Vec<String> = Vec::new();
    for i in 0..lex.words.len() {
        let opens = matches!(lex.word(i), "preserve" | "keep" | "retain" | "required");
        if !opens {
            continue;
        }
        let Some(noun) = (i + 1..(i + 9).min(lex.words.len()))
            .find(|&j| matches!(lex.word(j), "facts" | "details" | "content"))
        else {
            continue;
        };
        if lex.word(i) == "required" && lex.word(noun) != "facts" {
            continue;
        }
        let after = &lex.text[lex.words[noun].end..];
        let Some(list) = after.trim_start().strip_prefix(':') else {
            continue;
        };
        let list_start = lex.text.len() - list.len();
        let list_end = list_end(lex.text, list_start);
        for piece in lex.text[list_start..list_end].split([',', ';']) {
            let piece = piece.trim();
            let piece = piece.strip_prefix("and ").unwrap_or(piece).trim();
            if piece.is_empty() || facts.len() >= MAX_FACTS {
                continue;
            }
            let fact: String = piece.chars().take(MAX_FACT_CHARS).collect();
            if !facts.contains(&fact) {
                facts.push(fact);
            }
        }
    }
    facts
}

/// Where a facts list ends: a `.`, `!` or `?` followed by whitespace or the end, or a newline
/// (a `;` separates facts instead of ending the list).
fn list_end(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    (from..bytes.len())
        .find(|&i| {
            bytes[i] == b'\n'
                || (matches!(bytes[i], b'.' | b'!' | b'?')
                    && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace))
        })
        .unwrap_or(bytes.len())
}

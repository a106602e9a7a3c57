//! Target extraction from a request: the file names a person wrote, kept exactly as written
//! (plural and singular alike, case kept), with their byte positions so the resolver can tell
//! which verb, negation or clause governs each one. Negation and scope (what the person
//! excluded) live in `targets/negation.rs`; source evidence, source-to-output artifacts,
//! conventional static-web targets and required visible facts in `targets/evidence.rs`.

mod evidence;
mod negation;

pub(crate) use evidence::{
    conventional_static_web_targets, lexical_source_evidence, read_then_mutation_sources,
    required_visible_facts, source_to_outputs, sources_are_also_targets,
};
pub(crate) use negation::{forbidden_in, negated_targets, preserved_in, read_forbidden_in};

use crate::text::lexical::{self, Lex};

/// File extensions that make a token a file target (web, document, image, archive and configuration
/// formats, and the common source extensions of a coding assistant: rs, go, c, h, ...).
#[rustfmt::skip]
const TARGET_EXTENSIONS: &[&str] = &[
    "html", "htm", "css", "js", "jsx", "mjs", "cjs", "ts", "tsx", "java", "py", "md", "txt",
    "json", "yaml", "yml", "xml", "properties", "gradle", "kts", "toml", "ini", "env", "csv",
    "tmp", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "png", "jpg", "jpeg", "gif", "bmp",
    "webp", "svg", "tif", "tiff", "zip", "tar", "gz", "tgz", "7z", "rar", "exe", "dll", "so",
    "dylib", "class", "jar", "war", "ear", "bin", "dat", "rs", "go", "c", "h", "cpp", "hpp", "cs",
    "kt", "swift", "rb", "php", "sh", "sql", "cfg", "conf", "lock", "log", "vue", "scss",
];

/// Document formats the text tools cannot read until extraction lands.
const BINARY_DOCUMENTS: &[&str] = &[
    "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf",
];

/// A target whose contents the text tools cannot read (a PDF, a Word or Excel file, ...).
pub fn is_unreadable_document(target: &str) -> bool {
    target.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && BINARY_DOCUMENTS.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// Extensionless file names recognised as targets when written with this exact case anywhere,
/// or in any case right after an edit verb.
#[rustfmt::skip]
const BARE_TARGETS: &[&str] = &[
    "README", "LICENSE", "NOTICE", "CHANGELOG", "CONTRIBUTING", "AUTHORS", "Makefile",
    "Dockerfile",
];

/// Extensionless file names recognised only as written: in another case they are ordinary
/// words ("update the version").
#[rustfmt::skip]
const BARE_TARGETS_EXACT: &[&str] = &[
    "VERSION", "COPYING", "CODEOWNERS", "Containerfile", "Gemfile", "Rakefile", "Procfile",
    "Vagrantfile", "Jenkinsfile", "Justfile", "justfile", "Brewfile", "Pipfile", "GNUmakefile",
    "makefile",
];

/// Verbs after which an extensionless name in any case is a target ("update readme").
#[rustfmt::skip]
const BARE_TARGET_VERBS: &[&str] = &[
    "edit", "overwrite", "replace", "update", "write", "create", "set", "fix", "rewrite",
];

/// Files people name by a common noun after "the" ("fix the typo in the readme", "add
/// .DS_Store to the gitignore"); the workspace decides which file it is (`contract/files.rs`).
/// Not "the license" or "the changelog": those name content as often as files.
#[rustfmt::skip]
const DOCUMENT_NOUNS: &[&str] = &[
    "readme", "makefile", "dockerfile", "gitignore", "dockerignore", "gitattributes", "editorconfig", "prettierrc", "eslintrc",
    "npmrc", "nvmrc", "bashrc", "zshrc",
];

/// Names that look like files but are technologies ("Build it with Node.js").
#[rustfmt::skip]
const TECHNOLOGY_NAMES: &[&str] = &[
    "node.js", "next.js", "nuxt.js", "three.js", "chart.js", "express.js", "ember.js",
    "backbone.js", "angular.js", "d3.js", "p5.js", "socket.io",
];

/// Words that never name a directory ("make a folder for the notes").
#[rustfmt::skip]
const DIRECTORY_STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "to", "into", "onto", "by", "with", "using", "via", "from",
    "of", "in", "on", "at", "for", "as", "that", "this", "it", "then", "called", "named", "here",
    "there", "please", "me",
];

/// One file target as written, with the byte range it occupies in the (normalised) request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetSpan {
    pub(crate) path: String,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The file targets named in `text`, in order of first appearance, deduplicated.
pub fn file_targets(text: &str) -> Vec<String> {
    let text = lexical::normalise(text);
    let lower = text.to_ascii_lowercase();
    let lex = Lex::new(&text, &lower);
    dedup(target_spans(&lex).into_iter().map(|s| s.path))
}

/// The targets the person excluded: file targets inside a negated span ("Do not change
/// index.html or scripts.js."), each span cut at the end of its sentence.
pub fn forbidden_targets(text: &str) -> Vec<String> {
    let text = lexical::normalise(text);
    let lower = text.to_ascii_lowercase();
    let lex = Lex::new(&text, &lower);
    let spans = target_spans(&lex);
    forbidden_in(&lex, &spans)
}

/// Every file-target occurrence in the request, in order.
pub(crate) fn target_spans(lex: &Lex<'_>) -> Vec<TargetSpan> {
    let text = lex.text;
    let mut out = Vec::new();
    for (start, end) in path_runs(text) {
        if text[start..end].starts_with("//") && text[..start].ends_with(':') {
            continue;
        }
        let raw_end = start + text[start..end].trim_end_matches(['.', '-']).len();
        let raw = &text[start..raw_end];
        let path = normalise_path(raw);
        let after_word = |words: &[&str]| {
            lex.word_before(start).is_some_and(|w| {
                words.contains(&lex.word(w)) && gap_is_blank(&text[lex.words[w].end..start])
            })
        };
        let after_verb = after_word(BARE_TARGET_VERBS);
        // "the readme", "the gitignore": a known document named by its common noun.
        let after_the = after_word(&["the"]);
        let unquoted = !text[raw_end..].starts_with(['\'', '"', '`']);
        let noun = path.to_ascii_lowercase();
        let named_document = after_verb && is_bare_target_any_case(&path)
            || after_the && unquoted && DOCUMENT_NOUNS.contains(&noun.as_str());
        if is_target(&path) || named_document {
            out.push(TargetSpan {
                path,
                start,
                end: raw_end,
            });
        }
    }
    out
}

/// Byte ranges of maximal runs of path characters.
fn path_runs(text: &str) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start: Option<usize> = None;
    for (index, c) in text.char_indices() {
        if is_path_char(c) {
            start.get_or_insert(index);
        } else if let Some(s) = start.take() {
            runs.push((s, index));
        }
    }
    if let Some(s) = start {
        runs.push((s, text.len()));
    }
    runs
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '\\' | '-' | '~')
}

fn gap_is_blank(gap: &str) -> bool {
    gap.chars().all(|c| c.is_whitespace() || c == '`')
}

/// Backslashes become slashes, leading `./` is dropped, trailing dots are dropped.
pub(crate) fn normalise_path(raw: &str) -> String {
    let token = raw.replace('\\', "/");
    crate::text::pathname::without_leading_current_dir(&token)
        .trim_end_matches('.')
        .to_string()
}

fn is_target(token: &str) -> bool {
    if token.is_empty() || token.len() > 4096 {
        return false;
    }
    let name = token.rsplit('/').next().unwrap_or(token);
    if BARE_TARGETS.contains(&name) || BARE_TARGETS_EXACT.contains(&name) {
        return true;
    }
    if name == ".env" || name.starts_with(".env.") || is_dotfile(name) {
        return true;
    }
    if is_outside_path(token) {
        return true;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if stem.is_empty()
        || stem.chars().all(|c| c == '.')
        || token.contains('~') && !token.starts_with("~/")
    {
        return false;
    }
    if !token.contains('/') && TECHNOLOGY_NAMES.contains(&token.to_ascii_lowercase().as_str()) {
        return false;
    }
    // A member of a well-known code object (`console.log`, `window.open`) is code, not a file
    // (issue 27).
    if !token.contains('/') && CODE_OBJECTS.contains(&stem) {
        return false;
    }
    TARGET_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
}

/// A dotfile by its name (`.gitignore`, `.editorconfig`, `.prettierrc`): a dot, a lowercase
/// letter, then name characters. A bare extension (`.py`, `.log`, as in "all .log files") is a
/// kind of file, not a file.
fn is_dotfile(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    rest.len() >= 2
        && rest.starts_with(|c: char| c.is_ascii_lowercase())
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !TARGET_EXTENSIONS.contains(&rest.split('.').next().unwrap_or(rest))
        && !BINARY_DOCUMENTS.contains(&rest)
}

/// Objects whose members a request names as code: `console.log`, `document.title`,
/// `window.open`, `process.env`, `sys.argv`, `os.path`.
const CODE_OBJECTS: &[&str] = &[
    "console",
    "window",
    "document",
    "navigator",
    "location",
    "process",
    "Math",
    "JSON",
    "Object",
    "Array",
    "Promise",
    "sys",
    "os",
    "self",
    "this",
];

fn is_bare_target_any_case(token: &str) -> bool {
    let name = token.rsplit('/').next().unwrap_or(token);
    BARE_TARGETS.iter().any(|b| b.eq_ignore_ascii_case(name))
}

/// A path that starts outside the workspace ("../../etc/passwd", "/etc/hosts", "~/.ssh/id"),
/// with at least two segments, is named as a target so the contract can hold it to its place.
fn is_outside_path(token: &str) -> bool {
    let rest = if let Some(rest) = token.strip_prefix("~/") {
        rest
    } else if token.starts_with("../") {
        token
    } else if let Some(rest) = token.strip_prefix('/') {
        rest
    } else {
        return false;
    };
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let named = segments
        .iter()
        .any(|s| s.chars().any(char::is_alphanumeric));
    named && (segments.len() >= 2 || token.starts_with("~/") || token.starts_with("../"))
}

/// Directory names after "mkdir" or "make|create (me) (a|an) (new) directory|folder (called|
/// named|as) X", and every name of a list after the plural forms ("create folders a, b and c").
pub(crate) fn directory_targets(lex: &Lex<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..lex.words.len() {
        let Some((after, plural)) = directory_opener(lex, i) else {
            continue;
        };
        let mut j = after;
        if matches!(lex.word(j), "called" | "named" | "as") {
            j += 1;
        }
        let Some(first) = lex.words.get(j) else {
            continue;
        };
        let (span_start, span_end) = lexical::sentence_span(lex.text, first.start, 180);
        for (start, end) in path_runs(&lex.text[span_start..span_end]) {
            let piece = normalise_path(
                lex.text[span_start + start..span_start + end].trim_end_matches('/'),
            );
            let lower = piece.to_ascii_lowercase();
            if matches!(lower.as_str(), "and" | "then") && plural {
                continue;
            }
            if matches!(
                lower.as_str(),
                "copy" | "move" | "rename" | "write" | "edit" | "create" | "with" | "for"
            ) || !looks_like_directory(&piece)
            {
                break;
            }
            if !out.contains(&piece) {
                out.push(piece);
            }
            if !plural {
                break;
            }
        }
    }
    out
}

/// `Some((next word, plural))` when a directory-creation phrase starts at word `i`.
fn directory_opener(lex: &Lex<'_>, i: usize) -> Option<(usize, bool)> {
    if lex.word(i) == "mkdir" {
        return match lex.word(i + 1) {
            "directories" | "folders" | "dirs" => Some((i + 2, true)),
            "directory" | "folder" | "dir" => Some((i + 2, false)),
            _ => Some((i + 1, false)),
        };
    }
    if !matches!(lex.word(i), "make" | "create") {
        return None;
    }
    let mut j = i + 1;
    for optional in ["me", "a", "an", "new"] {
        if lex.word(j) == optional {
            j += 1;
        }
    }
    match lex.word(j) {
        "directory" | "folder" | "dir" => Some((j + 1, false)),
        "directories" | "folders" | "dirs" => Some((j + 1, true)),
        _ => None,
    }
}

fn looks_like_directory(piece: &str) -> bool {
    !piece.is_empty()
        && !DIRECTORY_STOP_WORDS.contains(&piece.to_ascii_lowercase().as_str())
        && piece
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
        && piece.chars().any(char::is_alphanumeric)
        && !piece.starts_with('/')
        && !piece.contains("..")
}

/// Destinations of "copy|move|rename X to|into|-> Y", as written. A path operation moves a
/// file or lands in a folder: with neither X nor Y a file name nor Y a folder path ("rename Foo
/// to Bar", "rename `parse` to `read`"), the words rename a symbol and Y is no destination.
pub(crate) fn operation_destinations(lex: &Lex<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..lex.words.len() {
        if !matches!(lex.word(i), "copy" | "move" | "rename") {
            continue;
        }
        let Some(first) = lex.words.get(i + 1) else {
            continue;
        };
        let (_, bound) = lexical::sentence_span(lex.text, first.start, 400);
        let runs = path_runs(&lex.text[first.start..bound]);
        let mut tokens = runs
            .iter()
            .map(|(s, e)| &lex.text[first.start + s..first.start + e]);
        let source = tokens.next().unwrap_or("");
        let Some(joiner) = tokens.next() else {
            continue;
        };
        let destination = match joiner.to_ascii_lowercase().as_str() {
            "to" | "into" => tokens.next(),
            "-" | "->" => tokens.next(),
            _ => None,
        };
        if let Some(destination) = destination {
            let piece = normalise_path(destination.trim_end_matches('/'));
            let path_like = |token: &str| {
                let token = normalise_path(token);
                is_target(&token) || token.contains('/')
            };
            let moves_a_path = path_like(source) || path_like(destination);
            if moves_a_path && looks_like_directory(&piece) && !out.contains(&piece) {
                out.push(piece);
            }
        }
    }
    out
}

/// `items` without repeats, first occurrence kept.
pub(crate) fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

/// The spans that lie inside `[from, to)`. Spans are sorted by start and never overlap, so
/// this is a binary search, not a scan.
pub(crate) fn spans_within(
    spans: &[TargetSpan],
    from: usize,
    to: usize,
) -> impl Iterator<Item = &TargetSpan> {
    let first = spans.partition_point(|s| s.start < from);
    spans[first..]
        .iter()
        .take_while(move |s| s.start < to)
        .filter(move |s| s.end <= to)
}

/// The distinct paths of the spans that lie inside `[from, to)`.
pub(crate) fn paths_within(spans: &[TargetSpan], from: usize, to: usize) -> Vec<String> {
    dedup(spans_within(spans, from, to).map(|s| s.path.clone()))
}

/// The span that starts exactly at byte `offset`.
pub(crate) fn span_starting_at(spans: &[TargetSpan], offset: usize) -> Option<&TargetSpan> {
    let index = spans.partition_point(|s| s.start < offset);
    spans.get(index).filter(|s| s.start == offset)
}

/// Whether byte `offset` lies inside a span.
pub(crate) fn inside_span(spans: &[TargetSpan], offset: usize) -> bool {
    let index = spans.partition_point(|s| s.start <= offset);
    index > 0 && spans[index - 1].end > offset
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn binary_documents_are_known_unreadable() {
        for t in [
            "report.pdf",
            "docs/Budget.XLSX",
            "a.docx",
            "slides.pptx",
            "old.doc",
        ] {
            assert!(is_unreadable_document(t), "{t}");
        }
        for t in [
            "notes.txt",
            "README.md",
            "pdf",
            ".pdf",
            "report.pdf.txt",
            "index.html",
        ] {
            assert!(!is_unreadable_document(t), "{t}");
        }
    }

    fn check(text: &str, expected: &[&str], forbidden: &[&str]) {
        assert_eq!(file_targets(text), expected, "targets of {text:?}");
        assert_eq!(forbidden_targets(text), forbidden, "forbidden of {text:?}");
    }

    #[test]
    fn targets_rows() {
        check(
            "In settings.py, change TIMEOUT from 30 to 60.",
            &["settings.py"],
            &[],
        );
        check(
            "Fix only styles.css. Do not change index.html or scripts.js.",
            &["styles.css", "index.html", "scripts.js"],
            &["index.html", "scripts.js"],
        );
        check(
            "update ./src/app.js and README",
            &["src/app.js", "README"],
            &[],
        );
        check("what is in notes.txt?", &["notes.txt"], &[]);
        check("edit config\\app.yaml", &["config/app.yaml"], &[]);
        check(
            "Leave main.rs alone; fix lib.rs",
            &["main.rs", "lib.rs"],
            &["main.rs"],
        );
        check("version 1.2 is out", &[], &[]);
        check("write ../outside.txt", &["../outside.txt"], &[]);
        check(
            "Rewrite style.css without touching index.html.",
            &["style.css", "index.html"],
            &["index.html"],
        );
        check("see https://example.com/app.js", &[], &[]);
        check("Build it with Node.js and app.js", &["app.js"], &[]);
        check(
            "Remove the console.log call from app.js and the os.path import from tool.py",
            &["app.js", "tool.py"],
            &[],
        );
        check("update readme please", &["readme"], &[]);
        check("Edit ../../etc/passwd now", &["../../etc/passwd"], &[]);
        check(
            "Edit @index.html, (style.css)",
            &["index.html", "style.css"],
            &[],
        );
    }

    #[test]
    fn directories_and_destinations() {
        let text =
            "mkdir docs/reports. Create folders src, lib and docs then copy x.md to lib/x.md";
        let lower = text.to_ascii_lowercase();
        let lex = Lex::new(text, &lower);
        assert_eq!(
            directory_targets(&lex),
            vec!["docs/reports", "src", "lib", "docs"]
        );
        assert_eq!(operation_destinations(&lex), vec!["lib/x.md"]);
    }
}

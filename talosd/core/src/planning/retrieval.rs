//! Retrieval decisions for the workspace index (issue 16): what is indexed, how text is cut
//! into chunks with line ranges, how code and prose are split into search terms, how a
//! stored file is judged changed, and how ranked hits are shown to the model (capped in
//! characters, never from a protected path). The daemon's `index` module does the IO with
//! tantivy; everything it decides comes from here.

mod ignore_files;

pub use ignore_files::{MAX_IGNORE_FILE_BYTES, Retrieval, UnreadIgnoreFile, too_large};

use crate::request::task::TaskType;
use crate::text::protected::protected_kind;

/// Folders no walk of a workspace enters, whatever its ignore files say: version control,
/// dependencies, build output, caches and Talos's own folder. The one list the index, `talos.grep`
/// and `talos.list`, and the web verifier's site walk all use (issue 30).
pub const SKIP_DIRS: &[&str] = &[
    ".git",
    ".svn",
    ".hg",
    "node_modules",
    "__pycache__",
    ".gradle",
    "build",
    "dist",
    "target",
    ".idea",
    ".talos",
];

/// Largest file the index reads (text or document), in bytes.
pub const MAX_INDEXED_BYTES: u64 = 1 << 20;
/// Lines per chunk.
pub const CHUNK_LINES: usize = 40;
/// Characters per chunk at most (a minified line does not make a huge chunk).
pub const CHUNK_CHARS: usize = 4_000;
/// Characters of one hit's snippet.
pub const SNIPPET_CHARS: usize = 160;
/// Characters of the whole `talos.search` result.
pub const SEARCH_OUTPUT_CHARS: usize = 3_000;
/// Hits `talos.search` returns by default, and at most.
pub const DEFAULT_LIMIT: usize = 8;
pub const MAX_LIMIT: usize = 20;
/// A first build over fewer files than this is quick enough to need no progress report.
pub const PROGRESS_FROM_FILES: u64 = 100;

/// Which quarter of a first index build to report to the turn (0 to 4), or `None` when
/// nothing new is to be said: a build that is not the first, a small workspace, or a quarter
/// already reported.
pub fn progress_step(first_build: bool, done: u64, total: u64, last: Option<u64>) -> Option<u64> {
    if !first_build || total < PROGRESS_FROM_FILES {
        return None;
    }
    let step = done.min(total) * 4 / total;
    (last != Some(step)).then_some(step)
}
/// Longest term kept (longer runs are noise: hashes, base64).
const MAX_TERM_CHARS: usize = 64;

/// Document formats whose text is extracted rather than read as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    Pdf,
    Docx,
    Xlsx,
    Ods,
    Odt,
    Pptx,
}

impl DocumentKind {
    /// The kind a path's extension names (case-insensitive), if it is one Talos extracts.
    pub fn of(path: &str) -> Option<DocumentKind> {
        let (stem, ext) = path.rsplit_once('.')?;
        if stem.is_empty() || stem.ends_with('/') {
            return None;
        }
        Some(match ext.to_ascii_lowercase().as_str() {
            "pdf" => DocumentKind::Pdf,
            "docx" => DocumentKind::Docx,
            "xlsx" | "xlsm" => DocumentKind::Xlsx,
            "ods" => DocumentKind::Ods,
            "odt" => DocumentKind::Odt,
            "pptx" => DocumentKind::Pptx,
            _ => return None,
        })
    }

    /// The word the extractor child is given on its command line.
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::Pdf => "pdf",
            DocumentKind::Docx => "docx",
            DocumentKind::Xlsx => "xlsx",
            DocumentKind::Ods => "ods",
            DocumentKind::Odt => "odt",
            DocumentKind::Pptx => "pptx",
        }
    }

    pub fn parse(word: &str) -> Option<DocumentKind> {
        DocumentKind::of(&format!("x.{word}"))
    }
}

/// Why a file is left out of the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Protected,
    TooLarge,
    Binary,
}

/// Whether a workspace file is indexed, judged on its path and size before it is read.
pub fn admit_path(relative: &str, size: u64) -> Result<(), Skip> {
    if protected_kind(relative).is_some() {
        return Err(Skip::Protected);
    }
    if size > MAX_INDEXED_BYTES {
        return Err(Skip::TooLarge);
    }
    Ok(())
}

/// Whether read bytes are text worth indexing: not binary (a NUL in the first 8 KiB, or
/// mostly invalid UTF-8).
pub fn admit_text(bytes: &[u8]) -> Result<(), Skip> {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Err(Skip::Binary);
    }
    let lossy = String::from_utf8_lossy(head);
    let bad = lossy
        .chars()
        .filter(|c| *c == char::REPLACEMENT_CHARACTER)
        .count();
    if bad * 20 > head.len().max(1) {
        return Err(Skip::Binary);
    }
    Ok(())
}

/// One chunk of a file: 1-based inclusive line range and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
}

/// Cuts `text` into chunks of at most [`CHUNK_LINES`] lines and about [`CHUNK_CHARS`]
/// characters (a longer single line is cut at a character boundary). Empty text has none.
pub fn chunks(text: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    let mut last = 0;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let line: String = line.chars().take(CHUNK_CHARS).collect();
        let full = number - start >= CHUNK_LINES || current.len() + line.len() > CHUNK_CHARS;
        if full && !current.is_empty() {
            out.push(Chunk {
                start_line: start,
                end_line: last,
                text: std::mem::take(&mut current),
            });
            start = number;
        }
        if current.is_empty() {
            start = number;
        }
        current.push_str(&line);
        current.push('\n');
        last = number;
    }
    if !current.trim().is_empty() {
        out.push(Chunk {
            start_line: start,
            end_line: last,
            text: current,
        });
    }
    out.retain(|c| !c.text.trim().is_empty());
    out
}

/// The search terms of `text`: each run of letters, digits and `_` lowercased as a whole,
/// plus its parts split at `_`, at camelCase humps and at letter/digit changes (each part
/// once, and only when the word has more than one). `approvalTimeoutMs` gives
/// `approvaltimeoutms`, `approval`, `timeout`, `ms`. Each term comes with its word's index,
/// so parts share their word's position.
pub fn terms(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (position, word) in words(text).enumerate() {
        let whole = word.to_lowercase();
        if whole.chars().count() > MAX_TERM_CHARS {
            continue;
        }
        let parts = parts(word);
        if parts.len() > 1 || (parts.len() == 1 && parts[0] != whole) {
            out.push((position, whole.clone()));
            for part in parts {
                if part != whole {
                    out.push((position, part));
                }
            }
        } else {
            out.push((position, whole));
        }
    }
    out
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(|w| w.trim_matches('_'))
        .filter(|w| !w.is_empty())
}

/// A word's parts, lowercased, deduplicated in order.
fn parts(word: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<char> = piece.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            let hump = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
                || (prev.is_alphabetic() && cur.is_ascii_digit())
                || (prev.is_ascii_digit() && cur.is_alphabetic());
            if hump {
                push_part(&mut parts, &chars[start..i]);
                start = i;
            }
        }
        push_part(&mut parts, &chars[start..]);
    }
    parts
}

fn push_part(parts: &mut Vec<String>, chars: &[char]) {
    let part: String = chars.iter().collect::<String>().to_lowercase();
    if !part.is_empty() && !parts.contains(&part) {
        parts.push(part);
    }
}

/// Question words too common to rank by.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "in", "is", "it", "me", "of", "on", "or", "please", "set", "show", "tell", "that",
    "the", "this", "to", "what", "when", "where", "which", "who", "why", "with", "explain",
    "find", "we", "you",
];

/// The distinct terms of a query worth searching for (question words dropped, unless that
/// leaves nothing).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for (_, term) in terms(query) {
        if !all.contains(&term) {
            all.push(term);
        }
    }
    let kept: Vec<String> = all
        .iter()
        .filter(|t| !STOPWORDS.contains(&t.as_str()))
        .cloned()
        .collect();
    if kept.is_empty() { all } else { kept }
}

/// What the index remembers of a file to judge it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i128,
    pub hash: String,
}

/// What to do with a file the walk found, given the stamp the index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Size and mtime match: unchanged, not read.
    Same,
    /// Size or mtime moved: read it, and reindex only if the hash differs.
    Check,
    /// Not in the index.
    New,
}

pub fn freshness(held: Option<&Stamp>, size: u64, mtime_ns: i128) -> Freshness {
    match held {
        None => Freshness::New,
        Some(stamp) if stamp.size == size && stamp.mtime_ns == mtime_ns => Freshness::Same,
        Some(_) => Freshness::Check,
    }
}

/// One ranked hit as the index returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub score: f32,
    pub text: String,
}

/// The line of `text` that holds the most query terms, cut to [`SNIPPET_CHARS`], with its
/// 1-based number counted from `start_line`.
pub fn snippet(text: &str, start_line: usize, query: &str) -> (usize, String) {
    let wanted: Vec<String> = terms(query).into_iter().map(|(_, t)| t).collect();
    let mut best = (0usize, 0usize);
    for (index, line) in text.lines().enumerate() {
        let have: Vec<String> = terms(line).into_iter().map(|(_, t)| t).collect();
        let score = wanted.iter().filter(|w| have.contains(w)).count();
        if score > best.1 {
            best = (index, score);
        }
    }
    let line = text.lines().nth(best.0).unwrap_or_default().trim();
    let mut shown: String = line.chars().take(SNIPPET_CHARS).collect();
    if line.chars().count() > SNIPPET_CHARS {
        shown.push('…');
    }
    (start_line + best.0, shown)
}

/// The `talos.search` result: ranked hits as `path:start-end (line N) | snippet`, protected
/// paths dropped (and counted), the whole capped at [`SEARCH_OUTPUT_CHARS`].
pub fn report(query: &str, hits: &[Hit], limit: usize) -> String {
    let mut lines = Vec::new();
    let mut used = 0;
    let mut hidden = 0;
    for hit in hits {
        if protected_kind(&hit.path).is_some() {
            hidden += 1;
            continue;
        }
        if lines.len() >= limit {
            break;
        }
        let (line, text) = snippet(&hit.text, hit.start_line, query);
        let row = format!(
            "{}. {}:{}-{} (line {line}) | {text}",
            lines.len() + 1,
            hit.path,
            hit.start_line,
            hit.end_line
        );
        if used + row.len() > SEARCH_OUTPUT_CHARS {
            break;
        }
        used += row.len() + 1;
        lines.push(row);
    }
    let mut out = if lines.is_empty() {
        format!("No indexed workspace text matches: {query}")
    } else {
        format!(
            "Top {} indexed chunk(s) for: {query}\n{}\nRead a file with talos.read_file (offset = the chunk's first line) before relying on it.",
            lines.len(),
            lines.join("\n")
        )
    };
    if hidden > 0 {
        out.push_str("\nSome matches are in protected files; they are not shown.");
    }
    out
}

/// Whether the runtime searches the index itself before the first model request: a question
/// about the workspace (no change asked, no file named) on a surface that offers
/// `talos.search`. What it finds is offered for reading, never counted as evidence.
pub fn retrieves_first(
    task: TaskType,
    mutation_requested: bool,
    named_targets: usize,
    search_offered: bool,
) -> bool {
    search_offered
        && !mutation_requested
        && named_targets == 0
        && matches!(
            task,
            TaskType::ReadOnlyQa | TaskType::WorkspaceExplain | TaskType::DiagnoseOnly
        )
}

/// The message that offers the top files for reading (at most [`HINT_FILES`] distinct files,
/// best chunk each); `None` when nothing matched.
pub fn hint(query: &str, hits: &[Hit]) -> Option<String> {
    let mut rows: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for hit in hits {
        if protected_kind(&hit.path).is_some() || seen.contains(&hit.path.as_str()) {
            continue;
        }
        seen.push(&hit.path);
        let (line, text) = snippet(&hit.text, hit.start_line, query);
        rows.push(format!(
            "- {} (lines {}-{}, line {line}: {text})",
            hit.path, hit.start_line, hit.end_line
        ));
        if rows.len() >= HINT_FILES {
            break;
        }
    }
    (!rows.is_empty()).then(|| {
        format!(
            "[Talos searched the workspace index for this question. These places rank first; they have not been read. Read the relevant ones with talos.read_file before answering, and rely only on what you read.]\n{}",
            rows.join("\n")
        )
    })
}

/// Files the runtime's own retrieval offers.
pub const HINT_FILES: usize = 3;

#[cfg(test)]
mod tests;

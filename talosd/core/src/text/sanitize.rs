//! Sanitising proposed content before approval: trailing commentary and stray fences
//! stripped, so the approved bytes are the written bytes.
//!
//! [`strip_commentary`] runs once on `write_file.content` and `edit_file.new_string`, before
//! the approval preview, and its result is exactly what will be written. Rules, each
//! conservative, applied until none fires (so the result is a fixed point and a second run
//! changes nothing):
//!
//! 1. `trailing-commentary` after a fence: a fence line at column 0
//!    in the last `max(2000, 20%)` characters, followed only by markdown commentary
//!    (headings, list items, rules, bold, quotes, opener sentences such as "This code ...",
//!    plain sentences once commentary has begun, and fenced examples inside it), is removed
//!    with everything after it.
//! 2. `trailing-commentary` without a fence, in code files only (where an English sentence
//!    after the code cannot be file content), when no fence is in the window: after a blank
//!    line, a block in the same window that opens with assistant-speak ("Explanation:",
//!    "I have updated ...", "Let me know ...", "This code ...", plain, bold, or after a `---`
//!    rule) and holds only commentary lines (never `# ...` lines, which are comments in many
//!    languages). Generic openers ("This module ...", "Note:", "Usage:") also start
//!    docstrings, and `edit_file.new_string` may end inside one: they need a fence.
//! 3. `trailing-fence`: a bare closing fence as the last line, when the content's fences do
//!    not pair up.
//! 4. `leading-fence` + `trailing-fence`: content wrapped whole in one fenced block.
//! 5. `leading-fence`: a fence as the first line when it is the content's only fence.
//!
//! Markdown and plain-text targets (`.md`, `.markdown`, `.mdx`, `.txt`, `.rst`, ...) are
//! returned unchanged: fences and commentary can be their content. A cut always falls at a
//! line boundary; what is kept is never rewritten.

mod lines;

use lines::{Kind, Line};

/// Content after sanitising.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized {
    /// Exactly what will be written.
    pub content: String,
    pub changed: bool,
    /// What was removed, in order: `leading-fence`, `trailing-fence`, `trailing-commentary`.
    pub removed: Vec<&'static str>,
}

/// Extensions whose content may legitimately hold fences and commentary.
const EXEMPT: [&str; 9] = [
    "md", "markdown", "mdx", "txt", "text", "rst", "adoc", "asciidoc", "org",
];
/// Code files: an English sentence after the code would be a syntax error there. Not PHP
/// (text outside `<?php ?>` is output) nor Ruby (`__END__` starts a data section).
const CODE: [&str; 36] = [
    "py", "pyi", "rs", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "java", "kt", "kts",
    "scala", "go", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "swift", "css", "scss", "less",
    "json", "sql", "html", "htm", "xml", "svg", "vue", "svelte",
];
/// Markup files: real content ends with a tag.
const MARKUP: [&str; 6] = ["html", "htm", "xml", "svg", "vue", "svelte"];
/// Rules stop after this many passes; content that still changes is returned unchanged.
const MAX_PASSES: usize = 64;
const WINDOW_MIN_CHARS: usize = 2000;
/// More fence lines than this in the window: rule 1 declines.
const MAX_FENCES_IN_WINDOW: usize = 64;

/// Strips a wrapping fence, a stray trailing fence and trailing markdown commentary from
/// content proposed for `path`.
pub fn strip_commentary(path: &str, content: &str) -> Sanitized {
    let unchanged = || Sanitized {
        content: content.to_string(),
        changed: false,
        removed: Vec::new(),
    };
    let target = Target::of(path);
    if target.exempt {
        return unchanged();
    }
    let mut current = content;
    let mut removed: Vec<&'static str> = Vec::new();
    for _ in 0..MAX_PASSES {
        let Some((kept, labels)) = one_pass(&target, current) else {
            return Sanitized {
                content: current.to_string(),
                changed: current != content,
                removed,
            };
        };
        current = &current[kept];
        for label in labels {
            if !removed.contains(label) {
                removed.push(label);
            }
        }
    }
    unchanged()
}

/// What the path says about its content.
#[derive(Debug, Clone, Copy)]
struct Target {
    exempt: bool,
    code: bool,
    markup: bool,
}

impl Target {
    fn of(path: &str) -> Target {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let extension = name
            .rsplit_once('.')
            .map(|(_, ext)| ext.to_ascii_lowercase())
            .unwrap_or_default();
        let is = |list: &[&str]| list.contains(&extension.as_str());
        Target {
            exempt: is(&EXEMPT),
            code: is(&CODE),
            markup: is(&MARKUP),
        }
    }
}

type Labels = &'static [&'static str];

/// The first rule that fires: the byte range to keep and what was removed.
fn one_pass(target: &Target, content: &str) -> Option<(std::ops::Range<usize>, Labels)> {
    let lines = lines::split(content);
    let window_start = window_start(content);
    let fences: Vec<usize> = (0..lines.len())
        .filter(|i| lines::is_fence(lines[*i].text))
        .collect();
    let first = lines.iter().position(|l| !l.text.trim().is_empty())?;
    let last = lines.iter().rposition(|l| !l.text.trim().is_empty())?;
    if let Some(end) = commentary_after_fence(&lines, &fences, window_start) {
        return Some((0..end, &["trailing-commentary"]));
    }
    if target.code
        && let Some(end) = commentary_without_fence(target, &lines, window_start)
    {
        return Some((0..end, &["trailing-commentary"]));
    }
    let bare_close = lines::is_bare_fence(lines[last].text);
    if bare_close && fences.len() % 2 == 1 && first < last {
        let kept = lines[..last]
            .iter()
            .rposition(|l| !l.text.trim().is_empty())?;
        return Some((0..lines[kept].next, &["trailing-fence"]));
    }
    let opens = fences.first() == Some(&first);
    let body_blank =
        |from: usize, to: usize| lines[from..to].iter().all(|l| l.text.trim().is_empty());
    if opens && bare_close && fences.len() == 2 && first < last && !body_blank(first + 1, last) {
        return Some((
            lines[first].next..lines[last].start,
            &["leading-fence", "trailing-fence"],
        ));
    }
    if opens && fences.len() == 1 && !body_blank(first + 1, lines.len()) {
        return Some((lines[first].next..content.len(), &["leading-fence"]));
    }
    None
}

/// Where the scanned tail starts: the last `max(2000, 20%)` characters, as a byte offset.
fn window_start(content: &str) -> usize {
    let chars = content.chars().count();
    let window = WINDOW_MIN_CHARS.max(chars / 5);
    let skip = chars.saturating_sub(window);
    content
        .char_indices()
        .nth(skip)
        .map_or(content.len(), |(at, _)| at)
}

/// Rule 1: the earliest fence in the window followed only by commentary; returns where the
/// kept content ends (after the last non-blank line before that fence). A window crowded
/// with fences is not commentary, and checking each would cost too much: the rule declines.
fn commentary_after_fence(
    lines: &[Line<'_>],
    fences: &[usize],
    window_start: usize,
) -> Option<usize> {
    let in_window: Vec<usize> = fences
        .iter()
        .copied()
        .filter(|at| lines[*at].start >= window_start)
        .collect();
    if in_window.len() > MAX_FENCES_IN_WINDOW {
        return None;
    }
    in_window.into_iter().find_map(|at| {
        let kept = lines[..at]
            .iter()
            .rposition(|l| !l.text.trim().is_empty())?;
        commentary_follows(&lines[at + 1..]).then_some(lines[kept].next)
    })
}

/// Whether these lines are markdown commentary: the first non-blank one is markdown, plain
/// sentences may follow it, and fenced examples inside it are skipped whole.
fn commentary_follows(tail: &[Line<'_>]) -> bool {
    let mut begun = false;
    let mut index = 0;
    while index < tail.len() {
        // Once commentary has begun, a continuation may be indented a little.
        let text = tail[index].text;
        let indent = text.len() - text.trim_start_matches(' ').len();
        let text = if begun && indent <= 4 {
            &text[indent..]
        } else {
            text
        };
        match lines::classify(text, true) {
            Kind::Blank => {}
            Kind::Markdown => begun = true,
            Kind::Prose if begun => {}
            Kind::Fence if begun => {
                let close = tail[index + 1..]
                    .iter()
                    .position(|l| lines::is_bare_fence(l.text));
                match close {
                    Some(offset) => index += offset + 1,
                    None => return false,
                }
            }
            Kind::Prose | Kind::Fence | Kind::Content => return false,
        }
        index += 1;
    }
    begun
}

/// Rule 2: a commentary block after the code, set off by a blank line (or opening with a
/// rule), that starts with an opener and holds only commentary lines.
fn commentary_without_fence(
    target: &Target,
    lines: &[Line<'_>],
    window_start: usize,
) -> Option<usize> {
    let content_line = lines.iter().rposition(|line| {
        !matches!(
            lines::classify(line.text, false),
            Kind::Blank | Kind::Markdown | Kind::Prose
        )
    })?;
    let real = lines[content_line];
    // A fence in the window belongs to rule 1; when that declined, so does this one.
    let fence_in_window = lines
        .iter()
        .any(|line| line.start >= window_start && lines::is_fence(line.text));
    if fence_in_window {
        return None;
    }
    let block = &lines[content_line + 1..];
    let mut non_blank = block
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.text.trim().is_empty());
    let (opener_at, opener) = non_blank.next()?;
    let set_off = opener_at > 0 || lines::is_rule(opener.text);
    // The block opens with assistant-speak, or with a rule right before it.
    let speaks = lines::opens_assistant_commentary(opener.text)
        || (lines::is_rule(opener.text)
            && non_blank
                .next()
                .is_some_and(|(_, next)| lines::opens_assistant_commentary(next.text)));
    let ends_right = if target.markup {
        real.text.trim_end().ends_with('>')
    } else {
        true
    };
    (set_off && ends_right && speaks && opener.start >= window_start).then_some(real.next)
}

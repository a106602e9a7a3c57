//! Terminal output: when to colour (a terminal that is not `TERM=dumb`, and `NO_COLOR` unset or
//! empty), writing to
//! stdout (a broken pipe stops quietly) and stderr (best effort), and the pure formatting of
//! diffs, tables, per-file results, the status line and the context footer. Text that came from
//! the daemon is passed through [`printable`] before it reaches stderr, so it cannot move the
//! cursor or repaint the approval prompt, nor hide or reorder what an approval shows.
//!
//! One line may be live: [`Output::live`] draws it on stderr without a newline (`\r`, the text,
//! clear to the end of the line) and every other write through [`Output`] erases it first, so
//! it never mixes with what follows. It is drawn only when both streams are terminals and
//! `TERM` is not `dumb` ([`live_allowed`]); anywhere else it prints nothing.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use talos_protocol::{CompletionStatus, FileResult, TurnEvent, TurnOutcome};

use crate::failure::Failure;

mod invisible;
use crate::spelling::{classification_name, status_name};

/// The few styles the CLI uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Green,
    Red,
    Yellow,
    Cyan,
    Dim,
    Bold,
}

/// Whether one output stream gets ANSI colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    colour: bool,
}

/// Both output streams with their palettes.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub stdout_palette: Palette,
    pub stderr_palette: Palette,
    /// Whether a live line may be drawn ([`live_allowed`]).
    pub live: bool,
}

/// Whether a live line is on stderr now. Process-wide: the Ctrl-C watch prints from its own
/// thread through a copy of the [`Output`].
static LIVE_SHOWN: AtomicBool = AtomicBool::new(false);

/// Back to the start of the line and clear to its end.
const ERASE_LINE: &str = "\r\x1b[K";

/// A line redrawn in place needs both streams on a terminal (a log or a pipe gets nothing) that
/// understands `\r` and clear-to-end-of-line (`TERM=dumb` does not promise the latter).
pub fn live_allowed(stdout_terminal: bool, stderr_terminal: bool, term: Option<&str>) -> bool {
    stdout_terminal && stderr_terminal && term != Some("dumb")
}

/// What drawing `text` as the live line writes: nothing when live lines are not allowed.
pub fn live_frame(allowed: bool, text: &str) -> Option<String> {
    allowed.then(|| format!("{ERASE_LINE}{text}"))
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Green => "32",
            Style::Red => "31",
            Style::Yellow => "33",
            Style::Cyan => "36",
            Style::Dim => "2",
            Style::Bold => "1",
        }
    }
}

impl Palette {
    #[cfg(test)]
    pub const PLAIN: Palette = Palette { colour: false };
    #[cfg(test)]
    pub const COLOUR: Palette = Palette { colour: true };

    /// Colour only on a terminal that is not `TERM=dumb` (a terminal that says it cannot
    /// draw colour), and only when `NO_COLOR` is unset or empty.
    pub fn decide(is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> Palette {
        let no_color = no_color.is_some_and(|value| !value.is_empty());
        Palette {
            colour: is_terminal && !no_color && term != Some("dumb"),
        }
    }

    pub fn colour(self) -> bool {
        self.colour
    }

    pub fn paint(self, style: Style, text: &str) -> String {
        if self.colour && !text.is_empty() {
            format!("\x1b[{}m{text}\x1b[0m", style.code())
        } else {
            text.to_string()
        }
    }
}

impl Output {
    /// Decides colour for this process's stdout and stderr.
    pub fn detect() -> Output {
        let no_color = std::env::var_os("NO_COLOR");
        let no_color = no_color.as_ref().map(|value| value.to_string_lossy());
        let term = std::env::var_os("TERM");
        let term = term.as_ref().map(|value| value.to_string_lossy());
        let (stdout_terminal, stderr_terminal) =
            (io::stdout().is_terminal(), io::stderr().is_terminal());
        Output {
            stdout_palette: Palette::decide(stdout_terminal, no_color.as_deref(), term.as_deref()),
            stderr_palette: Palette::decide(stderr_terminal, no_color.as_deref(), term.as_deref()),
            live: live_allowed(stdout_terminal, stderr_terminal, term.as_deref()),
        }
    }

    /// Draws `text` (one line, already escaped) as the live line in place of the last one;
    /// nothing when live lines are not allowed.
    pub fn live(&self, text: &str) {
        if let Some(frame) = live_frame(self.live, text) {
            let mut stderr = io::stderr().lock();
            let _ = stderr.write_all(frame.as_bytes());
            let _ = stderr.flush();
            LIVE_SHOWN.store(true, Ordering::SeqCst);
        }
    }

    /// Erases the live line, if one is drawn.
    pub fn end_live(&self) {
        if LIVE_SHOWN.swap(false, Ordering::SeqCst) {
            let mut stderr = io::stderr().lock();
            let _ = stderr.write_all(ERASE_LINE.as_bytes());
            let _ = stderr.flush();
        }
    }

    /// Writes to stdout and flushes, so streamed text appears as it arrives.
    pub fn out(&self, text: &str) -> Result<(), Failure> {
        self.end_live();
        let mut stdout = io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .map_err(Failure::from_output)?;
        stdout.flush().map_err(Failure::from_output)
    }

    /// Writes to stderr; a closed stderr is not worth failing a turn over.
    pub fn err(&self, text: &str) {
        self.end_live();
        let mut stderr = io::stderr().lock();
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
    }

    /// Writes one line to stderr.
    pub fn err_line(&self, line: &str) {
        self.err(&format!("{line}\n"));
    }
}

/// Escapes control characters other than newline and tab (`\u{1b}` for ESC, ...), and the
/// characters that are drawn as nothing or reorder what is drawn (`\u{202e}` for a
/// right-to-left override, `\u{200b}` for a zero width space, ...).
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped_where(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || invisible::hides(c)
    })
}

/// [`printable`] for text that must stay on one line (a file name in a listing): newline and
/// tab are escaped too (`\u{a}`), so a name cannot start a line of its own.
pub fn printable_line(text: &str) -> Cow<'_, str> {
    escaped_where(text, |c| c.is_control() || invisible::hides(c))
}

/// `text` with each character `escapes` picks written as `\u{...}`.
fn escaped_where(text: &str, escapes: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escapes) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escapes(c) {
            escaped.extend(c.escape_unicode());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// A unified diff with one style per line: `+` green, `-` red, `@@` cyan, a `...`
/// truncation line dimmed. Every line, including the last, ends with a newline.
pub fn colour_diff(text: &str, palette: Palette, indent: &str) -> String {
    let mut rendered = String::new();
    for line in text.lines() {
        let line = printable(line);
        let style = if line.starts_with("@@") {
            Some(Style::Cyan)
        } else if line.starts_with("...") {
            Some(Style::Dim)
        } else if line.starts_with('+') {
            Some(Style::Green)
        } else if line.starts_with('-') {
            Some(Style::Red)
        } else {
            None
        };
        rendered.push_str(indent);
        match style {
            Some(style) => rendered.push_str(&palette.paint(style, &line)),
            None => rendered.push_str(&line),
        }
        rendered.push('\n');
    }
    rendered
}

/// Columns padded to their widest cell, two spaces apart, header first.
pub fn table(columns: &[String], rows: &[Vec<String>], palette: Palette) -> String {
    let column_count = rows
        .iter()
        .map(Vec::len)
        .chain([columns.len()])
        .max()
        .unwrap_or(0);
    let mut widths = vec![0; column_count];
    for row in std::iter::once(columns).chain(rows.iter().map(Vec::as_slice)) {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(printable(cell).chars().count());
        }
    }
    let format_row = |row: &[String]| {
        let cells: Vec<String> = (0..column_count)
            .map(|index| {
                let cell = row
                    .get(index)
                    .map(|cell| printable(cell))
                    .unwrap_or_default();
                if index + 1 == column_count {
                    cell.into_owned()
                } else {
                    format!("{cell:<width$}", width = widths[index])
                }
            })
            .collect();
        cells.join("  ").trim_end().to_string()
    };
    let mut rendered = String::new();
    if !columns.is_empty() {
        rendered.push_str(&palette.paint(Style::Bold, &format_row(columns)));
        rendered.push('\n');
    }
    for row in rows {
        rendered.push_str(&format_row(row));
        rendered.push('\n');
    }
    rendered
}

/// `✓ path: detail` for a changed file, `✗ path: detail` otherwise (`+` / `-` without colour).
pub fn file_line(file: &FileResult, palette: Palette) -> String {
    let (mark, style) = match (file.changed, palette.colour()) {
        (true, true) => ("✓", Style::Green),
        (false, true) => ("✗", Style::Red),
        (true, false) => ("+", Style::Green),
        (false, false) => ("-", Style::Red),
    };
    format!(
        "{} {}: {}",
        palette.paint(style, mark),
        printable(&file.path),
        printable(&file.detail)
    )
}

/// `<STATUS> (<CLASSIFICATION>) · trace <traceId>`.
pub fn status_line(outcome: &TurnOutcome, palette: Palette) -> String {
    let style = match outcome.status {
        CompletionStatus::Complete => Style::Green,
        CompletionStatus::Failed => Style::Red,
        CompletionStatus::Partial
        | CompletionStatus::Blocked
        | CompletionStatus::AdvisoryOnly
        | CompletionStatus::Cancelled => Style::Yellow,
    };
    format!(
        "{} ({}) · trace {}",
        palette.paint(style, status_name(outcome.status)),
        classification_name(outcome.classification),
        printable(&outcome.trace_id)
    )
}

/// `3,120`: a count with commas between thousands.
/// The instruction files a turn used, in one line (`None` when it used none):
/// `instructions: AGENTS.md (1,204 bytes), src/AGENTS.md (2,000 of 9,000 bytes sent)`.
pub fn instructions_line(files: &[talos_protocol::InstructionFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let each: Vec<String> = files
        .iter()
        .map(|f| {
            let size = if f.sent_bytes < f.bytes {
                format!(
                    "{} of {} bytes sent",
                    thousands(f.sent_bytes),
                    thousands(f.bytes)
                )
            } else {
                format!("{} bytes", thousands(f.bytes))
            };
            let whose = if f.origin == "user" { ", yours" } else { "" };
            format!("{} ({size}{whose})", printable_line(&f.path))
        })
        .collect();
    Some(format!("instructions: {}", each.join(", ")))
}

pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// The live line while the model works on a held reply: `model working… 37 tokens`, and
/// before its first token, when the prompt's size is known, `reading the prompt (1,315
/// tokens)`: on a CPU that reading is most of the wait, and "0 tokens" would look stuck.
pub fn progress_text(tokens: u64, prompt_tokens: Option<u64>) -> String {
    match (tokens, prompt_tokens) {
        (0, Some(1)) => "reading the prompt (1 token)".to_string(),
        (0, Some(n)) => format!("reading the prompt ({} tokens)", thousands(n)),
        _ => working_text(tokens),
    }
}

fn working_text(tokens: u64) -> String {
    match tokens {
        0 => "model working…".to_string(),
        1 => "model working… 1 token".to_string(),
        n => format!("model working… {} tokens", thousands(n)),
    }
}

/// One model call's use of the context, from its `usage` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextUse {
    /// What the call left in the context: the prompt and the reply.
    pub used: u64,
    /// The context one request may use.
    pub size: u64,
    /// Prompt tokens served from the server's cache, when it said.
    pub cached: Option<u64>,
}

impl ContextUse {
    /// The context use a `usage` event reports; `None` for any other event.
    pub fn of(event: &TurnEvent) -> Option<ContextUse> {
        match event {
            TurnEvent::Usage {
                prompt_tokens,
                cached_tokens,
                completion_tokens,
                context_tokens,
                ..
            } => Some(ContextUse {
                used: prompt_tokens.saturating_add(completion_tokens.unwrap_or(0)),
                size: *context_tokens,
                cached: *cached_tokens,
            }),
            _ => None,
        }
    }
}

/// `context 3,120 / 4,096 tokens (2,900 cached)`; the cached part only when some were.
pub fn context_line(context: &ContextUse) -> String {
    let cached = match context.cached {
        Some(cached) if cached > 0 => format!(" ({} cached)", thousands(cached)),
        _ => String::new(),
    };
    format!(
        "context {} / {} tokens{cached}",
        thousands(context.used),
        thousands(context.size)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_group_thousands_with_commas_rows() {
        for (n, expected) in [
            (0, "0"),
            (7, "7"),
            (999, "999"),
            (1_000, "1,000"),
            (4_096, "4,096"),
            (12_345, "12,345"),
            (131_072, "131,072"),
            (1_000_000, "1,000,000"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ] {
            assert_eq!(thousands(n), expected, "{n}");
        }
    }

    #[test]
    fn the_context_footer_rows() {
        let usage = |prompt: u64, cached: Option<u64>, completion: Option<u64>, size: u64| {
            let event = TurnEvent::Usage {
                model_call: 0,
                prompt_tokens: prompt,
                cached_tokens: cached,
                completion_tokens: completion,
                context_tokens: size,
            };
            context_line(&ContextUse::of(&event).unwrap())
        };
        for (line, expected) in [
            (
                usage(3_083, Some(2_900), Some(37), 4_096),
                "context 3,120 / 4,096 tokens (2,900 cached)",
            ),
            (
                usage(3_120, None, None, 4_096),
                "context 3,120 / 4,096 tokens",
            ),
            (
                usage(3_100, Some(0), Some(20), 4_096),
                "context 3,120 / 4,096 tokens",
            ),
            (usage(12, None, Some(3), 512), "context 15 / 512 tokens"),
            (
                usage(u64::MAX, None, Some(1), 8),
                "context 18,446,744,073,709,551,615 / 8 tokens",
            ),
        ] {
            assert_eq!(line, expected);
        }
        let other = TurnEvent::Progress {
            model_call: 0,
            tokens: 3,
            prompt_tokens: None,
        };
        assert_eq!(ContextUse::of(&other), None);
    }

    #[test]
    fn the_progress_line_rows() {
        for (tokens, prompt, expected) in [
            (0, None, "model working…"),
            (0, Some(1_315), "reading the prompt (1,315 tokens)"),
            (1, Some(1_315), "model working… 1 token"),
            (1, None, "model working… 1 token"),
            (37, None, "model working… 37 tokens"),
            (1_234, None, "model working… 1,234 tokens"),
        ] {
            assert_eq!(progress_text(tokens, prompt), expected);
        }
    }

    /// Proves the live line is drawn only on two terminals that are not `TERM=dumb`, and that
    /// where it is not allowed it writes nothing at all.
    #[test]
    fn the_live_line_needs_two_capable_terminals_rows() {
        for (stdout, stderr, term, expected) in [
            (true, true, Some("xterm-256color"), true),
            (true, true, None, true),
            (true, true, Some("dumb"), false),
            (false, true, Some("xterm"), false),
            (true, false, Some("xterm"), false),
            (false, false, None, false),
        ] {
            assert_eq!(
                live_allowed(stdout, stderr, term),
                expected,
                "{stdout} {stderr} {term:?}"
            );
        }
        assert_eq!(live_frame(false, "model working… 3 tokens"), None);
        assert_eq!(
            live_frame(true, "model working… 3 tokens").as_deref(),
            Some("\r\x1b[Kmodel working… 3 tokens")
        );
    }

    #[test]
    fn colour_needs_a_terminal_no_no_color_and_a_term_that_is_not_dumb() {
        for (is_terminal, no_color, term, expected) in [
            (true, None, Some("xterm"), true),
            (true, None, None, true),
            (true, Some(""), Some("xterm"), true),
            (true, Some("1"), Some("xterm"), false),
            (true, None, Some("dumb"), false),
            (false, None, Some("xterm"), false),
            (false, Some("1"), None, false),
        ] {
            assert_eq!(
                Palette::decide(is_terminal, no_color, term).colour(),
                expected,
                "{is_terminal} {no_color:?} {term:?}"
            );
        }
    }

    #[test]
    fn diff_lines_are_plain_without_colour_and_styled_with_it() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n... 3 more lines";
        assert_eq!(
            colour_diff(diff, Palette::PLAIN, "  "),
            "  --- a/x\n  +++ b/x\n  @@ -1 +1 @@\n  -old\n  +new\n   ctx\n  ... 3 more lines\n"
        );
        assert_eq!(
            colour_diff(diff, Palette::COLOUR, ""),
            "\x1b[31m--- a/x\x1b[0m\n\x1b[32m+++ b/x\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m\n ctx\n\x1b[2m... 3 more lines\x1b[0m\n"
        );
    }

    #[test]
    fn control_characters_from_the_daemon_are_escaped() {
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(printable("a\x1b[2Jb\rc"), "a\\u{1b}[2Jb\\u{d}c");
        assert_eq!(
            printable_line("a\nb\tc\x1b\u{202e}"),
            "a\\u{a}b\\u{9}c\\u{1b}\\u{202e}"
        );
        assert_eq!(
            printable("if admin \u{202e} } \u{2066}{ x\u{200b}y .еnv"),
            "if admin \\u{202e} } \\u{2066}{ x\\u{200b}y .еnv"
        );
        assert_eq!(
            colour_diff("+\x1b[31mx", Palette::PLAIN, ""),
            "+\\u{1b}[31mx\n"
        );
    }

    #[test]
    fn tables_align_columns_and_tolerate_ragged_rows() {
        let columns = vec!["path".to_string(), "lines".to_string()];
        let rows = vec![
            vec!["src/main.rs".to_string(), "12".to_string()],
            vec!["a".to_string()],
        ];
        assert_eq!(
            table(&columns, &rows, Palette::PLAIN),
            "path         lines\nsrc/main.rs  12\na\n"
        );
    }

    #[test]
    fn outcome_lines_use_ascii_marks_without_colour() {
        let outcome: TurnOutcome = serde_json::from_value(json!({
            "turnId": "t1", "status": "BLOCKED", "classification": "BLOCKED_BY_APPROVAL",
            "finalAnswer": "", "traceId": "tr-9",
            "files": [
                {"path": "a.py", "changed": true, "detail": "edited"},
                {"path": "b.py", "changed": false, "detail": "denied"}
            ]
        }))
        .unwrap();
        assert_eq!(
            file_line(&outcome.files[0], Palette::PLAIN),
            "+ a.py: edited"
        );
        assert_eq!(
            file_line(&outcome.files[1], Palette::PLAIN),
            "- b.py: denied"
        );
        assert_eq!(
            file_line(&outcome.files[0], Palette::COLOUR),
            "\x1b[32m✓\x1b[0m a.py: edited"
        );
        assert_eq!(
            status_line(&outcome, Palette::PLAIN),
            "BLOCKED (BLOCKED_BY_APPROVAL) · trace tr-9"
        );
    }
}

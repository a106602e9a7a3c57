//! How a Talos man page is finished, shared by `talos generate man` and `talosd --generate-man`
//! (as [`socket`](crate::socket) shares the socket rule): pure text functions over the roff
//! that clap_mangen writes, no IO. A page gets a one-line NAME (`talos-run \- run one request
//! in a workspace`), the sections a reader looks for (EXIT STATUS, ENVIRONMENT, FILES, SEE
//! ALSO) before VERSION, the release's date in `.TH` (from `SOURCE_DATE_EPOCH`, so two builds
//! of a commit give the same bytes), and the tidying `mandoc -T lint` and groff ask for: text
//! lines of at most 80 bytes with no trailing blanks, no `.br` next to `.sp`, and characters
//! outside ASCII written as `\[uXXXX]` escapes (docs/decisions/0060-packages-and-acp-conformance.md).

/// The longest text line a finished page has, in bytes (mandoc's style limit).
pub const LINE_LIMIT: usize = 80;

/// One section a page gets besides clap's: its heading and its roff body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading, in capitals (`EXIT STATUS`).
    pub heading: String,
    /// The body, roff source (`.TP` lists and text lines).
    pub body: String,
}

impl Section {
    /// A section of `heading` whose roff is `body`.
    pub fn new(heading: &str, body: &str) -> Section {
        Section {
            heading: heading.to_string(),
            body: body.to_string(),
        }
    }
}

/// The page's date: `SOURCE_DATE_EPOCH` when it is set and a number (a release build sets it
/// to the commit's time), else `now`.
pub fn page_date(source_date_epoch: Option<&str>, now_unix_seconds: i64) -> String {
    let epoch = source_date_epoch
        .and_then(|value| value.trim().parse::<i64>().ok())
        .unwrap_or(now_unix_seconds);
    crate::time::date(epoch)
}

/// The NAME line's summary from a command's `about`: its first sentence, lower-cased at the
/// start unless it begins with a name (`Talos`), without the closing period or backquotes.
pub fn summary(about: &str) -> String {
    let flat = about
        .replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let first = match flat.find(". ") {
        Some(end) => &flat[..end],
        None => flat.as_str(),
    };
    let first = first.trim_end_matches('.');
    let mut chars = first.chars();
    match (chars.next(), chars.clone().next()) {
        (Some(c), Some(next))
            if c.is_uppercase() && next.is_lowercase() && !first.starts_with("Talos") =>
        {
            c.to_lowercase().chain(chars).collect()
        }
        _ => first.to_string(),
    }
}

/// Text as roff: backslashes and dashes escaped, a leading `.` or `'` guarded.
pub fn roff_text(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    guard_line_start(&escaped)
}

/// Finishes a page clap_mangen rendered: `name` and `summary` make the NAME line, `sections`
/// go before VERSION (or at the end), and the whole page is tidied.
pub fn finish(page: &str, name: &str, summary: &str, sections: &[Section]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut lines = page.lines().peekable();
    let mut inserted = false;
    while let Some(line) = lines.next() {
        if line.starts_with(".TH ") {
            // No hyphenation: a path or an option split at a line's end reads as two words.
            out.extend([line.to_string(), ".nh".to_string()]);
            continue;
        }
        if line == ".SH NAME" {
            out.push(line.to_string());
            out.push(format!(
                "{} \\- {}",
                name.replace('-', "\\-"),
                roff_text(summary)
            ));
            while lines.peek().is_some_and(|next| !next.starts_with(".SH ")) {
                lines.next();
            }
            continue;
        }
        if line == ".SH VERSION" && !inserted {
            out.extend(section_lines(sections));
            inserted = true;
        }
        out.push(line.to_string());
    }
    if !inserted {
        out.extend(section_lines(sections));
    }
    tidy(&out.join("\n"))
}

fn section_lines(sections: &[Section]) -> Vec<String> {
    sections
        .iter()
        .flat_map(|s| {
            std::iter::once(format!(".SH {}", s.heading)).chain(s.body.lines().map(str::to_string))
        })
        .collect()
}

/// The tidying alone: ASCII only, blank lines as `.sp`, no `.br` beside `.sp`, text lines wrapped at
/// [`LINE_LIMIT`] bytes (never the NAME line, nor the line that is a `.TP` tag, nor inside `.nf`), no trailing
/// blanks; the page ends with one newline.
pub fn tidy(page: &str) -> String {
    // A blank text line is a paragraph break (`.sp`), written as one.
    let lines: Vec<String> = page
        .lines()
        .map(|line| {
            if line.trim().is_empty() {
                ".sp".to_string()
            } else {
                ascii_only(line)
            }
        })
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut no_fill = false;
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end();
        let before = i
            .checked_sub(1)
            .and_then(|j| lines.get(j))
            .map(String::as_str);
        let after = lines.get(i + 1).map(String::as_str);
        if line == ".br" && (before == Some(".sp") || after == Some(".sp")) {
            continue;
        }
        match line {
            ".nf" => no_fill = true,
            ".fi" => no_fill = false,
            _ => {}
        }
        let is_text = !line.starts_with('.') && !line.starts_with('\'');
        // The NAME line stays one line (whatis and apropos read it so), however long.
        let keep = before == Some(".TP") || before == Some(".SH NAME");
        if !is_text || no_fill || keep || line.len() <= LINE_LIMIT {
            out.push(line.to_string());
            continue;
        }
        out.extend(wrap(line));
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Every character outside ASCII as a groff escape (`…` → `\[u2026]`).
fn ascii_only(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\[u{:04X}]", u32::from(c))
            }
        })
        .collect()
}

/// A filled text line broken at spaces into lines of at most [`LINE_LIMIT`] bytes (a word
/// longer than that stays whole); a piece that would start like a request is guarded.
fn wrap(line: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for word in line.split(' ').filter(|w| !w.is_empty()) {
        if !current.is_empty() && current.len() + 1 + word.len() > LINE_LIMIT {
            pieces.push(guard_line_start(&current));
            current.clear();
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.is_empty() {
        pieces.push(guard_line_start(&current));
    }
    pieces
}

fn guard_line_start(text: &str) -> String {
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_days() {
        for (epoch, date) in [
            (0, "1970-01-01"),
            (951_782_400, "2000-02-29"),
            (1_796_156_659, "2026-12-01"),
            (-86_400, "1969-12-31"),
        ] {
            assert_eq!(crate::time::date(epoch), date, "{epoch}");
        }
        assert_eq!(page_date(Some("0"), 1_796_156_659), "1970-01-01");
        assert_eq!(page_date(Some("soon"), 0), "1970-01-01");
        assert_eq!(page_date(None, 951_782_400), "2000-02-29");
    }

    #[test]
    fn a_summary_is_the_first_sentence_without_its_period() {
        for (about, expected) in [
            (
                "Run one request in a workspace.",
                "run one request in a workspace",
            ),
            (
                "Talos: a local coding assistant. With no command, a session.",
                "Talos: a local coding assistant",
            ),
            (
                "Serve ACP on stdio, for editors (Zed);\nstarts the daemon. See x.",
                "serve ACP on stdio, for editors (Zed); starts the daemon",
            ),
            ("ACP bridge", "ACP bridge"),
            (
                "The model server: `talos model status`.",
                "the model server: talos model status",
            ),
        ] {
            assert_eq!(summary(about), expected, "{about}");
        }
    }

    #[test]
    fn finishing_names_the_page_in_one_line_and_adds_the_sections_before_version() {
        let page = ".TH TALOS 1 \"2026-12-01\"\n.SH NAME\ntalos \\- Talos: a very\nlong about\n.SH SYNOPSIS\n\\fBtalos\\fR\n.SH VERSION\nv0.1.0\n";
        let sections = [Section {
            heading: "EXIT STATUS".into(),
            body: ".TP\n0\nsuccess".into(),
        }];
        assert_eq!(
            finish(page, "talos-run", "run one request", &sections),
            ".TH TALOS 1 \"2026-12-01\"\n.nh\n.SH NAME\ntalos\\-run \\- run one request\n.SH SYNOPSIS\n\\fBtalos\\fR\n.SH EXIT STATUS\n.TP\n0\nsuccess\n.SH VERSION\nv0.1.0\n"
        );
    }

    #[test]
    fn tidying_wraps_long_text_and_leaves_requests_tags_and_no_fill_alone() {
        let long = "word ".repeat(30);
        let tag = format!("\\fB\\-\\-x\\fR {}", "y".repeat(90));
        let page = format!(
            ".TP\n{tag}\n{long}\n.br\n\n.nf\n{long}\n.fi\nend…  \n.{}\n.SH NAME\n{long}\n",
            "z".repeat(90)
        );
        let tidied = tidy(&page);
        let lines: Vec<&str> = tidied.lines().collect();
        assert_eq!(lines[0..2], [".TP", tag.as_str()]);
        assert!(
            lines[2].len() <= LINE_LIMIT && lines[3].len() <= LINE_LIMIT,
            "{tidied}"
        );
        assert_eq!(lines[4], ".sp", "the .br beside .sp is gone");
        assert_eq!(lines[5], ".nf");
        assert_eq!(lines[6], long.trim_end(), "no-fill text is left as it is");
        assert_eq!(lines[8], "end\\[u2026]");
        assert!(
            lines[9].starts_with(".zzz"),
            "a request line is never wrapped"
        );
        assert_eq!(
            wrap(&format!("{} .x", "a".repeat(79))),
            ["a".repeat(79), "\\&.x".into()]
        );
    }
}

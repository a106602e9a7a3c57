//! The warnings an approval carries: every hidden character in its target, its diff lines
//! (with the line they are on), its command arguments (by position) and its other lines, and
//! every look-alike of a protected name. Each warning is one plain line starting `warning: `
//! that the daemon appends to the approval's `details` and records in the trace.

use super::homoglyph::{look_alike_code_points, looks_like};
use super::{Hidden, escaped, hidden, hidden_in};

/// Warnings one approval shows; past this a last line says how many more were found.
pub const MAX_WARNINGS: usize = 12;

/// The text of an approval as the person will see it.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalText<'a> {
    pub description: &'a str,
    pub target: Option<&'a str>,
    pub details: &'a [String],
    /// The diff preview's text (unified diff body, hunk headers included).
    pub diff: Option<&'a str>,
    /// The diff lines past the preview's cap (empty when nothing was cut).
    pub diff_cut: &'a str,
}

/// The `warning: ` lines for an approval, in order: target, diff, details, description.
pub fn warnings(text: &ApprovalText<'_>) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut alikes: Vec<String> = Vec::new();
    if let Some(target) = text.target {
        for h in hidden_in(target) {
            found.push(format!("the target contains {}", h.described()));
        }
        if let Some(line) = look_alike(target, "the target", &mut alikes) {
            found.push(line);
        }
    }
    if let Some(diff) = text.diff {
        found.extend(diff_warnings(diff, text.diff_cut));
    }
    for line in text.details {
        if line.starts_with("warning: ") {
            continue;
        }
        // The target restated in a line (`target: x (3 bytes)`) was reported above.
        let rest = match text.target {
            Some(target) if has_hidden(target) => line.replace(target, ""),
            _ => line.clone(),
        };
        match rest.strip_prefix("argv: ") {
            Some(argv) => found.extend(argument_warnings(argv)),
            None => {
                let label = label(&rest);
                for h in hidden_in(&rest) {
                    found.push(format!("{label} contains {}", h.described()));
                }
            }
        }
        for token in rest.split_whitespace() {
            let token = token.trim_matches(|c: char| "`'\"(),;:".contains(c));
            if let Some(line) = look_alike(token, &format!("`{}`", escaped(token)), &mut alikes) {
                found.push(line);
            }
        }
    }
    for h in hidden_in(text.description) {
        found.push(format!("the description contains {}", h.described()));
    }
    let extra = found.len().saturating_sub(MAX_WARNINGS);
    let mut lines: Vec<String> = found
        .into_iter()
        .take(MAX_WARNINGS)
        .map(|w| format!("warning: {w}"))
        .collect();
    if extra > 0 {
        lines.push(format!(
            "warning: {extra} more place(s) hold characters that change what is shown; the lines above list the first {MAX_WARNINGS}"
        ));
    }
    lines
}

/// `the target looks like .env (spelled with look-alike characters: U+0435)`, once per name.
fn look_alike(text: &str, subject: &str, seen: &mut Vec<String>) -> Option<String> {
    let name = looks_like(text)?;
    if seen.contains(&name) {
        return None;
    }
    seen.push(name.clone());
    Some(format!(
        "{subject} looks like {} (spelled with look-alike characters: {})",
        escaped(&name),
        look_alike_code_points(text).join(", ")
    ))
}

/// What a details line is called in a warning: `the "restored" line`, from its label.
fn label(line: &str) -> String {
    match line.split_once(':') {
        Some((label, _)) if !label.is_empty() && label.len() <= 40 => {
            format!("the \"{}\" line", escaped(label))
        }
        _ => "a line of the approval".into(),
    }
}

/// Hidden characters in the diff, each with the line it is on: the new file's numbering for
/// added and context lines, the old file's for removed ones; the lines `cut` from the preview
/// continue the numbering and say they are past its end. A byte order mark at the very start
/// of line 1 is the file's encoding mark, not hidden text.
fn diff_warnings(diff: &str, cut: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    let shown = diff.lines().count();
    for (index, line) in diff.lines().chain(cut.lines()).enumerate() {
        let past = if index >= shown {
            " (past the end of the preview)"
        } else {
            ""
        };
        if let Some((o, n)) = hunk_starts(line) {
            (old, new) = (o, n);
            continue;
        }
        let (marker, body) = match line.chars().next() {
            Some(c @ ('+' | '-' | ' ')) => (c, &line[1..]),
            _ => continue,
        };
        let number = if marker == '-' { old } else { new };
        for h in body_hidden(body, number) {
            warnings.push(match marker {
                '-' => format!(
                    "this change removes a line holding {} (line {number} before the change){past}",
                    h.described()
                ),
                '+' => format!(
                    "this change contains {} at line {number}{past}",
                    h.described()
                ),
                _ => format!(
                    "the unchanged line {number} of this change contains {}{past}",
                    h.described()
                ),
            });
        }
        match marker {
            '-' => old += 1,
            '+' => new += 1,
            _ => {
                old += 1;
                new += 1;
            }
        }
    }
    warnings
}

fn body_hidden(body: &str, number: usize) -> Vec<Hidden> {
    let body = match body.strip_prefix('\u{FEFF}') {
        Some(rest) if number == 1 => rest,
        _ => body,
    };
    hidden_in(body)
}

/// `@@ -3,4 +5,6 @@` -> (3, 5); a count of 0 means the side starts after that line.
fn hunk_starts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let start = |range: &str| -> Option<usize> {
        let (first, count) = range.split_once(',').unwrap_or((range, "1"));
        let first: usize = first.parse().ok()?;
        Some(if count == "0" { first + 1 } else { first })
    };
    Some((start(old)?, start(new)?))
}

/// Hidden characters in a command's argv line, by position: the program, then argument 1,
/// 2, ... Tokens the daemon quoted already show their hidden characters escaped.
fn argument_warnings(argv: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    for (index, token) in argv_tokens(argv).iter().enumerate() {
        for h in hidden_in(token) {
            let which = match index {
                0 => "the command's program".to_string(),
                n => format!("command argument {n}"),
            };
            warnings.push(format!("{which} contains {}", h.described()));
        }
    }
    warnings
}

/// Splits an argv line on spaces, keeping a `"…"` token (with `\"` escapes) whole.
fn argv_tokens(argv: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = argv.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' {
            chars.next();
            continue;
        }
        let mut token = String::new();
        if c == '"' {
            token.push(c);
            chars.next();
            let mut escape = false;
            for c in chars.by_ref() {
                token.push(c);
                match (escape, c) {
                    (false, '\\') => escape = true,
                    (false, '"') => break,
                    _ => escape = false,
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' {
                    break;
                }
                token.push(c);
                chars.next();
            }
        }
        tokens.push(token);
    }
    tokens
}

/// Whether `text` holds anything [`warnings`] would report as hidden (for quick checks).
pub fn has_hidden(text: &str) -> bool {
    text.chars().any(|c| hidden(c).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(text: ApprovalText<'_>, expected: &[&str]) {
        assert_eq!(warnings(&text), expected, "{text:?}");
    }

    fn plain<'a>(
        target: Option<&'a str>,
        details: &'a [String],
        diff: Option<&'a str>,
    ) -> ApprovalText<'a> {
        ApprovalText {
            description: "write operation: talos.write_file",
            target,
            details,
            diff,
            diff_cut: "",
        }
    }

    /// Proves a clean approval carries no warning.
    #[test]
    fn a_clean_approval_has_no_warning() {
        let details = vec!["target: a.txt (3 bytes, 1 lines)".to_string()];
        check(
            plain(Some("a.txt"), &details, Some("@@ -1 +1 @@\n-a\n+b\n")),
            &[],
        );
    }

    /// Proves the Trojan Source diff is reported with the line each character is on.
    #[test]
    fn diff_lines_are_reported_with_their_line() {
        let diff = "@@ -1,3 +1,3 @@\n line one\n-if admin {\n+if admin \u{202E} } \u{2066}{\n line three\n";
        check(
            plain(Some("a.rs"), &[], Some(diff)),
            &[
                "warning: this change contains a right-to-left override (U+202E) at line 2",
                "warning: this change contains a left-to-right isolate (U+2066) at line 2",
            ],
        );
        let later = "@@ -10,2 +12,3 @@\n ctx\u{200B}\n-old\u{200D}\n+new\n+x\u{2060}\n";
        check(
            plain(None, &[], Some(later)),
            &[
                "warning: the unchanged line 12 of this change contains a zero width space (U+200B)",
                "warning: this change removes a line holding a zero width joiner (U+200D) (line 11 before the change)",
                "warning: this change contains a word joiner (U+2060) at line 14",
            ],
        );
    }

    /// Proves a hidden character in a line cut from the preview is still named, with the line
    /// numbering continued and the cut said.
    #[test]
    fn lines_past_the_preview_are_screened() {
        let details: Vec<String> = Vec::new();
        check(
            ApprovalText {
                diff_cut: "+b\n+c\u{202E}\n",
                ..plain(
                    None,
                    &details,
                    Some("@@ -0,0 +1,3 @@\n+a\n... (2 more diff lines)\n"),
                )
            },
            &[
                "warning: this change contains a right-to-left override (U+202E) at line 3 (past the end of the preview)",
            ],
        );
        let long: String = (0..80).map(|i| format!("line {i}\n")).collect();
        let preview = crate::text::diff::preview(None, &format!("{long}x\u{2066}\n"));
        assert!(preview.truncated);
        check(
            ApprovalText {
                diff_cut: &preview.cut,
                ..plain(None, &details, Some(&preview.text))
            },
            &[
                "warning: this change contains a left-to-right isolate (U+2066) at line 81 (past the end of the preview)",
            ],
        );
    }

    /// Proves a byte order mark opening line 1 is not reported, and one anywhere else is.
    #[test]
    fn a_leading_byte_order_mark_is_the_files_encoding() {
        check(
            plain(
                None,
                &[],
                Some("@@ -0,0 +1,2 @@\n+\u{FEFF}first\n+sec\u{FEFF}ond\n"),
            ),
            &["warning: this change contains a zero width no-break space (U+FEFF) at line 2"],
        );
        check(
            plain(None, &[], Some("@@ -4 +4 @@\n-x\n+\u{FEFF}x\n")),
            &["warning: this change contains a zero width no-break space (U+FEFF) at line 4"],
        );
    }

    /// Proves the target's hidden characters and look-alikes are reported once, even where the
    /// details restate the target.
    #[test]
    fn target_characters_and_look_alikes() {
        let target = "notes\u{202E}txt.sh";
        let details = vec![
            format!("target: {target} (3 bytes, 1 lines)"),
            "checkpoint: the current file is saved before the write".to_string(),
        ];
        check(
            plain(Some(target), &details, None),
            &["warning: the target contains a right-to-left override (U+202E)"],
        );
        let alike = ".\u{435}nv";
        let details = vec![format!("target: {alike} (3 bytes, 1 lines)")];
        check(
            plain(Some(alike), &details, None),
            &["warning: the target looks like .env (spelled with look-alike characters: U+0435)"],
        );
    }

    /// Proves command arguments are reported by position, the program apart, and a quoted
    /// token (already escaped by the daemon) keeps the positions right.
    #[test]
    fn command_arguments_are_reported_by_position() {
        let details = vec![
            "command profile: ws:test".to_string(),
            "argv: cargo test \"a b\" x\u{202E}y --\u{200B}".to_string(),
            "cwd: .".to_string(),
        ];
        check(
            plain(Some("."), &details, None),
            &[
                "warning: command argument 3 contains a right-to-left override (U+202E)",
                "warning: command argument 4 contains a zero width space (U+200B)",
            ],
        );
        assert_eq!(
            argv_tokens("p \"a \\\" b\" c"),
            vec!["p", "\"a \\\" b\"", "c"]
        );
    }

    /// Proves other lines are named by their label, look-alike paths in them are reported,
    /// the description is screened, and lines that already warn are skipped.
    #[test]
    fn other_lines_the_description_and_existing_warnings() {
        let details = vec![
            "restored: sr\u{200B}c/a.rs (the captured 3 bytes)".to_string(),
            "deleted: config/.\u{435}nv (it did not exist before)".to_string(),
            "warning: already said \u{202E}".to_string(),
            "no label here at all, just a sentence \u{2062} that runs on".to_string(),
        ];
        check(
            ApprovalText {
                description: "restore \u{2067}turn",
                target: None,
                details: &details,
                diff: None,
                diff_cut: "",
            },
            &[
                "warning: the \"restored\" line contains a zero width space (U+200B)",
                "warning: `config/.\u{435}nv` looks like config/.env (spelled with look-alike characters: U+0435)",
                "warning: a line of the approval contains an invisible times (U+2062)",
                "warning: the description contains a right-to-left isolate (U+2067)",
            ],
        );
    }

    /// Proves a flood of hidden characters is capped with a count of the rest.
    #[test]
    fn warnings_are_capped() {
        let diff: String = std::iter::once("@@ -0,0 +1,20 @@\n".to_string())
            .chain((0..20).map(|_| "+x\u{202E}\n".to_string()))
            .collect();
        let lines = warnings(&plain(None, &[], Some(&diff)));
        assert_eq!(lines.len(), MAX_WARNINGS + 1);
        assert_eq!(
            lines.last().map(String::as_str),
            Some(
                "warning: 8 more place(s) hold characters that change what is shown; the lines above list the first 12"
            )
        );
        assert!(has_hidden("a\u{2069}") && !has_hidden("abc"));
    }
}

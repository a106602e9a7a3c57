//! The unified diff shown in an approval: three lines of context, capped at 60 body lines and
//! 6,000 characters, with a visible truncation mark.

use similar::{ChangeTag, TextDiff};

pub const MAX_DIFF_LINES: usize = 60;
pub const MAX_DIFF_CHARS: usize = 6_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub text: String,
    pub added: usize,
    pub removed: usize,
    pub truncated: bool,
    pub note: &'static str,
    /// The body lines past the cap, not shown; the approval screen still names a hidden
    /// character in them (`talos_core::deceptive`).
    pub cut: String,
}

/// `before` is `None` for a new file.
pub fn preview(before: Option<&str>, after: &str) -> Preview {
    let old = before.unwrap_or("");
    let diff = TextDiff::from_lines(old, after);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let note = match before {
        None => "new file",
        Some(b) if b == after => "no changes",
        Some(_) => "",
    };
    let body = diff.unified_diff().context_radius(3).to_string();
    let mut lines: Vec<String> = Vec::new();
    for line in body.lines() {
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            continue;
        }
        lines.push(line.to_string());
    }
    let total = lines.len();
    let mut text = String::new();
    let mut shown = 0;
    for line in &lines {
        if shown == MAX_DIFF_LINES || text.len() + line.len() + 1 > MAX_DIFF_CHARS {
            break;
        }
        text.push_str(line);
        text.push('\n');
        shown += 1;
    }
    let truncated = shown < total;
    if truncated {
        text.push_str(&format!("... ({} more diff lines)\n", total - shown));
    }
    Preview {
        text,
        added,
        removed,
        truncated,
        note,
        cut: cut_lines(&lines[shown..]),
    }
}

/// Lines past a cap, each ending in a newline.
pub fn cut_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_edit_shows_both_sides() {
        let p = preview(Some("TIMEOUT = 30\n"), "TIMEOUT = 60\n");
        assert_eq!((p.added, p.removed, p.truncated, p.note), (1, 1, false, ""));
        assert_eq!(p.text, "@@ -1 +1 @@\n-TIMEOUT = 30\n+TIMEOUT = 60\n");
    }

    #[test]
    fn new_files_are_marked() {
        assert_eq!(preview(None, "x\n").note, "new file");
        assert_eq!(preview(Some("x\n"), "x\n").note, "no changes");
    }

    #[test]
    fn caps_hold_at_sixty_lines_and_six_thousand_characters() {
        let after: String = (0..500).map(|i| format!("line {i}\n")).collect();
        let p = preview(None, &after);
        assert!(p.truncated);
        let body_lines = p.text.lines().count() - 1;
        assert_eq!(body_lines, MAX_DIFF_LINES);
        assert!(p.text.ends_with("more diff lines)\n"));

        let wide: String = (0..50)
            .map(|i| format!("{i}{}\n", "x".repeat(400)))
            .collect();
        let p = preview(None, &wide);
        assert!(p.truncated);
        let body: usize = p
            .text
            .lines()
            .take(p.text.lines().count() - 1)
            .map(|l| l.len() + 1)
            .sum();
        assert!(body <= MAX_DIFF_CHARS, "{body}");
    }
}

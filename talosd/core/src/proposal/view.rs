//! What the read tools show: a file as numbered lines (capped, with a note for binary files and
//! documents the text tools cannot read), a listing (capped), and grep's report (hits, caps, and
//! the note that protected content was not searched). Pure text from what the daemon read.

use crate::request::targets::is_unreadable_document;

/// Characters of numbered file text given to the model from one read.
pub const MAX_READ_OUTPUT: usize = 16_000;

/// A file's bytes as the model reads them: lines `offset..offset+max_lines` (1-based), numbered.
pub fn file(shown: &str, bytes: &[u8], max_lines: usize, offset: usize) -> String {
    if is_unreadable_document(shown) {
        return format!(
            "{shown} is a binary document (PDF, Word, Excel, ...); the text tools cannot extract its text, so its contents are not shown."
        );
    }
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return format!("{shown} looks like a binary file; its contents are not shown.");
    }
    numbered(shown, &String::from_utf8_lossy(bytes), max_lines, offset)
}

/// A document's extracted text (with its page, sheet or slide markers) as the model reads it:
/// numbered and capped like any file.
pub fn extracted(shown: &str, text: &str, max_lines: usize, offset: usize) -> String {
    numbered(shown, text, max_lines, offset)
}

/// The capability note for a document whose text could not be extracted: never invented text.
/// Whether `text` is [`document_note`]'s for `shown`: the read's text was not extracted.
pub fn is_document_note(shown: &str, text: &str) -> bool {
    text.starts_with(&format!(
        "{shown} is a binary document; Talos could not extract its text ("
    ))
}

pub fn document_note(shown: &str, reason: &str) -> String {
    format!(
        "{shown} is a binary document; Talos could not extract its text ({reason}), so its contents are not shown."
    )
}

fn numbered(shown: &str, text: &str, max_lines: usize, offset: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return format!("{shown} is empty.");
    }
    if offset > lines.len() {
        return format!(
            "(file has {} lines; offset {offset} is past end)",
            lines.len()
        );
    }
    let mut out = String::new();
    let start = offset.max(1);
    let end = (start - 1 + max_lines).min(lines.len());
    for (i, line) in lines[start - 1..end].iter().enumerate() {
        out.push_str(&format!("{} | {line}\n", start + i));
        if out.len() > MAX_READ_OUTPUT {
            let more = lines.len() - (start + i);
            out.push_str(&format!(
                "... ({more} more lines; output capped, use offset and max_lines to read further)\n"
            ));
            return out;
        }
    }
    if end < lines.len() {
        out.push_str(&format!("... ({} more lines)\n", lines.len() - end));
    }
    out
}

/// A directory listing from at most `max_entries + 1` names (one more tells it was cut).
pub fn listing(mut entries: Vec<String>, max_entries: usize) -> String {
    entries.sort();
    if entries.is_empty() {
        return "(empty directory)".into();
    }
    let truncated = entries.len() > max_entries;
    entries.truncate(max_entries);
    let mut out = entries.join("\n");
    if truncated {
        out.push_str(&format!("\n... (truncated at {max_entries} entries)"));
    }
    out
}

/// Refuses an include glob grep does not support (comma lists without braces).
pub fn grep_include_problem(glob: &str) -> Option<&'static str> {
    (glob.contains(',') && !glob.contains('{')).then_some(
        "Invalid include glob: comma-separated include values are not supported. Pass one glob such as *.js, or one brace glob such as *.{html,css,js}.",
    )
}

/// Whether grep skips a file as binary (more than four NULs in its first 512 bytes).
pub fn grep_skips(bytes: &[u8]) -> bool {
    bytes.iter().take(512).filter(|b| **b == 0).count() > 4
}

/// One grep hit: the file, the 1-based line number and the line (at most 200 characters).
pub fn grep_hit(relative: &str, line_number: usize, line: &str) -> String {
    let shown: String = line.chars().take(200).collect();
    format!("{relative}:{line_number} | {shown}")
}

/// Grep's report.
pub fn grep_report(
    pattern: &str,
    hits: &[String],
    max_results: usize,
    protected_skipped: usize,
) -> String {
    let mut out = if hits.is_empty() {
        format!("No matches found in searchable non-protected text files for: {pattern}")
    } else {
        format!("Found {} match(es):\n{}", hits.len(), hits.join("\n"))
    };
    if hits.len() >= max_results {
        out.push_str(&format!("\n(results capped at {max_results})"));
    }
    if protected_skipped > 0 {
        out.push_str("\nMatches were found or may exist in protected content, but matching lines were not returned.");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(shown: &str, bytes: &[u8], max_lines: usize, offset: usize, expected: &str) {
        assert_eq!(file(shown, bytes, max_lines, offset), expected, "{shown}");
    }

    #[test]
    fn files_are_numbered_capped_and_binary_is_never_shown() {
        check(
            "a.txt",
            b"one\ntwo\nthree\n",
            2,
            1,
            "1 | one\n2 | two\n... (1 more lines)\n",
        );
        check("a.txt", b"one\ntwo\n", 5, 2, "2 | two\n");
        check("a.txt", b"", 5, 1, "a.txt is empty.");
        check(
            "a.txt",
            b"one\n",
            5,
            3,
            "(file has 1 lines; offset 3 is past end)",
        );
        check(
            "b.bin",
            b"ab\0cd",
            5,
            1,
            "b.bin looks like a binary file; its contents are not shown.",
        );
        check(
            "r.pdf",
            b"%PDF-1.4 text",
            5,
            1,
            "r.pdf is a binary document (PDF, Word, Excel, ...); the text tools cannot extract its text, so its contents are not shown.",
        );
    }

    #[test]
    fn listings_and_grep_reports_say_when_they_were_cut() {
        assert_eq!(listing(vec![], 5), "(empty directory)");
        assert_eq!(
            listing(vec!["b".into(), "a".into(), "c".into()], 2),
            "a\nb\n... (truncated at 2 entries)"
        );
        assert_eq!(
            grep_report("x", &[], 10, 1),
            "No matches found in searchable non-protected text files for: x\nMatches were found or may exist in protected content, but matching lines were not returned."
        );
        assert_eq!(
            grep_report("x", &["a:1 | x".into()], 1, 0),
            "Found 1 match(es):\na:1 | x\n(results capped at 1)"
        );
        assert!(grep_include_problem("*.js,*.css").is_some());
        assert!(grep_include_problem("*.{js,css}").is_none());
        assert!(grep_skips(b"\0\0\0\0\0x"));
        assert!(!grep_skips(b"\0text"));
    }
}

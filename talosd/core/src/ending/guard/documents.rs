//! Answers about documents the text tools cannot read (pdf, docx, xlsx, ...). When a turn's
//! reads hit such a document, or the request named one and a readable fallback, the records
//! say its text was never seen: a claim that it "is empty" or "has no text" cannot stand. The
//! claim's sentences are replaced by the runtime's statement, the rest of the answer is kept,
//! and the capability note leads the answer. Which documents: [`unreadable_documents`]; the
//! rewrite: [`correct_document_claims`].

use crate::request::contract::TaskContract;
use crate::request::intent::TargetRole;
use crate::request::targets::is_unreadable_document;

/// How the capability note begins (the route's note for a turn that only named documents
/// begins the same way).
pub const DOCUMENT_NOTE_START: &str =
    "[Capability note: Talos's file tools read text files; they cannot extract the text of";

/// Words that claim a document holds no text.
#[rustfmt::skip]
const EMPTY_CLAIMS: &[&str] = &[
    "is empty", "was empty", "appears empty", "appears to be empty", "seems empty",
    "seems to be empty", "looks empty", "be empty", "has no text", "has no content",
    "contains no text", "contains no content", "contains nothing", "no text in",
    "no content in", "no readable text", "nothing in it", "is blank", "blank document",
    "does not contain any", "doesn't contain any", "has nothing", "no data in",
    "there is no text", "there is no content", "are empty", "were empty", "are blank",
    "contain no text", "contain no content", "contain nothing", "no extractable text",
    "not contain any", "don't contain any", "have no text", "have no content",
];

/// The unreadable documents of a turn: those its reads hit (`read_paths`, the paths of its
/// `talos.read_file` calls) and those the request named but left for a readable fallback.
pub fn unreadable_documents<'a>(
    contract: &'a TaskContract,
    read_paths: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let named = contract
        .roleful_targets
        .iter()
        .filter(|t| {
            t.role == TargetRole::MentionedOnly && t.reason == "unreadable-document-with-fallback"
        })
        .map(|t| t.path.as_str());
    let mut out: Vec<String> = Vec::new();
    for path in read_paths.into_iter().chain(named) {
        if is_unreadable_document(path) && !out.iter().any(|d| d == path) {
            out.push(path.to_string());
        }
    }
    out
}

/// The answer with the capability note first and every sentence that says one of
/// `documents` is empty or has no text replaced by what the records show. Unchanged when
/// `documents` is empty.
pub fn correct_document_claims(answer: &str, documents: &[String]) -> String {
    if documents.is_empty() {
        return answer.to_string();
    }
    let mut corrected: Vec<String> = Vec::new();
    let mut replaced = false;
    for sentence in sentences(answer) {
        if claims_empty(sentence, documents) {
            if !replaced {
                corrected.push(format!(
                    "Talos did not see the text of {}: the text tools cannot extract it, so whether it is empty is not known.",
                    documents.join(", ")
                ));
            }
            replaced = true;
            continue;
        }
        corrected.push(sentence.trim().to_string());
    }
    let body = corrected
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if answer.contains(DOCUMENT_NOTE_START) {
        return if replaced { body } else { answer.to_string() };
    }
    let note = format!(
        "{DOCUMENT_NOTE_START} {} (its text could not be extracted, so its contents were not seen).]",
        documents.join(", ")
    );
    let kept = if replaced {
        body
    } else {
        answer.trim().to_string()
    };
    if kept.is_empty() {
        note
    } else {
        format!("{note}\n\n{kept}")
    }
}

/// Whether a sentence says one of the documents (or, with one document, "the file" or "it")
/// holds no text.
fn claims_empty(sentence: &str, documents: &[String]) -> bool {
    let lower = sentence.to_lowercase();
    if !EMPTY_CLAIMS.iter().any(|claim| lower.contains(claim)) {
        return false;
    }
    let names_one = documents.iter().any(|d| {
        let d = d.to_lowercase();
        let base = d.rsplit('/').next().unwrap_or(&d).to_string();
        lower.contains(&d) || lower.contains(&base)
    });
    let plural = documents.len() > 1
        && [
            "these files",
            "the files",
            "both files",
            "these documents",
            "the documents",
            "they are",
            "they contain",
            "they have",
            "they do not",
            "they don't",
        ]
        .iter()
        .any(|m| lower.contains(m));
    let refers = plural
        || documents.len() == 1
            && [
                "the file",
                "the document",
                "the pdf",
                "the report",
                "it is",
                "it's",
                "it has",
                "it contains",
                "it appears",
                "it seems",
            ]
            .iter()
            .any(|m| lower.contains(m));
    names_one || refers
}

/// The answer cut into sentences, each with its end mark and following whitespace (line breaks
/// end a sentence too).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(at, c)) in bytes.iter().enumerate() {
        let next = bytes.get(k + 1).map(|&(_, n)| n);
        let end =
            c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace));
        if end {
            let stop = at + c.len_utf8();
            out.push(&text[start..stop]);
            start = stop;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::contract::resolve;

    fn check(answer: &str, documents: &[&str], expected: &str) {
        let documents: Vec<String> = documents.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            correct_document_claims(answer, &documents),
            expected,
            "{answer}"
        );
    }

    const NOTE: &str = "[Capability note: Talos's file tools read text files; they cannot extract the text of report.pdf (its text could not be extracted, so its contents were not seen).]";

    /// Proves an "empty / no text" claim about an unreadable document is replaced, the rest of
    /// the answer kept, the note added once, and answers without documents left alone.
    #[test]
    fn empty_claims_about_unreadable_documents_do_not_stand() {
        let replaced = "Talos did not see the text of report.pdf: the text tools cannot extract it, so whether it is empty is not known.";
        check(
            "report.pdf is empty. The notes mention Q3.",
            &["report.pdf"],
            &format!("{NOTE}\n\n{replaced} The notes mention Q3."),
        );
        check(
            "I read the file. It appears to be empty, so there is nothing to summarize.",
            &["report.pdf"],
            &format!("{NOTE}\n\nI read the file. {replaced}"),
        );
        check(
            "docs/report.pdf has no text.",
            &["docs/report.pdf"],
            "[Capability note: Talos's file tools read text files; they cannot extract the text of docs/report.pdf (its text could not be extracted, so its contents were not seen).]\n\nTalos did not see the text of docs/report.pdf: the text tools cannot extract it, so whether it is empty is not known.",
        );
        check(
            "report.md says revenue grew.",
            &["report.pdf"],
            &format!("{NOTE}\n\nreport.md says revenue grew."),
        );
        check("report.pdf is empty.", &[], "report.pdf is empty.");
        // Plural claims about several documents (issue 27).
        check(
            "These files are empty.",
            &["report.pdf", "budget.xlsx"],
            "[Capability note: Talos's file tools read text files; they cannot extract the text of report.pdf, budget.xlsx (its text could not be extracted, so its contents were not seen).]\n\nTalos did not see the text of report.pdf, budget.xlsx: the text tools cannot extract it, so whether it is empty is not known.",
        );
        check(
            "They do not contain any extractable text.",
            &["report.pdf", "budget.xlsx"],
            "[Capability note: Talos's file tools read text files; they cannot extract the text of report.pdf, budget.xlsx (its text could not be extracted, so its contents were not seen).]\n\nTalos did not see the text of report.pdf, budget.xlsx: the text tools cannot extract it, so whether it is empty is not known.",
        );
        check(
            "Both files were read. budget.xlsx has no content.",
            &["report.pdf", "budget.xlsx"],
            "[Capability note: Talos's file tools read text files; they cannot extract the text of report.pdf, budget.xlsx (its text could not be extracted, so its contents were not seen).]\n\nBoth files were read. Talos did not see the text of report.pdf, budget.xlsx: the text tools cannot extract it, so whether it is empty is not known.",
        );
        check(
            &format!("{NOTE}\nreport.md says revenue grew."),
            &["report.pdf"],
            &format!("{NOTE}\nreport.md says revenue grew."),
        );
        check(
            "The file is empty.\r\nreport.md lists three goals.",
            &["report.pdf"],
            &format!("{NOTE}\n\n{replaced} report.md lists three goals."),
        );
    }

    /// Proves the documents come from the turn's reads and from a request's fallback, once each.
    #[test]
    fn unreadable_documents_come_from_reads_and_fallbacks() {
        let fallback =
            resolve("Summarize report.pdf. If PDF is unsupported, read report.md instead.");
        let plain = resolve("Summarize notes.md");
        let rows: Vec<(&TaskContract, Vec<&str>, Vec<&str>)> = vec![
            (&plain, vec!["notes.md"], vec![]),
            (
                &plain,
                vec!["a.pdf", "notes.md", "a.pdf", "b.DOCX"],
                vec!["a.pdf", "b.DOCX"],
            ),
            (&fallback, vec!["report.md"], vec!["report.pdf"]),
            (
                &fallback,
                vec!["report.pdf", "report.md"],
                vec!["report.pdf"],
            ),
        ];
        for (contract, reads, expected) in rows {
            assert_eq!(
                unreadable_documents(contract, reads.iter().copied()),
                expected
            );
        }
    }
}

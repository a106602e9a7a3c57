//! Table tests of the retrieval decisions.

use super::*;

fn words_of(text: &str) -> Vec<String> {
    terms(text).into_iter().map(|(_, t)| t).collect()
}

/// Proves identifiers are kept whole and split on camelCase, snake_case, digits and punctuation.
#[test]
fn term_rows() {
    let rows: &[(&str, &[&str])] = &[
        (
            "approvalTimeoutMs",
            &["approvaltimeoutms", "approval", "timeout", "ms"],
        ),
        (
            "approval_timeout",
            &["approval_timeout", "approval", "timeout"],
        ),
        ("HTTPServer", &["httpserver", "http", "server"]),
        ("sha256sum", &["sha256sum", "sha", "256", "sum"]),
        ("session::store", &["session", "store"]),
        ("plain words here", &["plain", "words", "here"]),
        ("__init__", &["init"]),
        ("a.b-c/d", &["a", "b", "c", "d"]),
        ("", &[]),
    ];
    for (text, expected) in rows {
        assert_eq!(words_of(text), *expected, "{text}");
    }
}

/// Proves the parts of one identifier share its position.
#[test]
fn parts_share_the_word_position() {
    let got = terms("let fooBar = 1");
    assert_eq!(
        got,
        vec![
            (0, "let".to_string()),
            (1, "foobar".to_string()),
            (1, "foo".to_string()),
            (1, "bar".to_string()),
            (2, "1".to_string()),
        ]
    );
}

/// Proves an overlong run (a hash, base64) is no term.
#[test]
fn overlong_terms_are_dropped() {
    let long = "a".repeat(65);
    assert!(words_of(&long).is_empty());
    assert_eq!(words_of(&"b".repeat(64)).len(), 1);
}

/// Proves chunks cover the lines in order with right ranges, and blank tails are dropped.
#[test]
fn chunk_rows() {
    let text: String = (1..=95).map(|n| format!("line {n}\n")).collect();
    let got: Vec<(usize, usize)> = chunks(&text)
        .iter()
        .map(|c| (c.start_line, c.end_line))
        .collect();
    assert_eq!(got, vec![(1, 40), (41, 80), (81, 95)]);
    assert!(chunks("").is_empty());
    assert!(chunks("\n\n  \n").is_empty());
    let one = chunks("only\n");
    assert_eq!(
        (one[0].start_line, one[0].end_line, one[0].text.as_str()),
        (1, 1, "only\n")
    );
}

/// Proves a long line does not make a chunk over the character cap.
#[test]
fn chunks_are_capped_in_characters() {
    let line = "x".repeat(3_000);
    let text = format!("{line}\n{line}\n{line}\n");
    let got = chunks(&text);
    assert_eq!(got.len(), 3);
    assert!(got.iter().all(|c| c.text.len() <= CHUNK_CHARS + 1));
    assert_eq!((got[1].start_line, got[1].end_line), (2, 2));
    let huge = "y".repeat(10_000);
    assert!(chunks(&huge)[0].text.len() <= CHUNK_CHARS + 1);
}

/// Proves protected paths and large files are never admitted, and binaries are seen.
#[test]
fn admission_rows() {
    assert_eq!(admit_path("src/main.rs", 10), Ok(()));
    assert_eq!(admit_path(".env", 10), Err(Skip::Protected));
    assert_eq!(admit_path("config/.env.local", 10), Err(Skip::Protected));
    assert_eq!(admit_path("keys/id_rsa", 10), Err(Skip::Protected));
    assert_eq!(
        admit_path("big.txt", MAX_INDEXED_BYTES + 1),
        Err(Skip::TooLarge)
    );
    assert_eq!(admit_text(b"hello\nworld"), Ok(()));
    assert_eq!(admit_text(b"\x7fELF\x02\x01\x00\x00"), Err(Skip::Binary));
    assert_eq!(admit_text(&[0xff; 100]), Err(Skip::Binary));
    assert_eq!(admit_text("naïve café".as_bytes()), Ok(()));
}

/// Proves document kinds come from the extension, any case, never from a bare dotfile.
#[test]
fn document_kind_rows() {
    let rows = [
        ("a.pdf", Some(DocumentKind::Pdf)),
        ("docs/Report.DOCX", Some(DocumentKind::Docx)),
        ("t.xlsx", Some(DocumentKind::Xlsx)),
        ("t.ods", Some(DocumentKind::Ods)),
        ("t.odt", Some(DocumentKind::Odt)),
        ("t.pptx", Some(DocumentKind::Pptx)),
        (".pdf", None),
        ("dir/.pdf", None),
        ("notes.txt", None),
        ("a.pdf.txt", None),
    ];
    for (path, kind) in rows {
        assert_eq!(DocumentKind::of(path), kind, "{path}");
    }
    assert_eq!(DocumentKind::parse("docx"), Some(DocumentKind::Docx));
    assert_eq!(DocumentKind::parse("exe"), None);
}

/// Proves size and mtime decide whether a file is read again.
#[test]
fn freshness_rows() {
    let stamp = Stamp {
        size: 10,
        mtime_ns: 5,
        hash: "h".into(),
    };
    assert_eq!(freshness(None, 10, 5), Freshness::New);
    assert_eq!(freshness(Some(&stamp), 10, 5), Freshness::Same);
    assert_eq!(freshness(Some(&stamp), 11, 5), Freshness::Check);
    assert_eq!(freshness(Some(&stamp), 10, 6), Freshness::Check);
}

fn hit(path: &str, start: usize, text: &str) -> Hit {
    Hit {
        path: path.into(),
        start_line: start,
        end_line: start + 2,
        score: 1.0,
        text: text.into(),
    }
}

/// Proves the snippet is the line with the most query terms, numbered from the chunk start.
#[test]
fn snippet_picks_the_best_line() {
    let text = "fn a() {}\nlet approval_timeout = 30;\nfn b() {}\n";
    assert_eq!(
        snippet(text, 10, "approval timeout"),
        (11, "let approval_timeout = 30;".into())
    );
    let long = format!("{}\n", "word ".repeat(100));
    let (_, shown) = snippet(&long, 1, "word");
    assert_eq!(shown.chars().count(), SNIPPET_CHARS + 1);
}

/// Proves the report ranks, numbers, caps and never shows a protected path.
#[test]
fn report_rows() {
    let hits = vec![
        hit("src/a.rs", 1, "approval timeout here\n"),
        hit(".env", 1, "SECRET=approval\n"),
        hit("src/b.rs", 41, "other approval\n"),
    ];
    let got = report("approval", &hits, 8);
    assert!(got.starts_with("Top 2 indexed chunk(s) for: approval\n1. src/a.rs:1-3 (line 1) | approval timeout here\n2. src/b.rs:41-43 (line 41) | other approval"), "{got}");
    assert!(!got.contains("SECRET"));
    assert!(got.contains("protected"));
    assert_eq!(
        report("zzz", &[], 8),
        "No indexed workspace text matches: zzz"
    );
    let one = report("approval", &hits, 1);
    assert!(one.contains("Top 1 "), "{one}");
    let many: Vec<Hit> = (0..50)
        .map(|n| {
            hit(
                &format!("src/{}.rs", "m".repeat(100) + &n.to_string()),
                1,
                &"approval ".repeat(40),
            )
        })
        .collect();
    assert!(report("approval", &many, 50).len() <= SEARCH_OUTPUT_CHARS + 200);
}

/// Proves question words are dropped from a query unless nothing else is left.
#[test]
fn query_term_rows() {
    assert_eq!(
        query_terms("where is the approval timeout set?"),
        vec!["approval", "timeout"]
    );
    assert_eq!(
        query_terms("how are sessionStores kept"),
        vec!["sessionstores", "session", "stores", "kept"]
    );
    assert_eq!(query_terms("where is it"), vec!["where", "is", "it"]);
    assert!(query_terms("?!").is_empty());
}

/// Proves the runtime retrieves first only for workspace questions that name no file, and
/// only where talos.search is offered.
#[test]
fn retrieves_first_rows() {
    use crate::request::task::TaskType::*;
    assert!(retrieves_first(ReadOnlyQa, false, 0, true));
    assert!(retrieves_first(WorkspaceExplain, false, 0, true));
    assert!(retrieves_first(DiagnoseOnly, false, 0, true));
    assert!(
        !retrieves_first(ReadOnlyQa, false, 1, true),
        "a named file is read, not searched"
    );
    assert!(!retrieves_first(ReadOnlyQa, true, 0, true));
    assert!(!retrieves_first(ReadOnlyQa, false, 0, false));
    assert!(!retrieves_first(FileEdit, false, 0, true));
    assert!(!retrieves_first(SmallTalk, false, 0, true));
}

/// Proves the hint offers distinct files, best first, never a protected one, and nothing when
/// nothing matched.
#[test]
fn hint_rows() {
    let hits = vec![
        hit("src/a.rs", 1, "approval timeout\n"),
        hit("src/a.rs", 41, "approval again\n"),
        hit(".env", 1, "approval SECRET\n"),
        hit("src/b.rs", 1, "approval\n"),
        hit("src/c.rs", 1, "approval\n"),
        hit("src/d.rs", 1, "approval\n"),
    ];
    let got = hint("approval timeout", &hits).unwrap();
    assert!(got.contains("rely only on what you read"), "{got}");
    assert!(
        got.contains("- src/a.rs (lines 1-3, line 1: approval timeout)"),
        "{got}"
    );
    assert!(
        got.contains("src/b.rs") && got.contains("src/c.rs"),
        "{got}"
    );
    assert!(
        !got.contains("src/d.rs") && !got.contains("SECRET") && !got.contains(".env"),
        "{got}"
    );
    assert_eq!(got.matches("src/a.rs").count(), 1);
    assert_eq!(hint("x", &[]), None);
}

#[test]
fn a_first_build_reports_each_quarter_once() {
    let rows: &[(bool, u64, u64, Option<u64>, Option<u64>)] = &[
        (true, 0, 400, None, Some(0)),
        (true, 64, 400, Some(0), None),
        (true, 100, 400, Some(0), Some(1)),
        (true, 399, 400, Some(3), None),
        (true, 400, 400, Some(3), Some(4)),
        (true, 500, 400, Some(3), Some(4)),
        (false, 0, 400, None, None),
        (true, 0, 99, None, None),
    ];
    for (first, done, total, last, expected) in rows {
        assert_eq!(
            progress_step(*first, *done, *total, *last),
            *expected,
            "{first} {done}/{total} after {last:?}"
        );
    }
}

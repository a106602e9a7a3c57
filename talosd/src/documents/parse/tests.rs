//! The parsers on documents made in memory, hostile ones included.

use super::*;
use crate::documents::samples;

/// Proves a generated pdf's text comes back per page, with page markers.
#[test]
fn pdf_text_has_page_markers() {
    let bytes = samples::pdf(&["Quarterly revenue grew", "Second page words"]);
    let text = text(DocumentKind::Pdf, &bytes).unwrap();
    assert!(text.contains("[page 1]"), "{text}");
    assert!(text.contains("Quarterly revenue grew"), "{text}");
    assert!(text.contains("[page 2]"), "{text}");
    assert!(text.contains("Second page words"), "{text}");
}

/// Proves a docx's paragraphs come back one per line, entities decoded.
#[test]
fn docx_text_is_its_paragraphs() {
    let bytes = samples::docx(&["First paragraph", "Tom & Jerry <3"]);
    let text = text(DocumentKind::Docx, &bytes).unwrap();
    assert_eq!(text, "First paragraph\nTom & Jerry <3\n");
}

/// Proves an xlsx's cells come back tab-separated under a sheet marker.
#[test]
fn xlsx_text_has_sheet_markers() {
    let bytes = samples::xlsx("Budget", &[&["Item", "Cost"], &["Servers", "1200"]]);
    let text = text(DocumentKind::Xlsx, &bytes).unwrap();
    assert_eq!(text, "[sheet Budget]\nItem\tCost\nServers\t1200\n");
}

/// Proves broken input is a failure, never text.
#[test]
fn malformed_documents_fail() {
    assert!(matches!(
        text(DocumentKind::Pdf, &samples::malformed_pdf()),
        Err(Failure::Unreadable(_))
    ));
    for kind in [
        DocumentKind::Docx,
        DocumentKind::Xlsx,
        DocumentKind::Pptx,
        DocumentKind::Odt,
    ] {
        assert!(
            matches!(
                text(kind, b"PK\x03\x04garbage"),
                Err(Failure::Unreadable(_))
            ),
            "{kind:?}"
        );
    }
    assert!(matches!(
        text(DocumentKind::Docx, &samples::xlsx("S", &[])),
        Err(Failure::Unreadable(_))
    ));
}

/// Proves a docx that inflates past the member cap is refused, not read into memory.
#[test]
fn zip_bomb_docx_is_refused() {
    let bytes = samples::zip_bomb_docx(40);
    assert!(bytes.len() < 200_000, "{}", bytes.len());
    match text(DocumentKind::Docx, &bytes) {
        Err(Failure::Unreadable(reason)) => assert!(reason.contains("inflates past"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// Proves a pdf naming an /Encrypt dictionary it cannot open is reported as encrypted.
#[test]
fn encrypted_pdf_is_reported() {
    let mut bytes = samples::malformed_pdf();
    bytes.extend_from_slice(b"trailer << /Encrypt 5 0 R >>\n");
    assert_eq!(text(DocumentKind::Pdf, &bytes), Err(Failure::Encrypted));
}

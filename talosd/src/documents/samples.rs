//! Small documents made in memory, for the tests and the bench (no fixtures downloaded): a
//! pdf with one line per page, a docx with paragraphs, an xlsx with one sheet of inline
//! strings, and the hostile shapes (a malformed pdf, a zip-bomb-shaped docx). The XML parts
//! carry no namespace declarations: the parsers match element names as written.

use std::io::{Cursor, Write};

use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};

/// A pdf whose page N shows `lines[N-1]`.
pub fn pdf(lines: &[&str]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Courier",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids: Vec<Object> = Vec::new();
    for line in lines {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(*line)]),
                Operation::new("ET", vec![]),
            ],
        };
        let content_id = doc.add_object(Stream::new(
            dictionary! {},
            content.encode().unwrap_or_default(),
        ));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(page_id.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    let _ = doc.save_to(&mut out);
    out
}

/// Bytes that start like a pdf and are not one.
pub fn malformed_pdf() -> Vec<u8> {
    b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj << /Kids [ 9 0 R\nstartxref\n999999\n%%EOF\n"
        .to_vec()
}

fn zipped(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(false);
    for (name, bytes) in members {
        let _ = zip.start_file(*name, options);
        let _ = zip.write_all(bytes);
    }
    zip.finish().map(Cursor::into_inner).unwrap_or_default()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A docx with one paragraph per entry.
pub fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<w:p><w:r><w:t>{}</w:t></w:r></w:p>", escape(p)))
        .collect();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document><w:body>{body}</w:body></w:document>"#
    );
    zipped(&[("word/document.xml", document.as_bytes())])
}

/// A docx whose document.xml inflates to `megabytes` MiB of one repeated byte.
pub fn zip_bomb_docx(megabytes: usize) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(megabytes >= 4096);
    let _ = zip.start_file("word/document.xml", options);
    let block = vec![b' '; 1 << 20];
    for _ in 0..megabytes {
        let _ = zip.write_all(&block);
    }
    zip.finish().map(Cursor::into_inner).unwrap_or_default()
}

/// An xlsx with one sheet named `sheet`, rows of inline-string cells.
pub fn xlsx(sheet: &str, rows: &[&[&str]]) -> Vec<u8> {
    let mut data = String::new();
    for (r, row) in rows.iter().enumerate() {
        data.push_str(&format!("<row r=\"{}\">", r + 1));
        for (c, cell) in row.iter().enumerate() {
            let column = char::from(b'A' + u8::try_from(c % 26).unwrap_or(0));
            data.push_str(&format!(
                "<c r=\"{column}{}\" t=\"inlineStr\"><is><t>{}</t></is></c>",
                r + 1,
                escape(cell)
            ));
        }
        data.push_str("</row>");
    }
    let worksheet = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet><sheetData>{data}</sheetData></worksheet>"#
    );
    let workbook = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook><sheets><sheet name="{}" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        escape(sheet)
    );
    let rels = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>"#;
    zipped(&[
        ("xl/workbook.xml", workbook.as_bytes()),
        ("xl/_rels/workbook.xml.rels", rels.as_bytes()),
        ("xl/worksheets/sheet1.xml", worksheet.as_bytes()),
    ])
}

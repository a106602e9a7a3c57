//! The parsers the extractor child runs, in process (so they are tested directly too):
//! lopdf for pdf, calamine for xlsx and ods, zip plus quick-xml for docx, odt and pptx.
//! Every zip member is read through a size cap, so a zip bomb ends in a refusal, not in
//! memory exhaustion.

use std::io::{Cursor, Read};

use talos_core::retrieval::DocumentKind;

/// Largest uncompressed zip member read.
const MAX_MEMBER_BYTES: u64 = 32 << 20;
/// Most slides read from a presentation.
const MAX_SLIDES: usize = 500;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    Encrypted,
    Unreadable(String),
}

fn unreadable(e: impl std::fmt::Display) -> Failure {
    Failure::Unreadable(e.to_string())
}

/// The document's text with `[page N]`, `[sheet NAME]` or `[slide N]` markers.
pub fn text(kind: DocumentKind, bytes: &[u8]) -> Result<String, Failure> {
    match kind {
        DocumentKind::Pdf => pdf(bytes),
        DocumentKind::Xlsx => sheets(
            calamine::open_workbook_from_rs::<calamine::Xlsx<_>, _>(Cursor::new(bytes))
                .map_err(workbook_error)?,
        ),
        DocumentKind::Ods => sheets(
            calamine::open_workbook_from_rs::<calamine::Ods<_>, _>(Cursor::new(bytes))
                .map_err(workbook_error)?,
        ),
        DocumentKind::Docx => {
            let xml = member(&mut archive(bytes)?, "word/document.xml")?;
            Ok(xml_text(&xml, &["w:t"], &["w:p"], &["w:tab"]))
        }
        DocumentKind::Odt => {
            let xml = member(&mut archive(bytes)?, "content.xml")?;
            Ok(xml_text(
                &xml,
                &["text:p", "text:h", "text:span"],
                &["text:p", "text:h"],
                &["text:tab"],
            ))
        }
        DocumentKind::Pptx => slides(bytes),
    }
}

fn pdf(bytes: &[u8]) -> Result<String, Failure> {
    let looks_encrypted = bytes.windows(8).any(|w| w == b"/Encrypt");
    let document = match lopdf::Document::load_mem(bytes) {
        Ok(document) => document,
        Err(_) if looks_encrypted => return Err(Failure::Encrypted),
        Err(e) => return Err(unreadable(e)),
    };
    let mut out = String::new();
    for number in document.get_pages().keys() {
        match document.extract_text(&[*number]) {
            Ok(text) => {
                out.push_str(&format!("[page {number}]\n"));
                out.push_str(text.trim_end());
                out.push('\n');
            }
            Err(_) if document.is_encrypted() => return Err(Failure::Encrypted),
            Err(e) => return Err(unreadable(e)),
        }
    }
    if out.trim().is_empty() && document.is_encrypted() {
        return Err(Failure::Encrypted);
    }
    Ok(out)
}

fn workbook_error(e: impl std::fmt::Display) -> Failure {
    let text = e.to_string();
    if text.to_ascii_lowercase().contains("password") || text.contains("ncrypt") {
        Failure::Encrypted
    } else {
        unreadable(text)
    }
}

fn sheets<RS, R>(mut workbook: R) -> Result<String, Failure>
where
    RS: Read + std::io::Seek,
    R: calamine::Reader<RS>,
    R::Error: std::fmt::Display,
{
    let mut out = String::new();
    for name in workbook.sheet_names() {
        let range = workbook.worksheet_range(&name).map_err(unreadable)?;
        out.push_str(&format!("[sheet {name}]\n"));
        for row in range.rows() {
            let cells: Vec<String> = row.iter().map(ToString::to_string).collect();
            if cells.iter().any(|c| !c.is_empty()) {
                out.push_str(cells.join("\t").trim_end());
                out.push('\n');
            }
        }
    }
    Ok(out)
}

fn slides(bytes: &[u8]) -> Result<String, Failure> {
    let mut zip = archive(bytes)?;
    let mut numbers: Vec<usize> = zip
        .file_names()
        .filter_map(|n| {
            n.strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()
        })
        .collect();
    numbers.sort_unstable();
    numbers.truncate(MAX_SLIDES);
    let mut out = String::new();
    for n in numbers {
        let xml = member(&mut zip, &format!("ppt/slides/slide{n}.xml"))?;
        out.push_str(&format!("[slide {n}]\n"));
        out.push_str(&xml_text(&xml, &["a:t"], &["a:p"], &[]));
    }
    Ok(out)
}

fn archive(bytes: &[u8]) -> Result<zip::ZipArchive<Cursor<&[u8]>>, Failure> {
    let zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(unreadable)?;
    if zip
        .file_names()
        .any(|n| n == "EncryptionInfo" || n == "EncryptedPackage")
    {
        return Err(Failure::Encrypted);
    }
    Ok(zip)
}

/// One zip member's bytes, refused past [`MAX_MEMBER_BYTES`] uncompressed (counted while
/// inflating, not taken from the header).
fn member(zip: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str) -> Result<Vec<u8>, Failure> {
    let file = match zip.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::UnsupportedArchive(m)) if m.contains("ncrypt") => {
            return Err(Failure::Encrypted);
        }
        Err(e) => return Err(unreadable(e)),
    };
    let mut out = Vec::new();
    file.take(MAX_MEMBER_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(unreadable)?;
    if out.len() as u64 > MAX_MEMBER_BYTES {
        return Err(Failure::Unreadable(format!(
            "{name} inflates past {} MiB",
            MAX_MEMBER_BYTES >> 20
        )));
    }
    Ok(out)
}

/// The text inside `text_tags`, a newline after each `line_tags` element ends and a tab for
/// each `tab_tags` element.
fn xml_text(xml: &[u8], text_tags: &[&str], line_tags: &[&str], tab_tags: &[&str]) -> String {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut out = String::new();
    let mut depth_in_text = 0usize;
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if text_tags.contains(&name.as_str()) {
                    depth_in_text += 1;
                }
            }
            Ok(Event::Empty(e)) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if tab_tags.contains(&name.as_str()) {
                    out.push('\t');
                }
                if line_tags.contains(&name.as_str()) {
                    out.push('\n');
                }
            }
            Ok(Event::End(e)) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if text_tags.contains(&name.as_str()) {
                    depth_in_text = depth_in_text.saturating_sub(1);
                }
                if line_tags.contains(&name.as_str()) {
                    out.push('\n');
                }
            }
            Ok(Event::Text(t)) if depth_in_text > 0 => {
                if let Ok(text) = t.decode() {
                    out.push_str(&text);
                }
            }
            Ok(Event::GeneralRef(r)) if depth_in_text > 0 => {
                let entity = String::from_utf8_lossy(&r).into_owned();
                out.push_str(match entity.as_str() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    _ => "",
                });
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
        buf.clear();
    }
    out
}

#[cfg(test)]
mod tests;

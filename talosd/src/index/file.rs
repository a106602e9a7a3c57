//! One listed file into the index: read through the `Workspace` handle, hashed, and its chunks
//! (re)written; a document by its extracted text. A document whose extraction failed is
//! remembered by its content hash in the manifest (`Manifest::failed`, issue 26): it is not
//! extracted again, nor read again while its size and mtime hold, until its bytes change
//! (`index/rebuild` forgets every failure).

use talos_core::retrieval::{self, Freshness, Stamp};
use tantivy::{IndexWriter, Term, doc};

use super::store::{self, Entry, Failed};
use super::{Fields, Listed, Opened};
use crate::documents::ExtractError;
use crate::workspace::Workspace;

/// What became of one file.
pub enum FileOutcome {
    /// (Re)indexed; `extracted`: a document's text was extracted for it.
    Indexed { entry: Entry, extracted: bool },
    /// Read and hashed: the bytes are those already indexed.
    SameContent(Entry),
    /// Not admitted (protected, too large, binary, unreadable).
    Skipped,
    /// A document whose text could not be extracted; `extracted`: it was tried now (false
    /// when the same bytes had failed before).
    Unextractable { failed: Failed, extracted: bool },
}

/// Whether a file that failed before is unchanged since by its size and mtime: then it is not
/// read at all.
pub fn failed_and_unchanged(opened: &Opened, file: &Listed) -> bool {
    opened.manifest.failed.get(&file.path).is_some_and(|f| {
        let stamp = Stamp {
            size: f.size,
            mtime_ns: f.mtime_ns,
            hash: f.hash.clone(),
        };
        retrieval::freshness(Some(&stamp), file.size, file.mtime_ns) == Freshness::Same
    })
}

pub fn delete(writer: &IndexWriter, fields: &Fields, path: &str) {
    writer.delete_term(Term::from_field_text(fields.path, path));
}

/// Reads one listed file through the workspace handle and (re)indexes its chunks.
pub fn index_file(
    opened: &Opened,
    writer: &IndexWriter,
    workspace: &Workspace,
    file: &Listed,
    held: Option<&Stamp>,
) -> Result<FileOutcome, String> {
    if retrieval::admit_path(&file.path, file.size).is_err() {
        return Ok(FileOutcome::Skipped);
    }
    let Ok(Some(bytes)) =
        workspace.read_unshared_limited(&file.path, &file.path, retrieval::MAX_INDEXED_BYTES)
    else {
        return Ok(FileOutcome::Skipped);
    };
    let hash = store::hash(&bytes);
    let entry = |chunks: u64| Entry {
        size: file.size,
        mtime_ns: file.mtime_ns,
        hash: hash.clone(),
        chunks,
    };
    if let Some(stamp) = held
        && stamp.hash == hash
    {
        let chunks = opened
            .manifest
            .files
            .get(&file.path)
            .map_or(0, |e| e.chunks);
        return Ok(FileOutcome::SameContent(entry(chunks)));
    }
    let kind = retrieval::DocumentKind::of(&file.path);
    let text = match text_of(opened, file, &bytes, &hash) {
        Ok(text) => text,
        Err(outcome) => return Ok(outcome),
    };
    delete(writer, &opened.fields, &file.path);
    let chunks = retrieval::chunks(&text);
    let f = &opened.fields;
    for chunk in &chunks {
        writer
            .add_document(doc!(
                f.path => file.path.as_str(),
                f.path_terms => file.path.as_str(),
                f.start => chunk.start_line as u64,
                f.end => chunk.end_line as u64,
                f.body => chunk.text.as_str(),
            ))
            .map_err(|e| format!("cannot index {}: {e}", file.path))?;
    }
    Ok(FileOutcome::Indexed {
        entry: entry(chunks.len() as u64),
        extracted: kind.is_some(),
    })
}

/// The text to index: a document's extracted text (not extracted again when these bytes
/// failed before), or the bytes as text; `Err` with the outcome when there is none.
fn text_of(
    opened: &Opened,
    file: &Listed,
    bytes: &[u8],
    hash: &str,
) -> Result<String, FileOutcome> {
    let failed = |reason: String| Failed {
        size: file.size,
        mtime_ns: file.mtime_ns,
        hash: hash.to_string(),
        reason,
    };
    let Some(kind) = retrieval::DocumentKind::of(&file.path) else {
        if retrieval::admit_text(bytes).is_err() {
            return Err(FileOutcome::Skipped);
        }
        return Ok(String::from_utf8_lossy(bytes).into_owned());
    };
    if let Some(before) = opened.manifest.failed.get(&file.path)
        && before.hash == hash
    {
        return Err(FileOutcome::Unextractable {
            failed: failed(before.reason.clone()),
            extracted: false,
        });
    }
    match crate::documents::extract(kind, bytes) {
        Ok(text) => Ok(text),
        // The extractor itself did not run: nothing is known of the document yet.
        Err(ExtractError::NotStarted(_)) => Err(FileOutcome::Skipped),
        Err(ExtractError::Document(reason)) => Err(FileOutcome::Unextractable {
            failed: failed(reason),
            extracted: true,
        }),
    }
}

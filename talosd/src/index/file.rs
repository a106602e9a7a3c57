//! One listed file into the index: read through the `Workspace` handle, hashed, and its chunks
//! (re)written; a document by its extracted text.

use talos_core::retrieval::{self, Stamp};
use tantivy::{IndexWriter, Term, doc};

use super::store::{self, Entry};
use super::{Fields, Listed, Opened};
use crate::workspace::Workspace;

/// What became of one file.
pub enum FileOutcome {
    /// (Re)indexed.
    Indexed(Entry),
    /// Read and hashed: the bytes are those already indexed.
    SameContent(Entry),
    /// Not admitted (protected, too large, binary, unreadable, a document without text).
    Skipped,
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
    let text = match retrieval::DocumentKind::of(&file.path) {
        Some(kind) => match crate::documents::extract(kind, &bytes) {
            Ok(text) => text,
            Err(_) => return Ok(FileOutcome::Skipped),
        },
        None => {
            if retrieval::admit_text(&bytes).is_err() {
                return Ok(FileOutcome::Skipped);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
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
    Ok(FileOutcome::Indexed(entry(chunks.len() as u64)))
}

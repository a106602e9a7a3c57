//! The workspace index (issue 16): one tantivy index per workspace under the Talos home
//! (`<home>/index/<hash of the root>/`), never inside the workspace. The walk (`walk`) lists
//! files as ripgrep would; every byte indexed is read through [`Workspace`] with the checks
//! `talos.read_file` has (beneath the root, no link in the final position, regular files
//! only), and `talos_core::retrieval` decides what is admitted (never a protected path, a
//! binary or a file over the cap), how it is chunked and tokenised. Updates are incremental:
//! size and mtime first, then the content hash. A folder whose marker, manifest or tantivy
//! files do not open is rebuilt from nothing.

mod file;
pub mod requests;
mod rules;
mod store;
mod tokenizer;
pub mod tool;
mod walk;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use talos_core::retrieval::{self, Freshness, Hit, Stamp, UnreadIgnoreFile};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
    Value,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::workspace::Workspace;
use file::FileOutcome;

pub use walk::{Listed, Listing};

/// Progress of a build or update: files looked at out of files listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

/// What one update did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Updated {
    pub indexed: u64,
    pub removed: u64,
    pub unchanged: u64,
    pub skipped: u64,
    /// The index was built from nothing (first use, corrupt or another format).
    pub rebuilt: bool,
    /// Documents whose text extraction ran (a failure remembered from before does not run).
    pub extracted: u64,
    /// Ignore files the walk did not read: their patterns did not apply.
    pub unread_ignore_files: Vec<UnreadIgnoreFile>,
}

/// What `index/status` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub files: u64,
    pub chunks: u64,
    pub bytes: u64,
    pub updated_ms: Option<u64>,
    /// `absent` (never built), `ready`, or `invalid` (will be rebuilt on next use).
    pub state: &'static str,
}

struct Fields {
    path: Field,
    path_terms: Field,
    start: Field,
    end: Field,
    body: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer::NAME)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        path: builder.add_text_field("path", STRING | STORED),
        path_terms: builder.add_text_field("path_terms", text.clone()),
        start: builder.add_u64_field("start", INDEXED | STORED),
        end: builder.add_u64_field("end", STORED),
        body: builder.add_text_field("body", text | STORED),
    };
    (builder.build(), fields)
}

/// The one lock per index folder: tantivy allows one writer, and an update and a search in
/// the same daemon must not race on the manifest.
fn lock_for(folder: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut map = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    map.entry(folder.to_path_buf()).or_default().clone()
}

/// An open index folder.
struct Opened {
    index: Index,
    fields: Fields,
    manifest: store::Manifest,
    folder: crate::home::Store,
    rebuilt: bool,
}

fn open_or_rebuild(
    index_home: &crate::home::Store,
    root: &Path,
    force: bool,
) -> Result<Opened, String> {
    let folder = store::folder(index_home, root);
    let (schema, fields) = schema();
    if !force
        && let Some(manifest) = store::load(&folder, root)
        && let Ok(index) = Index::open_in_dir(store::tantivy_dir(&folder))
        && index.schema() == schema
        && index.searchable_segment_metas().is_ok()
    {
        register(&index);
        return Ok(Opened {
            index,
            fields,
            manifest,
            folder,
            rebuilt: false,
        });
    }
    let folder = store::reset(index_home, root)
        .map_err(|e| format!("cannot prepare the index folder: {e}"))?;
    let index = Index::create_in_dir(store::tantivy_dir(&folder), schema)
        .map_err(|e| format!("cannot create the index: {e}"))?;
    register(&index);
    Ok(Opened {
        index,
        fields,
        manifest: store::Manifest::default(),
        folder,
        rebuilt: true,
    })
}

fn register(index: &Index) {
    index
        .tokenizers()
        .register(tokenizer::NAME, tokenizer::CodeTokenizer);
}

fn writer(index: &Index) -> Result<IndexWriter, String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    index
        .writer_with_num_threads(threads, 40_000_000 * threads)
        .map_err(|e| format!("cannot write the index: {e}"))
}

/// Brings the index up to date with the workspace: new and changed files (size or mtime
/// moved and the hash differs) are reindexed, vanished ones removed. The first use builds it.
/// `stop` is asked before each file and each entry of the walk: when it says so the update
/// ends with [`STOPPED`], nothing committed.
pub fn update(
    index_home: &crate::home::Store,
    workspace: &Workspace,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Updated, String> {
    run(index_home, workspace, false, stop, progress)
}

/// Throws the index away and builds it again (every remembered failure forgotten).
pub fn rebuild(
    index_home: &crate::home::Store,
    workspace: &Workspace,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Updated, String> {
    run(index_home, workspace, true, stop, progress)
}

/// The error of an update that `stop` ended.
pub const STOPPED: &str =
    "the index update was stopped (the turn was cancelled or the daemon is stopping)";

/// The walk alone, without indexing: the files listed and the ignore files not read
/// (`talos doctor` asks for the second).
pub fn list(workspace: &Workspace, stop: &dyn Fn() -> bool) -> Listing {
    walk::files(workspace, stop)
}

fn run(
    index_home: &crate::home::Store,
    workspace: &Workspace,
    force: bool,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Updated, String> {
    let folder = store::folder(index_home, workspace.root());
    let lock = lock_for(&folder.path());
    let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut opened = open_or_rebuild(index_home, workspace.root(), force)?;
    let listing = walk::files(workspace, stop);
    if listing.stopped {
        return Err(STOPPED.into());
    }
    let mut updated = Updated {
        rebuilt: opened.rebuilt,
        unread_ignore_files: listing.unread,
        ..Updated::default()
    };
    let writer = writer(&opened.index)?;
    let total = listing.files.len() as u64;
    for (n, file) in listing.files.iter().enumerate() {
        if stop() {
            return Err(STOPPED.into());
        }
        if n % 64 == 0 {
            progress(Progress {
                done: n as u64,
                total,
            });
        }
        let held = opened.manifest.files.get(&file.path).map(|e| Stamp {
            size: e.size,
            mtime_ns: e.mtime_ns,
            hash: e.hash.clone(),
        });
        if retrieval::freshness(held.as_ref(), file.size, file.mtime_ns) == Freshness::Same {
            updated.unchanged += 1;
            continue;
        }
        if held.is_none() && file::failed_and_unchanged(&opened, file) {
            updated.skipped += 1;
            continue;
        }
        let outcome = file::index_file(&opened, &writer, workspace, file, held.as_ref())?;
        apply(&mut opened, &writer, &file.path, outcome, &mut updated);
    }
    let seen: BTreeSet<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
    opened
        .manifest
        .failed
        .retain(|path, _| seen.contains(path.as_str()));
    let gone: Vec<String> = opened
        .manifest
        .files
        .keys()
        .filter(|p| !seen.contains(&p[..]))
        .cloned()
        .collect();
    for path in gone {
        file::delete(&writer, &opened.fields, &path);
        opened.manifest.files.remove(&path);
        updated.removed += 1;
    }
    commit(writer, &mut opened)?;
    progress(Progress { done: total, total });
    Ok(updated)
}

/// Records what became of one file in the manifest (and the counts).
fn apply(
    opened: &mut Opened,
    writer: &IndexWriter,
    path: &str,
    outcome: FileOutcome,
    updated: &mut Updated,
) {
    let manifest = &mut opened.manifest;
    if !matches!(outcome, FileOutcome::SameContent(_)) {
        manifest.failed.remove(path);
    }
    let left_out = match outcome {
        FileOutcome::Indexed { entry, extracted } => {
            manifest.files.insert(path.to_string(), entry);
            updated.indexed += 1;
            updated.extracted += u64::from(extracted);
            false
        }
        FileOutcome::SameContent(entry) => {
            manifest.files.insert(path.to_string(), entry);
            updated.unchanged += 1;
            false
        }
        FileOutcome::Skipped => true,
        FileOutcome::Unextractable { failed, extracted } => {
            manifest.failed.insert(path.to_string(), failed);
            updated.extracted += u64::from(extracted);
            true
        }
    };
    if left_out {
        if manifest.files.remove(path).is_some() {
            file::delete(writer, &opened.fields, path);
        }
        updated.skipped += 1;
    }
}

fn commit(mut writer: IndexWriter, opened: &mut Opened) -> Result<(), String> {
    writer
        .commit()
        .map_err(|e| format!("cannot commit the index: {e}"))?;
    opened.manifest.updated_ms = now_ms();
    store::save(&opened.folder, &opened.manifest)
        .map_err(|e| format!("cannot save the index manifest: {e}"))
}

/// Reindexes one file at once (after Talos wrote it), or removes it when it is gone or no
/// longer admitted. Does nothing when the index was never built.
pub fn reindex_file(
    index_home: &crate::home::Store,
    workspace: &Workspace,
    relative: &str,
) -> Result<(), String> {
    let folder = store::folder(index_home, workspace.root());
    if store::load(&folder, workspace.root()).is_none() {
        return Ok(());
    }
    let lock = lock_for(&folder.path());
    let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
    let mut opened = open_or_rebuild(index_home, workspace.root(), false)?;
    let Some(held) = opened.manifest.files.get(relative).cloned() else {
        // Not indexed before (new, ignored or never admitted): the next update decides.
        return Ok(());
    };
    let writer = writer(&opened.index)?;
    let listed =
        match workspace.read_unshared_limited(relative, relative, retrieval::MAX_INDEXED_BYTES) {
            Ok(Some(bytes)) => Some(Listed {
                path: relative.to_string(),
                size: bytes.len() as u64,
                // Unknown here: the next update reads and hashes it once more, and finds it same.
                mtime_ns: held.mtime_ns.wrapping_add(1),
            }),
            _ => None,
        };
    let outcome = match &listed {
        Some(file) => file::index_file(&opened, &writer, workspace, file, None)?,
        None => FileOutcome::Skipped,
    };
    apply(
        &mut opened,
        &writer,
        relative,
        outcome,
        &mut Updated::default(),
    );
    commit(writer, &mut opened)
}

/// The ranked chunks for `query` (at most `limit`), never from a protected path. Searches
/// the index as it is; callers update first.
pub fn search(
    index_home: &crate::home::Store,
    root: &Path,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let folder = store::folder(index_home, root);
    let lock = lock_for(&folder.path());
    let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
    if store::load(&folder, root).is_none() {
        return Ok(Vec::new());
    }
    let opened = open_or_rebuild(index_home, root, false)?;
    let reader: IndexReader = opened
        .index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|e| format!("cannot read the index: {e}"))?;
    let searcher = reader.searcher();
    let f = &opened.fields;
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for term in retrieval::query_terms(query) {
        clauses.push((
            Occur::Should,
            Box::new(TermQuery::new(
                Term::from_field_text(f.body, &term),
                IndexRecordOption::WithFreqs,
            )),
        ));
        clauses.push((
            Occur::Should,
            Box::new(BoostQuery::new(
                Box::new(TermQuery::new(
                    Term::from_field_text(f.path_terms, &term),
                    IndexRecordOption::WithFreqs,
                )),
                1.5,
            )),
        ));
    }
    if clauses.is_empty() {
        return Ok(Vec::new());
    }
    let top = searcher
        .search(
            &BooleanQuery::new(clauses),
            &TopDocs::with_limit(limit.max(1) * 2),
        )
        .map_err(|e| format!("search failed: {e}"))?;
    let mut hits = Vec::new();
    for (score, address) in top {
        let Ok(document) = searcher.doc::<TantivyDocument>(address) else {
            continue;
        };
        let text_of = |field| {
            document
                .get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let number_of = |field| {
            document
                .get_first(field)
                .and_then(|v| v.as_u64())
                .unwrap_or(0) as usize
        };
        let path = text_of(f.path);
        if talos_core::protected::protected_kind(&path).is_some() {
            continue;
        }
        hits.push(Hit {
            path,
            start_line: number_of(f.start),
            end_line: number_of(f.end),
            score,
            text: text_of(f.body),
        });
        if hits.len() >= limit {
            break;
        }
    }
    Ok(hits)
}

/// Files, chunks, bytes, last update and state of a workspace's index.
pub fn status(index_home: &crate::home::Store, root: &Path) -> Status {
    let folder = store::folder(index_home, root);
    let bytes = store::bytes(&folder);
    match store::load(&folder, root) {
        Some(manifest) => Status {
            files: manifest.files.len() as u64,
            chunks: manifest.files.values().map(|e| e.chunks).sum(),
            bytes,
            updated_ms: (manifest.updated_ms > 0).then_some(manifest.updated_ms),
            state: "ready",
        },
        None => Status {
            files: 0,
            chunks: 0,
            bytes,
            updated_ms: None,
            state: if bytes == 0 { "absent" } else { "invalid" },
        },
    }
}

/// Removes the indexes of workspaces that are gone, or not updated for `max_age_ms`, and
/// folders that do not read as an index (retention, `daemon/gc`). Returns how many.
pub fn prune(index_home: &crate::home::Store, max_age_ms: u64) -> u64 {
    let mut removed = 0;
    for name in store::stale_folders(index_home, now_ms(), max_age_ms) {
        let lock = lock_for(&index_home.shown(&name));
        let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
        if store::remove(index_home, &name).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The folder a workspace's index lives in (for tests and the bench).
pub fn folder_of(index_home: &crate::home::Store, root: &Path) -> PathBuf {
    store::folder(index_home, root).path()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod walk_tests;

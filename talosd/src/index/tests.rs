//! The index on temporary workspaces and homes, hostile links included.

// std::fs here: the test workspaces and homes are built and broken by path.
#![allow(clippy::disallowed_methods)]

use std::path::Path;

use super::*;

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    home: crate::home::Store,
    root: PathBuf,
}

fn fixture(files: &[(&str, &str)]) -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(work.path()).unwrap();
    for (path, text) in files {
        put(&root, path, str::as_bytes(text));
    }
    Fixture {
        home: crate::paths::Home::from_root(home.path()).index(),
        root,
        _dirs: (home, work),
    }
}

fn put(root: &Path, path: &str, bytes: &[u8]) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, bytes).unwrap();
}

fn workspace(f: &Fixture) -> Workspace {
    Workspace::open(&f.root).unwrap()
}

fn update_all(f: &Fixture) -> Updated {
    update(&f.home, &workspace(f), &|| false, &mut |_| {}).unwrap()
}

fn paths(f: &Fixture, query: &str) -> Vec<String> {
    search(&f.home, &f.root, query, 10)
        .unwrap()
        .into_iter()
        .map(|h| h.path)
        .collect()
}

/// Proves a built index finds a file by a part of an identifier, with the chunk's lines.
#[test]
fn finds_identifier_parts_with_line_ranges() {
    let mut long = String::new();
    for n in 1..=50 {
        long.push_str(&format!("// filler line {n}\n"));
    }
    long.push_str("const APPROVAL_TIMEOUT_MS: u64 = 30_000;\n");
    let f = fixture(&[
        ("src/config.rs", &long),
        ("src/other.rs", "fn unrelated() {}\n"),
    ]);
    let first = update_all(&f);
    assert!(first.rebuilt);
    assert_eq!(first.indexed, 2);
    let hits = search(&f.home, &f.root, "where is the approval timeout set?", 5).unwrap();
    assert_eq!(hits[0].path, "src/config.rs");
    assert_eq!((hits[0].start_line, hits[0].end_line), (41, 51));
    assert_eq!(paths(&f, "approvalTimeout"), vec!["src/config.rs"]);
    assert!(paths(&f, "zebra").is_empty());
}

/// Proves protected files, ignored files, binaries and oversized files are never indexed.
#[test]
fn never_indexes_protected_ignored_binary_or_large_files() {
    let f = fixture(&[
        (".gitignore", "ignored/\n*.log\n"),
        (".env", "SECRET_TOKEN=hunter2 needle\n"),
        ("keys/id_rsa", "needle private key\n"),
        ("ignored/a.txt", "needle ignored\n"),
        ("run.log", "needle log\n"),
        ("src/ok.rs", "needle visible\n"),
    ]);
    put(&f.root, "bin/blob", b"needle\0\0\0binary");
    put(
        &f.root,
        "big.txt",
        format!("needle {}", "x".repeat(2 << 20)).as_bytes(),
    );
    update_all(&f);
    assert_eq!(paths(&f, "needle"), vec!["src/ok.rs"]);
    assert!(paths(&f, "hunter2").is_empty());
    let manifest = store::load(&store::folder(&f.home, &f.root), &f.root).unwrap();
    let held: Vec<&String> = manifest.files.keys().collect();
    assert_eq!(held, vec!["src/ok.rs"]);
}

/// Proves the index lives under the home, not in the workspace.
#[test]
fn index_is_outside_the_workspace() {
    let f = fixture(&[("a.txt", "hello\n")]);
    update_all(&f);
    let folder = folder_of(&f.home, &f.root);
    assert!(folder.starts_with(f.home.path()));
    assert!(folder.join("tantivy").is_dir());
    let entries: Vec<_> = std::fs::read_dir(&f.root).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1);
}

/// Proves later updates touch only changed files, and removals leave the index.
#[test]
fn updates_are_incremental() {
    let f = fixture(&[
        ("a.txt", "alpha\n"),
        ("b.txt", "beta\n"),
        ("c.txt", "gamma\n"),
    ]);
    assert_eq!(update_all(&f).indexed, 3);
    let again = update_all(&f);
    assert_eq!(
        (again.indexed, again.unchanged, again.rebuilt),
        (0, 3, false)
    );
    put(&f.root, "b.txt", b"betamax changed\n");
    std::fs::remove_file(f.root.join("c.txt")).unwrap();
    let changed = update_all(&f);
    assert_eq!(
        (changed.indexed, changed.removed, changed.unchanged),
        (1, 1, 1)
    );
    assert_eq!(paths(&f, "betamax"), vec!["b.txt"]);
    assert!(paths(&f, "beta").is_empty());
    assert!(paths(&f, "gamma").is_empty());
    // Same content, new mtime: read and hashed, not reindexed.
    let file = std::fs::File::options()
        .write(true)
        .open(f.root.join("a.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .unwrap();
    let touched = update_all(&f);
    assert_eq!((touched.indexed, touched.unchanged), (0, 2));
}

/// Proves a corrupt or foreign-format index is rebuilt, never trusted.
#[test]
fn corrupt_or_mismatched_index_is_rebuilt() {
    let f = fixture(&[("a.txt", "alpha\n")]);
    update_all(&f);
    let folder = folder_of(&f.home, &f.root);
    std::fs::write(
        folder.join("meta.json"),
        br#"{"format":"talos-index-0","root":"x"}"#,
    )
    .unwrap();
    assert_eq!(status(&f.home, &f.root).state, "invalid");
    let rebuilt = update_all(&f);
    assert!(rebuilt.rebuilt);
    assert_eq!(paths(&f, "alpha"), vec!["a.txt"]);
    std::fs::write(folder.join("tantivy/meta.json"), b"not json").unwrap();
    assert!(update_all(&f).rebuilt);
    assert_eq!(paths(&f, "alpha"), vec!["a.txt"]);
    std::fs::write(folder.join("manifest.json"), b"{").unwrap();
    assert!(update_all(&f).rebuilt);
}

/// Hostile: links inside the workspace that lead out are never followed, so text outside
/// the root never reaches the index.
#[test]
fn links_out_of_the_workspace_are_never_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "outsideonly token\n").unwrap();
    std::fs::create_dir(outside.path().join("dir")).unwrap();
    std::fs::write(outside.path().join("dir/inner.txt"), "outsideonly inner\n").unwrap();
    let f = fixture(&[("real.txt", "insideonly\n")]);
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), f.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("dir"), f.root.join("linkdir")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", f.root.join("passwd")).unwrap();
    update_all(&f);
    assert!(paths(&f, "outsideonly").is_empty());
    assert!(paths(&f, "root").is_empty());
    assert_eq!(paths(&f, "insideonly"), vec!["real.txt"]);
}

/// Proves a hard link to a file outside the workspace is never indexed: its bytes would reach
/// search results without the approval a read of it asks for (issue 18's rule).
#[test]
fn hard_linked_files_are_never_indexed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "sharedonly secret\n").unwrap();
    let f = fixture(&[("real.txt", "insideonly\n")]);
    // Both folders are in the temporary directory, so the link can be made.
    std::fs::hard_link(outside.path().join("secret.txt"), f.root.join("notes.txt")).unwrap();
    update_all(&f);
    assert!(paths(&f, "sharedonly").is_empty());
    assert_eq!(paths(&f, "insideonly"), vec!["real.txt"]);
}

/// Proves status reports files, chunks and bytes, and `absent` before the first build.
#[test]
fn status_reports_the_index() {
    let f = fixture(&[("a.txt", "alpha\n"), ("b.txt", "beta\n")]);
    assert_eq!(status(&f.home, &f.root).state, "absent");
    update_all(&f);
    let s = status(&f.home, &f.root);
    assert_eq!((s.files, s.chunks, s.state), (2, 2, "ready"));
    assert!(s.bytes > 0 && s.updated_ms.is_some());
}

/// Proves a file reindexed at once shows new text, and a removed one leaves.
#[test]
fn reindex_file_applies_one_change() {
    let f = fixture(&[("a.txt", "alpha\n")]);
    update_all(&f);
    put(&f.root, "a.txt", b"omega\n");
    reindex_file(&f.home, &workspace(&f), "a.txt").unwrap();
    assert_eq!(paths(&f, "omega"), vec!["a.txt"]);
    assert!(paths(&f, "alpha").is_empty());
    std::fs::remove_file(f.root.join("a.txt")).unwrap();
    reindex_file(&f.home, &workspace(&f), "a.txt").unwrap();
    assert!(paths(&f, "omega").is_empty());
}

/// Proves progress is reported up to the total.
#[test]
fn progress_reaches_the_total() {
    let f = fixture(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let mut seen = Vec::new();
    update(&f.home, &workspace(&f), &|| false, &mut |p| seen.push(p)).unwrap();
    assert_eq!(seen.last(), Some(&Progress { done: 2, total: 2 }));
}

/// Proves retention removes the index of a vanished workspace, an idle one and a broken
/// folder, and keeps a fresh one.
#[test]
fn prune_removes_stale_indexes_only() {
    let kept = fixture(&[("a.txt", "alpha\n")]);
    update_all(&kept);
    let gone = fixture(&[("b.txt", "beta\n")]);
    let gone_home = kept.home.clone();
    update(&gone_home, &workspace(&gone), &|| false, &mut |_| {}).unwrap();
    let gone_folder = folder_of(&gone_home, &gone.root);
    std::fs::remove_dir_all(&gone.root).unwrap();
    std::fs::create_dir_all(kept.home.path().join("junk")).unwrap();
    assert_eq!(prune(&kept.home, 3_600_000), 2);
    assert!(!gone_folder.exists());
    assert!(folder_of(&kept.home, &kept.root).exists());
    assert_eq!(prune(&kept.home, 3_600_000), 0, "nothing else is stale");
}

/// Proves a document whose extraction failed is not extracted again while its bytes are the
/// same (not even read while its size and mtime hold), the failure is kept in the manifest,
/// and a change of its bytes tries it once more (issue 26). In a unit test the extractor is
/// this test binary, which refuses the extractor's arguments: every pdf fails.
#[test]
fn a_failed_document_is_extracted_once_until_it_changes() {
    let f = fixture(&[("broken.pdf", "%PDF-1.4 not really"), ("a.txt", "alpha\n")]);
    let first = update_all(&f);
    assert_eq!((first.extracted, first.skipped, first.indexed), (1, 1, 1));
    let again = update_all(&f);
    assert_eq!(
        (again.extracted, again.skipped),
        (0, 1),
        "not extracted again"
    );
    let manifest = store::load(&store::folder(&f.home, &f.root), &f.root).unwrap();
    assert_eq!(
        manifest.failed.keys().collect::<Vec<_>>(),
        ["broken.pdf"],
        "the failure is kept with the index"
    );
    // Same bytes, another mtime: read and hashed, still not extracted.
    let file = std::fs::File::options()
        .write(true)
        .open(f.root.join("broken.pdf"))
        .unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH)
        .unwrap();
    assert_eq!(update_all(&f).extracted, 0);
    put(&f.root, "broken.pdf", b"%PDF-1.4 changed, still broken");
    assert_eq!(update_all(&f).extracted, 1, "changed bytes are tried again");
    std::fs::remove_file(f.root.join("broken.pdf")).unwrap();
    update_all(&f);
    let manifest = store::load(&store::folder(&f.home, &f.root), &f.root).unwrap();
    assert!(manifest.failed.is_empty(), "a file gone is forgotten");
}

/// Proves an update asked to stop ends with [`STOPPED`] and commits nothing; the ignore files
/// the walk could not read are reported with a completed update.
#[test]
fn a_stopped_update_commits_nothing_and_unread_ignore_files_are_reported() {
    let f = fixture(&[("a.txt", "alpha\n")]);
    let stopped = update(&f.home, &workspace(&f), &|| true, &mut |_| {});
    assert_eq!(stopped, Err(STOPPED.to_string()));
    assert_eq!(status(&f.home, &f.root).files, 0);
    std::os::unix::fs::symlink("/dev/zero", f.root.join(".gitignore")).unwrap();
    let done = update_all(&f);
    assert_eq!(done.indexed, 1);
    let unread: Vec<&str> = done
        .unread_ignore_files
        .iter()
        .map(|u| u.path.as_str())
        .collect();
    assert_eq!(unread, [".gitignore"]);
}

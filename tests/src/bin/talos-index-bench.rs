//! talos-index-bench: the workspace index (issue 16) on a real code corpus no one here wrote,
//! by default the crate sources under the cargo registry. The corpus is copied to a scratch
//! folder first (the bench changes one file), then: full build time and files per second,
//! index bytes, incremental update time after one file changes, query latency p50 and p99
//! over a fixed query list, and the same queries' wall time with ripgrep (`rg`) for scale.
//!
//! Run: `cargo run --release -p talos-tests --bin talos-index-bench [-- CORPUS_DIR]`.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use talosd::index;
use talosd::workspace::Workspace;

const QUERIES: [&str; 20] = [
    "parse error",
    "tokenizer",
    "serialize struct",
    "thread pool",
    "hash map capacity",
    "utf8 decode",
    "async runtime spawn",
    "file descriptor close",
    "regex compile",
    "unsafe pointer",
    "zip archive",
    "json value",
    "deflate compression",
    "btree insert",
    "socket connect",
    "command line arguments",
    "lock mutex poison",
    "iterator adapter",
    "error source display",
    "memory map",
];

const ROUNDS: usize = 5;

fn default_corpus() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let src = home.join("registry/src");
    std::fs::read_dir(&src)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() -> anyhow::Result<()> {
    let corpus = match std::env::args().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => default_corpus().context("no corpus: pass a folder")?,
    };
    let scratch = tempfile::tempdir()?;
    let copy = scratch.path().join("corpus");
    let status = Command::new("cp")
        .arg("-a")
        .arg(&corpus)
        .arg(&copy)
        .status()?;
    if !status.success() {
        bail!("cannot copy {}", corpus.display());
    }
    let home = talosd::paths::Home::from_root(&scratch.path().join("home")).index();
    let workspace = Workspace::open(&copy).map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("corpus: {} (copied)", corpus.display());

    let started = Instant::now();
    let built =
        index::rebuild(&home, &workspace, &|| false, &mut |_| {}).map_err(anyhow::Error::msg)?;
    let build = started.elapsed();
    let status = index::status(&home, workspace.root());
    let looked_at = built.indexed + built.skipped + built.unchanged;
    println!(
        "full build: {:.2} s, {} files indexed ({} skipped), {:.0} files/s, {} chunks",
        build.as_secs_f64(),
        built.indexed,
        built.skipped,
        looked_at as f64 / build.as_secs_f64(),
        status.chunks
    );
    println!(
        "index bytes: {} ({:.1} MiB)",
        status.bytes,
        status.bytes as f64 / 1048576.0
    );

    let changed = first_rust_file(&copy).context("no .rs file in the corpus")?;
    let mut text = std::fs::read_to_string(&changed)?;
    text.push_str("\n// talos-index-bench: changed\n");
    std::fs::write(&changed, text)?;
    let started = Instant::now();
    let updated =
        index::update(&home, &workspace, &|| false, &mut |_| {}).map_err(anyhow::Error::msg)?;
    println!(
        "incremental update after one file changed: {} ({} reindexed, {} unchanged)",
        ms(started.elapsed()),
        updated.indexed,
        updated.unchanged
    );
    let started = Instant::now();
    index::update(&home, &workspace, &|| false, &mut |_| {}).map_err(anyhow::Error::msg)?;
    println!("update with nothing changed: {}", ms(started.elapsed()));

    let mut latencies = Vec::new();
    for _ in 0..ROUNDS {
        for query in QUERIES {
            let started = Instant::now();
            let hits =
                index::search(&home, workspace.root(), query, 8).map_err(anyhow::Error::msg)?;
            latencies.push(started.elapsed());
            std::hint::black_box(hits);
        }
    }
    latencies.sort();
    println!(
        "query latency over {} queries x {ROUNDS}: p50 {}, p99 {}",
        QUERIES.len(),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99))
    );

    match rg_times(&copy) {
        Ok(times) => {
            let mut sorted = times.clone();
            sorted.sort();
            let total: Duration = times.iter().sum();
            println!(
                "ripgrep (rg -i -l, terms OR-ed) same queries: p50 {}, p99 {}, total {}",
                ms(percentile(&sorted, 0.5)),
                ms(percentile(&sorted, 0.99)),
                ms(total)
            );
        }
        Err(e) => println!("ripgrep: not measured ({e})"),
    }
    Ok(())
}

fn first_rust_file(root: &Path) -> Option<PathBuf> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir).ok()?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "rs") {
                return Some(path);
            }
            if entry.file_type().ok()?.is_dir() {
                stack.push(path);
            }
        }
    }
    None
}

fn rg_times(root: &Path) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::new();
    for query in QUERIES {
        let mut command = Command::new("rg");
        command.arg("-i").arg("-l");
        for term in query.split_whitespace() {
            command.arg("-e").arg(term);
        }
        let started = Instant::now();
        let status = command
            .arg(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .context("rg not found (Debian package ripgrep)")?;
        times.push(started.elapsed());
        if status.code() == Some(2) {
            bail!("rg failed");
        }
    }
    Ok(times)
}

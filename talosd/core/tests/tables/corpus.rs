//! The request corpus: requests written as people type them (`corpus_rows.tsv`), each with the
//! contract it must give against a small workspace: its kind (or `ASK` when the person must
//! choose), whether a change is requested, the targets to change, the change its words name
//! (the pin), and the files a question must read. The test prints the accuracy by kind and
//! fails on any row that misreads, except rows marked `?` (known misreadings, kept visible):
//! those must still misread, so a fixed one is unmarked rather than forgotten.

use talos_core::change::ChangeAsk;
use talos_core::contract::{Reading, TaskContract, resolve, with_files};

const ROWS: &str = include_str!("corpus_rows.tsv");

struct Row {
    line: usize,
    known: bool,
    request: String,
    files: Vec<String>,
    want: Reading2,
}

/// What a row states, each field as the TSV spells it.
#[derive(Debug, PartialEq, Eq)]
struct Reading2 {
    kind: String,
    change: String,
    targets: String,
    pin: String,
    reads: String,
}

fn list(field: &str) -> Vec<String> {
    if field == "-" {
        return Vec::new();
    }
    field.split(',').map(|s| s.trim().to_string()).collect()
}

fn unescape(field: &str) -> String {
    field.replace("\\n", "\n").replace("\\t", "\t")
}

fn parse() -> Vec<Row> {
    let mut rows = Vec::new();
    for (index, raw) in ROWS.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let (known, raw) = match raw.strip_prefix('?') {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        let f: Vec<&str> = raw.split('\t').collect();
        assert_eq!(
            f.len(),
            7,
            "line {line}: 7 tab-separated fields, got {}: {raw:?}",
            f.len()
        );
        rows.push(Row {
            line,
            known,
            request: unescape(f[0]),
            files: list(f[1]),
            want: Reading2 {
                kind: f[2].into(),
                change: f[3].into(),
                targets: f[4].into(),
                pin: normal_pin(f[5]),
                reads: f[6].into(),
            },
        });
    }
    rows
}

/// A pin as the table spells it: `replace:FROM=>TO@KEY`, `set:KEY=VALUE`,
/// `rename:FROM=>TO`, `content:TEXT` (`\n` for a line break), `comment:NEEDLE`,
/// `uncomment:NEEDLE`, `remove-line:NEEDLE`, or `-`. Keys compare without case.
fn pin(ask: Option<&ChangeAsk>) -> String {
    let text = match ask {
        None => "-".to_string(),
        Some(ChangeAsk::Replace { from, to, key }) => match key {
            Some(key) => format!("replace:{from}=>{to}@{}", key.to_lowercase()),
            None => format!("replace:{from}=>{to}"),
        },
        Some(ChangeAsk::SetKey { key, value }) => format!("set:{}={value}", key.to_lowercase()),
        Some(ChangeAsk::RenameSymbol { from, to }) => format!("rename:{from}=>{to}"),
        Some(ChangeAsk::Content { content }) => format!("content:{}", content.replace('\n', "\\n")),
        Some(ChangeAsk::CommentOut { needle }) => format!("comment:{needle}"),
        Some(ChangeAsk::Uncomment { needle }) => format!("uncomment:{needle}"),
        Some(ChangeAsk::RemoveLine { needle }) => format!("remove-line:{needle}"),
    };
    normal_pin(&text)
}

fn normal_pin(field: &str) -> String {
    match field.split_once('@') {
        Some((head, key)) => format!("{head}@{}", key.to_lowercase()),
        None => match field.strip_prefix("set:").and_then(|r| r.split_once('=')) {
            Some((key, value)) => format!("set:{}={value}", key.to_lowercase()),
            None => field.to_string(),
        },
    }
}

fn joined(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}

fn read(contract: &TaskContract) -> Reading2 {
    let (kind, targets) = match &contract.reading {
        Reading::Uncertain { targets } => ("ASK".to_string(), joined(targets)),
        Reading::Settled if contract.mutation_allowed => (
            contract.task_type.as_str().to_string(),
            joined(&contract.expected_targets),
        ),
        Reading::Settled => (contract.task_type.as_str().to_string(), "-".into()),
    };
    let reads = if contract.mutation_allowed {
        contract.source_evidence_targets.clone()
    } else {
        let mut all = contract.expected_targets.clone();
        all.extend(contract.source_evidence_targets.iter().cloned());
        all
    };
    Reading2 {
        kind,
        change: if contract.mutation_requested {
            "y"
        } else {
            "n"
        }
        .into(),
        targets,
        pin: pin(contract.change.as_ref()),
        reads: joined(&reads),
    }
}

/// The family a row counts under in the report: its expected kind, and for changes whether a
/// pin is expected.
fn family(want: &Reading2) -> String {
    match (want.kind.as_str(), want.pin.split(':').next()) {
        ("FILE_EDIT" | "FILE_CREATE", Some(pin)) if pin != "-" => format!("{} {pin}", want.kind),
        (kind, _) => kind.to_string(),
    }
}

/// Proves every request of the corpus gives the contract its row states, and prints the
/// accuracy by kind (`cargo test -p talos-core --test tables corpus -- --nocapture`).
#[test]
fn request_corpus() {
    let rows = parse();
    let mut by_family: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut wrong = Vec::new();
    let mut fixed = Vec::new();
    for row in &rows {
        let got = read(&with_files(resolve(&row.request), &row.files));
        let ok = got == row.want;
        let entry = by_family.entry(family(&row.want)).or_default();
        entry.0 += 1;
        entry.1 += usize::from(ok);
        match (ok, row.known) {
            (true, true) => fixed.push(format!(
                "line {}: {:?} now reads right: remove its `?`",
                row.line, row.request
            )),
            (false, false) => wrong.push(format!(
                "line {}: {:?}\n    want {:?}\n    got  {:?}",
                row.line, row.request, row.want, got
            )),
            _ => {}
        }
    }
    let total = rows.len();
    let right: usize = by_family.values().map(|(_, ok)| ok).sum();
    println!("request corpus: {right} of {total} read right");
    for (family, (n, ok)) in &by_family {
        println!(
            "  {family:<28} {ok:>4} / {n:<4} ({:.0}%)",
            100.0 * *ok as f64 / *n as f64
        );
    }
    assert!(
        total >= 400,
        "the corpus holds {total} requests; it must hold at least 400"
    );
    assert!(
        wrong.is_empty() && fixed.is_empty(),
        "{} misread:\n{}\n{}",
        wrong.len(),
        wrong.join("\n"),
        fixed.join("\n")
    );
}

//! The resolver table: every row of `resolver_rows.tsv` is one request and the contract it
//! must resolve to (type, requested, allowed, expected, forbidden, roleful targets, reason).
//! All mismatching rows are reported in one failure. Every row also checks the contract's
//! invariants (flags follow the type, target lists compile from the roleful list).

use talos_core::contract::{TaskContract, TaskType, resolve};
use talos_core::intent::{TargetRole, TargetSource, compile};

const ROWS: &str = include_str!("resolver_rows.tsv");

/// One parsed row of the table.
struct Row {
    line: usize,
    request: String,
    task_type: String,
    requested: bool,
    allowed: bool,
    expected: Vec<String>,
    forbidden: Vec<String>,
    roleful: Vec<String>,
    reason: Option<String>,
}

fn unescape(field: &str) -> String {
    if field == "<empty>" {
        return String::new();
    }
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn list(field: &str) -> Vec<String> {
    if field == "-" {
        return Vec::new();
    }
    field.split(',').map(|s| s.trim().to_string()).collect()
}

fn flag(field: &str, line: usize) -> bool {
    match field {
        "y" => true,
        "n" => false,
        other => panic!("line {line}: flag must be y or n, not {other:?}"),
    }
}

fn parse(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = raw.split('\t').collect();
        assert_eq!(
            fields.len(),
            8,
            "line {line}: 8 tab-separated fields expected, got {}: {raw:?}",
            fields.len()
        );
        rows.push(Row {
            line,
            request: unescape(fields[0]),
            task_type: fields[1].to_string(),
            requested: flag(fields[2], line),
            allowed: flag(fields[3], line),
            expected: list(fields[4]),
            forbidden: list(fields[5]),
            roleful: list(fields[6]),
            reason: (fields[7] != "-").then(|| fields[7].to_string()),
        });
    }
    rows
}

/// `path:ROLE`, with `@SOURCE` when the source is not USER_REQUEST.
fn roleful(contract: &TaskContract) -> Vec<String> {
    contract
        .roleful_targets
        .iter()
        .map(|t| {
            let source = match t.source {
                TargetSource::UserRequest => String::new(),
                other => format!("@{}", other.as_str()),
            };
            format!("{}:{}{}", t.path, t.role.as_str(), source)
        })
        .collect()
}

/// The invariants every contract keeps, whatever the request.
fn invariant_problems(c: &TaskContract) -> Vec<String> {
    let mut problems = Vec::new();
    let mutates = matches!(c.task_type, TaskType::FileEdit | TaskType::FileCreate);
    if c.mutation_allowed != (c.mutation_requested && mutates) {
        problems.push("allowed != requested && FILE_EDIT|FILE_CREATE".to_string());
    }
    if c.verification_required != (c.mutation_allowed || c.task_type == TaskType::VerifyOnly) {
        problems.push("verification != allowed || VERIFY_ONLY".to_string());
    }
    let compiled = compile(&c.roleful_targets, c.mutation_requested);
    if (
        &compiled.expected,
        &compiled.source_evidence,
        &compiled.forbidden,
    ) != (
        &c.expected_targets,
        &c.source_evidence_targets,
        &c.forbidden_targets,
    ) {
        problems.push(format!(
            "target lists do not compile from the roleful list: {compiled:?}"
        ));
    }
    if c.mutation_allowed
        && c.expected_targets
            .iter()
            .any(|t| c.forbidden_targets.contains(t))
    {
        problems.push("an expected target is forbidden".to_string());
    }
    if c.static_web.forbidden_artifacts != c.forbidden_targets {
        problems.push("forbidden artifacts differ from forbidden targets".to_string());
    }
    let mut paths: Vec<&str> = c.roleful_targets.iter().map(|t| t.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    if paths.len() != c.roleful_targets.len() {
        problems.push("a path has two roles".to_string());
    }
    problems
}

fn yn(b: bool) -> &'static str {
    if b { "y" } else { "n" }
}

fn joined(items: &[String]) -> String {
    if items.is_empty() {
        "-".to_string()
    } else {
        items.join(",")
    }
}

/// Every row of the table resolves to its contract, and every contract keeps its invariants.
#[test]
fn resolver_table() {
    let rows = parse(ROWS);
    assert!(rows.len() >= 300, "the table has only {} rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let c = resolve(&row.request);
        let actual_roleful = roleful(&c);
        let mut diffs = Vec::new();
        let mut field = |name: &str, expected: String, actual: String| {
            if expected != actual {
                diffs.push(format!("{name}: expected {expected} got {actual}"));
            }
        };
        field(
            "type",
            row.task_type.clone(),
            c.task_type.as_str().to_string(),
        );
        field(
            "requested",
            yn(row.requested).into(),
            yn(c.mutation_requested).into(),
        );
        field(
            "allowed",
            yn(row.allowed).into(),
            yn(c.mutation_allowed).into(),
        );
        field(
            "expected",
            joined(&row.expected),
            joined(&c.expected_targets),
        );
        field(
            "forbidden",
            joined(&row.forbidden),
            joined(&c.forbidden_targets),
        );
        field("roleful", joined(&row.roleful), joined(&actual_roleful));
        if let Some(reason) = &row.reason {
            field("reason", reason.clone(), c.classification_reason());
        }
        diffs.extend(invariant_problems(&c));
        if !diffs.is_empty() {
            let actual_row = format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                row.request.replace('\n', "\\n"),
                c.task_type.as_str(),
                yn(c.mutation_requested),
                yn(c.mutation_allowed),
                joined(&c.expected_targets),
                joined(&c.forbidden_targets),
                joined(&actual_roleful),
                c.classification_reason()
            );
            failures.push(format!(
                "line {} {:?}\n    {}\n    actual row: {actual_row}",
                row.line,
                row.request,
                diffs.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows mismatch:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

/// Every role name parses back to its role, so the table's role column is closed.
#[test]
fn role_names_round_trip() {
    for role in [
        TargetRole::Forbidden,
        TargetRole::MustMutate,
        TargetRole::OutputDestination,
        TargetRole::MustRead,
        TargetRole::SourceEvidence,
        TargetRole::VerifyOnly,
        TargetRole::MayMutate,
        TargetRole::MentionedOnly,
    ] {
        assert_eq!(TargetRole::parse(role.as_str()), Some(role));
    }
}

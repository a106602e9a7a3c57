//! The read-only tools' IO: read_file, list_dir and grep through the workspace handle. What
//! they show is `talos_core::view`'s; listing shows names; grep never returns lines from
//! protected files, nor from hard-linked ones (their bytes may belong to a file outside the
//! workspace; `Workspace::read_unshared` refuses them).

use talos_core::protected::protected_kind;
use talos_core::tools::ToolArgs;
use talos_core::view;

use crate::workspace::{EntryKind, Resolved, Workspace, WorkspaceError as IoError};
use talos_core::retrieval::SKIP_DIRS;

pub fn read_file(
    workspace: &Workspace,
    resolved: &Resolved,
    shown: &str,
    max_lines: usize,
    offset: usize,
) -> Result<String, IoError> {
    let location = inside(resolved, shown)?;
    let bytes = workspace
        .read(location, shown)?
        .ok_or_else(|| IoError::NotFound(shown.into()))?;
    if let Some(kind) = talos_core::retrieval::DocumentKind::of(shown) {
        // Document text (issue 16): extracted in a limited child; refusals get the note.
        return Ok(match crate::documents::extract(kind, &bytes) {
            Ok(text) => view::extracted(shown, &text, max_lines, offset),
            Err(reason) => view::document_note(shown, &reason.to_string()),
        });
    }
    Ok(view::file(shown, &bytes, max_lines, offset))
}

pub fn list_dir(
    workspace: &Workspace,
    resolved: &Resolved,
    shown: &str,
    max_depth: usize,
    max_entries: usize,
) -> Result<String, IoError> {
    let location = inside(resolved, shown)?;
    if !matches!(workspace.kind(location), Ok(Some(EntryKind::Directory))) {
        return Err(IoError::NotFound(format!("Directory not found: {shown}")));
    }
    let entries = workspace.list_names(location, max_depth, max_entries + 1);
    Ok(view::listing(entries, max_entries))
}

fn inside<'r>(resolved: &'r Resolved, shown: &str) -> Result<&'r str, IoError> {
    resolved
        .location
        .as_deref()
        .ok_or_else(|| IoError::NotAllowed {
            path: shown.into(),
            problem: "outside the workspace".into(),
        })
}

pub struct GrepRequest<'a> {
    pub pattern: &'a str,
    pub include: Option<&'a str>,
    pub max_results: usize,
    pub regex: bool,
}

pub fn grep(workspace: &Workspace, request: &GrepRequest<'_>) -> Result<String, String> {
    let pattern = if request.regex {
        request.pattern.to_string()
    } else {
        regex::escape(request.pattern)
    };
    let matcher = regex::RegexBuilder::new(&pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| match request.regex {
            true => format!("Invalid regex: {e}"),
            false => format!("Invalid pattern: {e}"),
        })?;
    let include = match request.include {
        Some(glob) => match view::grep_include_problem(glob) {
            Some(problem) => return Err(problem.into()),
            None => Some(glob_to_regex(glob)?),
        },
        None => None,
    };
    let mut files = workspace.files(".", SKIP_DIRS, usize::MAX, &mut |_| true);
    files.sort();
    let mut hits = Vec::new();
    let mut protected_skipped = 0;
    'files: for rel in files {
        if protected_kind(&rel).is_some() {
            protected_skipped += 1;
            continue;
        }
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if include
            .as_ref()
            .is_some_and(|g| !g.is_match(name) && !g.is_match(&rel))
        {
            continue;
        }
        let bytes = match workspace.read_unshared(&rel, &rel) {
            Ok(Some(bytes)) => bytes,
            Err(IoError::HardLinked { .. }) => {
                protected_skipped += 1;
                continue;
            }
            Ok(None) | Err(_) => continue,
        };
        if view::grep_skips(&bytes) {
            continue;
        }
        for (n, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            if matcher.is_match(line) {
                hits.push(view::grep_hit(&rel, n + 1, line));
                if hits.len() >= request.max_results {
                    break 'files;
                }
            }
        }
    }
    Ok(view::grep_report(
        request.pattern,
        &hits,
        request.max_results,
        protected_skipped,
    ))
}

fn glob_to_regex(glob: &str) -> Result<regex::Regex, String> {
    let mut re = String::from("(?i)^");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                re.push_str(".*");
            }
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '{' => re.push('('),
            '}' => re.push(')'),
            ',' => re.push('|'),
            other => re.push_str(&regex::escape(&other.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).map_err(|e| format!("Invalid include glob: {e}"))
}

/// Runs a read tool's call; the error is what the model is told after `[error]`.
pub fn run(workspace: &Workspace, args: &ToolArgs) -> Result<String, String> {
    let resolve = |path: &str| workspace.resolve(path);
    match args {
        ToolArgs::ReadFile {
            path,
            max_lines,
            offset,
        } => read_file(workspace, &resolve(path), path, *max_lines, *offset)
            .map_err(|e| e.to_string()),
        ToolArgs::ListDir {
            path,
            max_depth,
            max_entries,
        } => list_dir(workspace, &resolve(path), path, *max_depth, *max_entries)
            .map_err(|e| e.to_string()),
        ToolArgs::Grep {
            pattern,
            include,
            max_results,
            regex,
        } => grep(
            workspace,
            &GrepRequest {
                pattern,
                include: include.as_deref(),
                max_results: *max_results,
                regex: *regex,
            },
        ),
        ToolArgs::Search { .. } => Err("talos.search runs through the workspace index".into()),
        ToolArgs::WriteFile { .. }
        | ToolArgs::EditFile { .. }
        | ToolArgs::MkDir { .. }
        | ToolArgs::MovePath { .. }
        | ToolArgs::CopyPath { .. }
        | ToolArgs::RenamePath { .. }
        | ToolArgs::DeletePath { .. }
        | ToolArgs::ApplyWorkspaceBatch { .. }
        | ToolArgs::RunCommand { .. } => Err("the call has no usable path".into()),
    }
}

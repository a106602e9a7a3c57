//! The read-only tools: read_file, list_dir and grep, inside the workspace boundary. Listing
//! shows names; grep never returns lines from protected files.

use talos_core::protected::protected_kind;
use talos_core::tools::ToolArgs;

use crate::workspace::{EntryKind, Resolved, Workspace, WorkspaceError as IoError};

const SKIP_DIRS: &[&str] = &[
    ".git",
    ".svn",
    ".hg",
    "node_modules",
    "__pycache__",
    ".gradle",
    "build",
    "target",
    ".idea",
    ".talos",
];
const MAX_READ_OUTPUT: usize = 16_000;

pub fn read_file(
    workspace: &Workspace,
    resolved: &Resolved,
    shown: &str,
    max_lines: usize,
    offset: usize,
) -> Result<String, IoError> {
    let location = resolved
        .location
        .as_deref()
        .ok_or_else(|| IoError::NotAllowed {
            path: shown.into(),
            problem: "outside the workspace".into(),
        })?;
    let bytes = workspace
        .read(location, shown)?
        .ok_or_else(|| IoError::NotFound(shown.into()))?;
    if talos_core::targets::is_unreadable_document(shown) {
        return Ok(format!(
            "{shown} is a binary document (PDF, Word, Excel, ...); the text tools cannot extract its text, so its contents are not shown."
        ));
    }
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return Ok(format!(
            "{shown} looks like a binary file; its contents are not shown."
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return Ok(format!("{shown} is empty."));
    }
    if offset > lines.len() {
        return Ok(format!(
            "(file has {} lines; offset {offset} is past end)",
            lines.len()
        ));
    }
    let mut out = String::new();
    let end = (offset - 1 + max_lines).min(lines.len());
    for (i, line) in lines[offset - 1..end].iter().enumerate() {
        out.push_str(&format!("{} | {line}\n", offset + i));
        if out.len() > MAX_READ_OUTPUT {
            out.push_str("... (output capped; use offset and max_lines to read further)\n");
            return Ok(out);
        }
    }
    if end < lines.len() {
        out.push_str(&format!("... ({} more lines)\n", lines.len() - end));
    }
    Ok(out)
}

pub fn list_dir(
    workspace: &Workspace,
    resolved: &Resolved,
    shown: &str,
    max_depth: usize,
    max_entries: usize,
) -> Result<String, IoError> {
    let location = resolved
        .location
        .as_deref()
        .ok_or_else(|| IoError::NotAllowed {
            path: shown.into(),
            problem: "outside the workspace".into(),
        })?;
    if !matches!(workspace.kind(location), Ok(Some(EntryKind::Directory))) {
        return Err(IoError::NotFound(format!("Directory not found: {shown}")));
    }
    let mut entries = workspace.list_names(location, max_depth, max_entries + 1);
    entries.sort();
    if entries.is_empty() {
        return Ok("(empty directory)".into());
    }
    let truncated = entries.len() > max_entries;
    entries.truncate(max_entries);
    let mut out = entries.join("\n");
    if truncated {
        out.push_str(&format!("\n... (truncated at {max_entries} entries)"));
    }
    Ok(out)
}

pub struct GrepRequest<'a> {
    pub pattern: &'a str,
    pub include: Option<&'a str>,
    pub max_results: usize,
    pub regex: bool,
}

pub fn grep(workspace: &Workspace, request: &GrepRequest<'_>) -> Result<String, String> {
    let matcher = if request.regex {
        regex::RegexBuilder::new(request.pattern)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("Invalid regex: {e}"))?
    } else {
        regex::RegexBuilder::new(&regex::escape(request.pattern))
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("Invalid pattern: {e}"))?
    };
    let include = match request.include {
        Some(glob) if glob.contains(',') && !glob.contains('{') => return Err("Invalid include glob: comma-separated include values are not supported. Pass one glob such as *.js, or one brace glob such as *.{html,css,js}.".into()),
        Some(glob) => Some(glob_to_regex(glob)?),
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
        let Ok(Some(bytes)) = workspace.read(&rel, &rel) else {
            continue;
        };
        if bytes.iter().take(512).filter(|b| **b == 0).count() > 4 {
            continue;
        }
        for (n, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            if matcher.is_match(line) {
                let shown: String = line.chars().take(200).collect();
                hits.push(format!("{rel}:{} | {shown}", n + 1));
                if hits.len() >= request.max_results {
                    break 'files;
                }
            }
        }
    }
    let mut out = if hits.is_empty() {
        format!(
            "No matches found in searchable non-protected text files for: {}",
            request.pattern
        )
    } else {
        format!("Found {} match(es):\n{}", hits.len(), hits.join("\n"))
    };
    if hits.len() >= request.max_results {
        out.push_str(&format!("\n(results capped at {})", request.max_results));
    }
    if protected_skipped > 0 {
        out.push_str("\nMatches were found or may exist in protected content, but matching lines were not returned.");
    }
    Ok(out)
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

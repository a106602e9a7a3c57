//! Typed workspace operations (mkdir, move, copy, rename, delete) and the batch that carries
//! several of them: the op list parsed from its JSON text, the paths each op touches, whether
//! an op destroys data, and the one-line-per-op preview shown at approval.
//!
//! A batch arrives as JSON text: the daemon flattens native arguments, so an `operations`
//! array reaches the core as its serialised text, and the legacy `operations_json` parameter
//! is that same text written by the model. Both go through [`parse_operations`].

use std::borrow::Cow;

mod parse;

pub(crate) use parse::flag_word;
pub use parse::{OpProblem, OpsError, parse_operations};

/// At most this many operations in one batch; more is refused, not truncated.
pub const MAX_OPERATIONS: usize = 100;

/// One workspace operation, as a single-op tool or as one entry of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceOp {
    Mkdir {
        path: String,
    },
    Move {
        from: String,
        to: String,
        overwrite: bool,
    },
    Copy {
        from: String,
        to: String,
        recursive: bool,
        overwrite: bool,
    },
    Rename {
        path: String,
        new_name: String,
        overwrite: bool,
    },
    Delete {
        path: String,
        recursive: bool,
    },
}

impl WorkspaceOp {
    /// The op's short name, as written in previews: `mkdir`, `move`, `copy`, `rename`, `delete`.
    pub fn name(&self) -> &'static str {
        match self {
            WorkspaceOp::Mkdir { .. } => "mkdir",
            WorkspaceOp::Move { .. } => "move",
            WorkspaceOp::Copy { .. } => "copy",
            WorkspaceOp::Rename { .. } => "rename",
            WorkspaceOp::Delete { .. } => "delete",
        }
    }

    /// Every path the op touches, primary first: a move or copy gives source then destination,
    /// a rename gives the path then its renamed sibling (computed by [`renamed_path`]).
    pub fn paths(&self) -> Vec<Cow<'_, str>> {
        match self {
            WorkspaceOp::Mkdir { path } | WorkspaceOp::Delete { path, .. } => {
                vec![Cow::Borrowed(path.as_str())]
            }
            WorkspaceOp::Move { from, to, .. } | WorkspaceOp::Copy { from, to, .. } => {
                vec![Cow::Borrowed(from.as_str()), Cow::Borrowed(to.as_str())]
            }
            WorkspaceOp::Rename { path, new_name, .. } => vec![
                Cow::Borrowed(path.as_str()),
                Cow::Owned(renamed_path(path, new_name)),
            ],
        }
    }

    /// The path the op acts on first (the source of a move, copy or rename).
    pub fn primary_path(&self) -> &str {
        match self {
            WorkspaceOp::Mkdir { path }
            | WorkspaceOp::Delete { path, .. }
            | WorkspaceOp::Rename { path, .. } => path,
            WorkspaceOp::Move { from, .. } | WorkspaceOp::Copy { from, .. } => from,
        }
    }

    /// Whether the op removes data by design (a delete). An overwrite is a write, like
    /// `write_file` over an existing file.
    pub fn is_destructive(&self) -> bool {
        match self {
            WorkspaceOp::Delete { .. } => true,
            WorkspaceOp::Mkdir { .. }
            | WorkspaceOp::Move { .. }
            | WorkspaceOp::Copy { .. }
            | WorkspaceOp::Rename { .. } => false,
        }
    }

    /// One line for the approval prompt: `move a.txt -> b/a.txt (overwrite)`. Control
    /// characters in paths are escaped so a path cannot forge a second line.
    pub fn preview_line(&self) -> String {
        let (body, flags) = match self {
            WorkspaceOp::Mkdir { path } => (format!("mkdir {}", shown(path)), vec![]),
            WorkspaceOp::Move {
                from,
                to,
                overwrite,
            } => (
                format!("move {} -> {}", shown(from), shown(to)),
                flag_words(false, *overwrite),
            ),
            WorkspaceOp::Copy {
                from,
                to,
                recursive,
                overwrite,
            } => (
                format!("copy {} -> {}", shown(from), shown(to)),
                flag_words(*recursive, *overwrite),
            ),
            WorkspaceOp::Rename {
                path,
                new_name,
                overwrite,
            } => (
                format!(
                    "rename {} -> {}",
                    shown(path),
                    shown(&renamed_path(path, new_name))
                ),
                flag_words(false, *overwrite),
            ),
            WorkspaceOp::Delete { path, recursive } => (
                format!("delete {}", shown(path)),
                flag_words(*recursive, false),
            ),
        };
        if flags.is_empty() {
            body
        } else {
            format!("{body} ({})", flags.join(", "))
        }
    }
}

/// The approval preview of a batch: one line per op, in order.
pub fn preview(ops: &[WorkspaceOp]) -> String {
    ops.iter()
        .map(WorkspaceOp::preview_line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether any op of the batch is destructive (then the whole batch is).
pub fn is_destructive(ops: &[WorkspaceOp]) -> bool {
    ops.iter().any(WorkspaceOp::is_destructive)
}

/// Whether `name` can be a new file or directory name: one non-blank segment, not `.` or
/// `..`, without `/` or `\`.
pub fn is_single_segment(name: &str) -> bool {
    let name = name.trim();
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

/// The sibling that renaming `path` to `new_name` produces, computed on the text alone:
/// `src/a.txt` + `b.txt` gives `src/b.txt`; a trailing separator is ignored. When the last
/// segment is `.` or `..` the sibling is written as `<path>/../<new_name>` so that the
/// boundary, resolving it, sees where it really lands.
pub fn renamed_path(path: &str, new_name: &str) -> String {
    let trimmed = path.trim_end_matches(['/', '\\']);
    if trimmed.is_empty() {
        return format!("{path}../{new_name}");
    }
    let (parent, last) = match trimmed.rfind(['/', '\\']) {
        Some(at) => trimmed.split_at(at + 1),
        None => ("", trimmed),
    };
    if last == "." || last == ".." {
        return format!("{trimmed}/../{new_name}");
    }
    format!("{parent}{new_name}")
}

fn flag_words(recursive: bool, overwrite: bool) -> Vec<&'static str> {
    let mut words = Vec::new();
    if recursive {
        words.push("recursive");
    }
    if overwrite {
        words.push("overwrite");
    }
    words
}

fn shown(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves the renamed sibling is computed on the text, `.`/`..` included.
    #[test]
    fn renamed_path_rows() {
        let rows = [
            ("a.txt", "b.txt", "b.txt"),
            ("src/a.txt", "b.txt", "src/b.txt"),
            ("src/lib/", "core", "src/core"),
            ("src\\a.txt", "b.txt", "src\\b.txt"),
            (".", "x", "./../x"),
            ("a/..", "x", "a/../../x"),
            ("/", "x", "/../x"),
        ];
        for (path, new_name, expected) in rows {
            assert_eq!(
                renamed_path(path, new_name),
                expected,
                "{path} + {new_name}"
            );
        }
    }

    /// Proves which new names are one path segment.
    #[test]
    fn single_segment_rows() {
        let rows = [
            ("b.txt", true),
            (" b.txt ", true),
            (".hidden", true),
            ("", false),
            ("  ", false),
            (".", false),
            ("..", false),
            ("a/b", false),
            ("a\\b", false),
            ("/b", false),
        ];
        for (name, expected) in rows {
            assert_eq!(is_single_segment(name), expected, "{name:?}");
        }
    }

    /// Proves a path cannot forge a second preview line.
    #[test]
    fn preview_escapes_control_characters() {
        let op = WorkspaceOp::Mkdir {
            path: "a\nmkdir b".into(),
        };
        assert_eq!(preview(&[op]), "mkdir a\\nmkdir b");
    }
}

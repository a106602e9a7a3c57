//! The tool catalogue: canonical names, risk and operation metadata, parameters and their
//! aliases, name resolution, and normalisation of a call's arguments into a typed
//! [`ToolArgs`] that can list every path the call touches.
//!
//! The descriptions and parameter table live in `tools/catalogue.rs`, name resolution in
//! `tools/names.rs`, argument normalisation in `tools/normalise.rs`; this file holds the
//! types and their small metadata.

use std::borrow::Cow;

use crate::planning::command::CommandRequest;
use crate::planning::ops::{self, WorkspaceOp};

mod catalogue;
mod names;
mod normalise;

pub use names::{NameResolution, resolve_name};
pub use normalise::{ArgsError, ArgsProblem, normalise};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolId {
    ReadFile,
    ListDir,
    Grep,
    /// Ranked chunks from the workspace index (issue 16).
    Search,
    WriteFile,
    EditFile,
    MkDir,
    MovePath,
    CopyPath,
    RenamePath,
    DeletePath,
    ApplyWorkspaceBatch,
    RunCommand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    ReadOnly,
    Write,
    Destructive,
}

/// One parameter of a tool, as described to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub required: bool,
    pub description: &'static str,
    pub aliases: &'static [&'static str],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    String,
    Integer,
    Boolean,
    /// A JSON array (the batch's `operations`). It reaches [`normalise`] as its JSON text.
    Array,
}

/// A call's arguments after alias resolution and type checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolArgs {
    ReadFile {
        path: String,
        max_lines: usize,
        offset: usize,
    },
    ListDir {
        path: String,
        max_depth: usize,
        max_entries: usize,
    },
    Grep {
        pattern: String,
        include: Option<String>,
        max_results: usize,
        regex: bool,
    },
    Search {
        query: String,
        limit: usize,
    },
    WriteFile {
        path: String,
        content: String,
    },
    EditFile {
        path: String,
        old_string: String,
        new_string: String,
    },
    MkDir {
        path: String,
    },
    MovePath {
        from: String,
        to: String,
        overwrite: bool,
    },
    CopyPath {
        from: String,
        to: String,
        recursive: bool,
        overwrite: bool,
    },
    RenamePath {
        path: String,
        new_name: String,
        overwrite: bool,
    },
    DeletePath {
        path: String,
        recursive: bool,
    },
    ApplyWorkspaceBatch {
        operations: Vec<WorkspaceOp>,
    },
    /// A command profile run, not yet planned: [`crate::planning::command::plan`] checks it against
    /// the registry and builds the argv.
    RunCommand {
        request: CommandRequest,
    },
}

impl Risk {
    pub fn requires_approval(self) -> bool {
        match self {
            Risk::ReadOnly => false,
            Risk::Write | Risk::Destructive => true,
        }
    }
}

impl ToolId {
    /// Every tool, in registration order (the order of `/tools` and of the
    /// native `tools` array before per-turn filtering).
    pub const ALL: [ToolId; 13] = [
        ToolId::ReadFile,
        ToolId::WriteFile,
        ToolId::EditFile,
        ToolId::ApplyWorkspaceBatch,
        ToolId::MkDir,
        ToolId::MovePath,
        ToolId::CopyPath,
        ToolId::RenamePath,
        ToolId::DeletePath,
        ToolId::RunCommand,
        ToolId::Grep,
        ToolId::Search,
        ToolId::ListDir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ToolId::ReadFile => "talos.read_file",
            ToolId::ListDir => "talos.list_dir",
            ToolId::Grep => "talos.grep",
            ToolId::Search => "talos.search",
            ToolId::WriteFile => "talos.write_file",
            ToolId::EditFile => "talos.edit_file",
            ToolId::MkDir => "talos.mkdir",
            ToolId::MovePath => "talos.move_path",
            ToolId::CopyPath => "talos.copy_path",
            ToolId::RenamePath => "talos.rename_path",
            ToolId::DeletePath => "talos.delete_path",
            ToolId::ApplyWorkspaceBatch => "talos.apply_workspace_batch",
            ToolId::RunCommand => "talos.run_command",
        }
    }

    /// The static risk of the tool. A batch is `Write` here; a batch holding a delete is
    /// escalated per call by [`ToolArgs::effective_risk`]. A command is `Write`: it always
    /// needs approval, though it changes no file itself.
    pub fn risk(self) -> Risk {
        match self {
            ToolId::ReadFile | ToolId::ListDir | ToolId::Grep | ToolId::Search => Risk::ReadOnly,
            ToolId::RunCommand
            | ToolId::WriteFile
            | ToolId::EditFile
            | ToolId::MkDir
            | ToolId::MovePath
            | ToolId::CopyPath
            | ToolId::RenamePath
            | ToolId::ApplyWorkspaceBatch => Risk::Write,
            ToolId::DeletePath => Risk::Destructive,
        }
    }

    /// Whether the tool changes the workspace (the mutating canonical set). A
    /// command is in neither the read-only nor the mutating set: what it writes is its own
    /// business, which the approval says.
    pub fn mutates(self) -> bool {
        match self {
            ToolId::ReadFile
            | ToolId::ListDir
            | ToolId::Grep
            | ToolId::Search
            | ToolId::RunCommand => false,
            ToolId::WriteFile
            | ToolId::EditFile
            | ToolId::MkDir
            | ToolId::MovePath
            | ToolId::CopyPath
            | ToolId::RenamePath
            | ToolId::DeletePath
            | ToolId::ApplyWorkspaceBatch => true,
        }
    }

    /// Whether a checkpoint of the touched paths is taken before the call runs. Commands are
    /// never checkpointed (their approval says so).
    pub fn requires_checkpoint(self) -> bool {
        match self {
            ToolId::ReadFile
            | ToolId::ListDir
            | ToolId::Grep
            | ToolId::Search
            | ToolId::RunCommand => false,
            ToolId::WriteFile
            | ToolId::EditFile
            | ToolId::MkDir
            | ToolId::MovePath
            | ToolId::CopyPath
            | ToolId::RenamePath
            | ToolId::DeletePath
            | ToolId::ApplyWorkspaceBatch => true,
        }
    }

    /// Whether the tool organises the workspace tree (mkdir, move, copy, rename, delete,
    /// batch) rather than reading or editing file content.
    pub fn is_workspace_operation(self) -> bool {
        match self {
            ToolId::ReadFile
            | ToolId::ListDir
            | ToolId::Grep
            | ToolId::Search
            | ToolId::WriteFile
            | ToolId::EditFile
            | ToolId::RunCommand => false,
            ToolId::MkDir
            | ToolId::MovePath
            | ToolId::CopyPath
            | ToolId::RenamePath
            | ToolId::DeletePath
            | ToolId::ApplyWorkspaceBatch => true,
        }
    }

    pub fn from_canonical(name: &str) -> Option<ToolId> {
        ToolId::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl ToolArgs {
    /// The tool these arguments belong to.
    pub fn tool(&self) -> ToolId {
        match self {
            ToolArgs::ReadFile { .. } => ToolId::ReadFile,
            ToolArgs::ListDir { .. } => ToolId::ListDir,
            ToolArgs::Grep { .. } => ToolId::Grep,
            ToolArgs::Search { .. } => ToolId::Search,
            ToolArgs::WriteFile { .. } => ToolId::WriteFile,
            ToolArgs::EditFile { .. } => ToolId::EditFile,
            ToolArgs::MkDir { .. } => ToolId::MkDir,
            ToolArgs::MovePath { .. } => ToolId::MovePath,
            ToolArgs::CopyPath { .. } => ToolId::CopyPath,
            ToolArgs::RenamePath { .. } => ToolId::RenamePath,
            ToolArgs::DeletePath { .. } => ToolId::DeletePath,
            ToolArgs::ApplyWorkspaceBatch { .. } => ToolId::ApplyWorkspaceBatch,
            ToolArgs::RunCommand { .. } => ToolId::RunCommand,
        }
    }

    /// The primary path of the call: the first of [`ToolArgs::paths`], if any.
    pub fn path(&self) -> Option<&str> {
        match self {
            ToolArgs::ReadFile { path, .. }
            | ToolArgs::ListDir { path, .. }
            | ToolArgs::WriteFile { path, .. }
            | ToolArgs::EditFile { path, .. }
            | ToolArgs::MkDir { path }
            | ToolArgs::RenamePath { path, .. }
            | ToolArgs::DeletePath { path, .. } => Some(path),
            ToolArgs::MovePath { from, .. } | ToolArgs::CopyPath { from, .. } => Some(from),
            ToolArgs::ApplyWorkspaceBatch { operations } => {
                operations.first().map(WorkspaceOp::primary_path)
            }
            ToolArgs::Grep { .. } | ToolArgs::Search { .. } | ToolArgs::RunCommand { .. } => None,
        }
    }

    /// Every workspace path the call touches, primary first, in call order and with
    /// repeats kept: a move or copy gives source then destination, a rename gives the path
    /// then its renamed sibling (computed lexically, see [`ops::renamed_path`]), a batch
    /// gives each op's paths in op order. Grep names no path, and neither does a command: its
    /// working directory is checked lexically by the planner and on disk by the daemon.
    pub fn paths(&self) -> Vec<Cow<'_, str>> {
        match self {
            ToolArgs::ReadFile { path, .. }
            | ToolArgs::ListDir { path, .. }
            | ToolArgs::WriteFile { path, .. }
            | ToolArgs::EditFile { path, .. }
            | ToolArgs::MkDir { path }
            | ToolArgs::DeletePath { path, .. } => vec![Cow::Borrowed(path.as_str())],
            ToolArgs::MovePath { from, to, .. } | ToolArgs::CopyPath { from, to, .. } => {
                vec![Cow::Borrowed(from.as_str()), Cow::Borrowed(to.as_str())]
            }
            ToolArgs::RenamePath { path, new_name, .. } => vec![
                Cow::Borrowed(path.as_str()),
                Cow::Owned(ops::renamed_path(path, new_name)),
            ],
            ToolArgs::ApplyWorkspaceBatch { operations } => {
                operations.iter().flat_map(WorkspaceOp::paths).collect()
            }
            ToolArgs::Grep { .. } | ToolArgs::Search { .. } | ToolArgs::RunCommand { .. } => {
                Vec::new()
            }
        }
    }

    /// The risk of this call: the tool's static risk, except that a batch holding a delete
    /// is destructive.
    pub fn effective_risk(&self) -> Risk {
        match self {
            ToolArgs::ApplyWorkspaceBatch { operations } if ops::is_destructive(operations) => {
                Risk::Destructive
            }
            ToolArgs::ReadFile { .. }
            | ToolArgs::ListDir { .. }
            | ToolArgs::Grep { .. }
            | ToolArgs::Search { .. }
            | ToolArgs::WriteFile { .. }
            | ToolArgs::EditFile { .. }
            | ToolArgs::MkDir { .. }
            | ToolArgs::MovePath { .. }
            | ToolArgs::CopyPath { .. }
            | ToolArgs::RenamePath { .. }
            | ToolArgs::DeletePath { .. }
            | ToolArgs::ApplyWorkspaceBatch { .. }
            | ToolArgs::RunCommand { .. } => self.tool().risk(),
        }
    }
}

/// A batch op as the arguments of its single-op tool, so each op of a batch runs through
/// the same code as the tool called alone.
impl From<WorkspaceOp> for ToolArgs {
    fn from(op: WorkspaceOp) -> ToolArgs {
        match op {
            WorkspaceOp::Mkdir { path } => ToolArgs::MkDir { path },
            WorkspaceOp::Move {
                from,
                to,
                overwrite,
            } => ToolArgs::MovePath {
                from,
                to,
                overwrite,
            },
            WorkspaceOp::Copy {
                from,
                to,
                recursive,
                overwrite,
            } => ToolArgs::CopyPath {
                from,
                to,
                recursive,
                overwrite,
            },
            WorkspaceOp::Rename {
                path,
                new_name,
                overwrite,
            } => ToolArgs::RenamePath {
                path,
                new_name,
                overwrite,
            },
            WorkspaceOp::Delete { path, recursive } => ToolArgs::DeletePath { path, recursive },
        }
    }
}

/// Which tool performs an op is the catalogue's knowledge, so it lives here, not in `ops`.
impl WorkspaceOp {
    /// The single-op tool that performs this op.
    pub fn tool(&self) -> ToolId {
        match self {
            WorkspaceOp::Mkdir { .. } => ToolId::MkDir,
            WorkspaceOp::Move { .. } => ToolId::MovePath,
            WorkspaceOp::Copy { .. } => ToolId::CopyPath,
            WorkspaceOp::Rename { .. } => ToolId::RenamePath,
            WorkspaceOp::Delete { .. } => ToolId::DeletePath,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves a batch op becomes its single-op tool's args with the same paths.
    #[test]
    fn every_op_converts_to_the_args_of_its_own_tool() {
        let ops = [
            WorkspaceOp::Mkdir { path: "d".into() },
            WorkspaceOp::Move {
                from: "a".into(),
                to: "b".into(),
                overwrite: false,
            },
            WorkspaceOp::Copy {
                from: "a".into(),
                to: "b".into(),
                recursive: true,
                overwrite: false,
            },
            WorkspaceOp::Rename {
                path: "a".into(),
                new_name: "b".into(),
                overwrite: false,
            },
            WorkspaceOp::Delete {
                path: "a".into(),
                recursive: false,
            },
        ];
        for op in ops {
            let tool = op.tool();
            let paths: Vec<String> = op.paths().into_iter().map(Cow::into_owned).collect();
            let args = ToolArgs::from(op);
            assert_eq!(args.tool(), tool);
            assert_eq!(args.paths(), paths);
        }
    }

    /// Proves `path()` is the first of `paths()`, and an empty batch has none.
    #[test]
    fn the_primary_path_is_the_first_path() {
        let args = ToolArgs::ApplyWorkspaceBatch {
            operations: vec![
                WorkspaceOp::Rename {
                    path: "src/a.rs".into(),
                    new_name: "b.rs".into(),
                    overwrite: false,
                },
                WorkspaceOp::Mkdir {
                    path: "docs".into(),
                },
            ],
        };
        assert_eq!(args.path(), Some("src/a.rs"));
        assert_eq!(args.paths(), ["src/a.rs", "src/b.rs", "docs"]);
        assert_eq!(
            ToolArgs::ApplyWorkspaceBatch { operations: vec![] }.path(),
            None
        );
    }
}

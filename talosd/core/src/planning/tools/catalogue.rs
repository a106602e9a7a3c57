//! What each tool says about itself to the model: its one-line description and its
//! parameters, each with its kind, whether it is required, and the aliases accepted for it.

use super::{ParamKind, ParamSpec, ToolId};

const FILE_PATH_ALIASES: &[&str] = &["file_path", "filepath", "file", "filename"];
const FROM_ALIASES: &[&str] = &["source", "source_path", "src", "path"];
const TO_ALIASES: &[&str] = &["destination", "destination_path", "dest", "target"];

const fn param(
    name: &'static str,
    kind: ParamKind,
    required: bool,
    description: &'static str,
    aliases: &'static [&'static str],
) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        required,
        description,
        aliases,
    }
}

const fn text(
    name: &'static str,
    description: &'static str,
    aliases: &'static [&'static str],
) -> ParamSpec {
    param(name, ParamKind::String, true, description, aliases)
}

const fn integer(name: &'static str, description: &'static str) -> ParamSpec {
    param(name, ParamKind::Integer, false, description, &[])
}

const fn flag(name: &'static str, description: &'static str) -> ParamSpec {
    param(name, ParamKind::Boolean, false, description, &[])
}

const FROM: ParamSpec = text("from", "Workspace-relative source path.", FROM_ALIASES);
const TO: ParamSpec = text("to", "Workspace-relative destination path.", TO_ALIASES);
const OVERWRITE: ParamSpec = flag(
    "overwrite",
    "Set true to replace an existing destination (default false).",
);

impl ToolId {
    pub fn description(self) -> &'static str {
        match self {
            ToolId::ReadFile => "Read a text file in the workspace. Lines are shown as `N | text`.",
            ToolId::ListDir => {
                "List the entries of a workspace directory; directories end with `/`."
            }
            ToolId::Grep => "Search workspace text files for a pattern (case-insensitive).",
            ToolId::Search => {
                "Find the workspace chunks most relevant to a question or identifiers (ranked, from the workspace index); read the files before relying on them."
            }
            ToolId::WriteFile => {
                "Create or overwrite a workspace file with the full content given."
            }
            ToolId::EditFile => {
                "Replace exactly one occurrence of old_string with new_string in a workspace file."
            }
            ToolId::MkDir => "Create a workspace directory, including missing parent directories.",
            ToolId::MovePath => "Move a workspace file or directory to another workspace path.",
            ToolId::CopyPath => {
                "Copy a workspace file or directory to another workspace path. Directories require recursive=true."
            }
            ToolId::RenamePath => {
                "Rename a workspace file or directory within its current parent directory."
            }
            ToolId::DeletePath => {
                "Delete a workspace file or directory. Directories require recursive=true."
            }
            ToolId::ApplyWorkspaceBatch => {
                "Apply several workspace operations (mkdir, move, copy, rename, delete) in order, after one approval."
            }
            ToolId::RunCommand => {
                "Run an approved bounded command profile: Gradle and Cargo verification profiles, plus workspace-declared ws:<id> verification profiles when the workspace declaration is trusted. Raw shell commands are not supported; every run asks the user."
            }
        }
    }

    pub fn params(self) -> Vec<ParamSpec> {
        match self {
            ToolId::ReadFile => vec![
                text(
                    "path",
                    "Workspace-relative path of the file to read.",
                    FILE_PATH_ALIASES,
                ),
                integer("max_lines", "Lines to return (default 500)."),
                integer("offset", "1-based first line (default 1)."),
            ],
            ToolId::ListDir => vec![
                text(
                    "path",
                    "Workspace-relative directory; `.` is the root.",
                    &["dir", "directory", "dir_path", "folder"],
                ),
                integer("max_depth", "Depth 1..5 (default 1)."),
                integer("max_entries", "Entries 1..2000 (default 200)."),
            ],
            ToolId::Grep => vec![
                text(
                    "pattern",
                    "Text to find (a regex only when regex is true).",
                    &["query", "search", "text", "search_pattern", "search_text"],
                ),
                param(
                    "include",
                    ParamKind::String,
                    false,
                    "One glob such as *.py.",
                    &[],
                ),
                integer("max_results", "Default 50."),
                flag("regex", "Treat pattern as a simple regex."),
            ],
            ToolId::Search => vec![
                text(
                    "query",
                    "Words or identifiers to look for.",
                    &["q", "question", "text", "pattern"],
                ),
                integer("limit", "Chunks to return, 1..20 (default 8)."),
            ],
            ToolId::WriteFile => vec![
                text(
                    "path",
                    "Workspace-relative path of the file to write.",
                    FILE_PATH_ALIASES,
                ),
                text(
                    "content",
                    "The complete new file content.",
                    &["text", "body", "data", "file_content"],
                ),
            ],
            ToolId::EditFile => vec![
                text(
                    "path",
                    "Workspace-relative path of the file to edit.",
                    FILE_PATH_ALIASES,
                ),
                text(
                    "old_string",
                    "Exact text to replace; must occur exactly once.",
                    &["oldString", "old_text", "search", "find", "original"],
                ),
                text(
                    "new_string",
                    "Replacement text (may be empty).",
                    &["newString", "new_text", "replace", "replacement"],
                ),
            ],
            ToolId::MkDir => vec![text(
                "path",
                "Workspace-relative directory to create.",
                &["dir", "directory"],
            )],
            ToolId::MovePath => vec![FROM, TO, OVERWRITE],
            ToolId::CopyPath => vec![
                FROM,
                TO,
                flag(
                    "recursive",
                    "Set true to copy a directory with its contents (default false).",
                ),
                OVERWRITE,
            ],
            ToolId::RenamePath => vec![
                text(
                    "path",
                    "Workspace-relative file or directory to rename.",
                    &["from", "source", "source_path"],
                ),
                text(
                    "new_name",
                    "New file or directory name only; no path separators.",
                    &["newName", "name", "to_name"],
                ),
                flag(
                    "overwrite",
                    "Set true to replace an existing sibling (default false).",
                ),
            ],
            ToolId::DeletePath => vec![
                text(
                    "path",
                    "Workspace-relative file or directory to delete.",
                    &["target", "file", "filename"],
                ),
                flag(
                    "recursive",
                    "Set true to delete a directory with its contents (default false).",
                ),
            ],
            ToolId::ApplyWorkspaceBatch => vec![param(
                "operations",
                ParamKind::Array,
                true,
                "1 to 100 operations, applied in order. Each is an object with `op` (mkdir, move, copy, rename or delete) and its fields: mkdir {path}; move {from, to, overwrite}; copy {from, to, recursive, overwrite}; rename {path, new_name, overwrite}; delete {path, recursive}.",
                &["operations_json"],
            )],
            ToolId::RunCommand => vec![
                text(
                    "profile",
                    "Profile id: gradle_test, gradle_check, gradle_build, gradle_install_dist, gradle_e2e_test, cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check, or ws:<id> for a trusted workspace profile.",
                    &["profile_id", "id"],
                ),
                param(
                    "args",
                    ParamKind::Array,
                    false,
                    "Caller arguments, a JSON array of strings. Gradle: --tests <selector>, --stacktrace, --info. cargo_test: one test-name filter, --package <name>, --verbose, --offline, then optionally -- with --exact and --nocapture. cargo_check and cargo_build: --package <name>, --verbose, --offline. cargo_clippy and cargo_fmt_check: --package <name>. ws: profiles: none.",
                    &["args_json", "arguments_json"],
                ),
                param(
                    "cwd",
                    ParamKind::String,
                    false,
                    "Workspace-relative working directory (default `.`).",
                    &["working_dir", "working_directory"],
                ),
                param(
                    "timeout_ms",
                    ParamKind::Integer,
                    false,
                    "Timeout in milliseconds, 1000..600000 (default: the profile's).",
                    &["timeoutMs"],
                ),
            ],
        }
    }
}

//! Resolution of a raw tool name as the model wrote it: the `talos` separator rewrite,
//! canonical names, the alias table, backend-namespaced forms (`tool_use:`,
//! `file_utils.`), `talos.<alias>`, and refusal of known tools under a foreign namespace.

use super::ToolId;

/// How a raw tool name resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameResolution {
    Canonical(ToolId),
    Alias(ToolId),
    /// A known tool under a foreign namespace (`openai.read_file`): refused.
    RejectedNamespace,
    Unknown,
}

impl NameResolution {
    pub fn tool(self) -> Option<ToolId> {
        match self {
            NameResolution::Canonical(t) | NameResolution::Alias(t) => Some(t),
            NameResolution::RejectedNamespace | NameResolution::Unknown => None,
        }
    }
}

/// Resolves a raw tool name as the module doc lists; `strict` turns alias rescue off (only
/// canonical names, after the `talos:`/`talos/`/`talos-`/`talos_` rewrite, are accepted).
pub fn resolve_name(raw: &str, strict: bool) -> NameResolution {
    let mut name = raw.trim().to_lowercase();
    for sep in [":", "/", "-", "_"] {
        if let Some(rest) = name.strip_prefix(&format!("talos{sep}")) {
            name = format!("talos.{rest}");
            break;
        }
    }
    if let Some(tool) = ToolId::from_canonical(&name) {
        return NameResolution::Canonical(tool);
    }
    if strict {
        return NameResolution::Unknown;
    }
    if let Some(tool) = alias(&name) {
        return NameResolution::Alias(tool);
    }
    if let Some(tool) = name.strip_prefix("talos.").and_then(alias) {
        return NameResolution::Alias(tool);
    }
    if let Some(suffix) = suffix_after_namespace(&name)
        && bare_alias(suffix).is_some()
    {
        return NameResolution::RejectedNamespace;
    }
    NameResolution::Unknown
}

/// The backend namespaces whose canonical local names are accepted (`tool_use:read_file`).
const BACKEND_NAMESPACES: [&str; 4] = ["tool_use:", "tool_use.", "file_utils:", "file_utils."];

/// A bare alias or a backend-namespaced name.
fn alias(name: &str) -> Option<ToolId> {
    bare_alias(name).or_else(|| {
        BACKEND_NAMESPACES
            .iter()
            .find_map(|prefix| name.strip_prefix(prefix))
            .and_then(backend_local_name)
    })
}

/// Under a backend namespace only canonical local names are known, plus `delete_file`.
fn backend_local_name(local: &str) -> Option<ToolId> {
    if local == "delete_file" {
        return Some(ToolId::DeletePath);
    }
    ToolId::ALL
        .into_iter()
        .find(|tool| tool.name().strip_prefix("talos.") == Some(local))
}

/// The alias table (every canonical local name is also its own alias).
fn bare_alias(local: &str) -> Option<ToolId> {
    Some(match local {
        "write_file" | "file_write" | "file_create" | "create_file" | "writefile"
        | "createfile" => ToolId::WriteFile,
        "read_file" | "file_read" | "readfile" => ToolId::ReadFile,
        "edit_file" | "file_edit" | "editfile" => ToolId::EditFile,
        "apply_workspace_batch" | "workspace_batch" | "batch_apply" | "apply_batch" => {
            ToolId::ApplyWorkspaceBatch
        }
        "mkdir" | "make_dir" | "make_directory" | "create_dir" | "create_directory" => {
            ToolId::MkDir
        }
        "move_path" | "move" | "mv" => ToolId::MovePath,
        "copy_path" | "copy" | "cp" => ToolId::CopyPath,
        "rename_path" | "rename" => ToolId::RenamePath,
        "delete_path" | "delete_file" | "deletefile" | "delete" | "remove_path" | "remove_file"
        | "removefile" | "remove" | "rm" => ToolId::DeletePath,
        "list_dir" | "list_directory" | "dir_list" | "ls" | "listdir" | "listdirectory" => {
            ToolId::ListDir
        }
        "grep" | "grepsearch" => ToolId::Grep,
        "search" | "search_workspace" | "codebase_search" | "search_index" => ToolId::Search,
        // Never `run_shell`, `bash`, `shell` or `exec`: there is no shell tool to alias.
        "run_command" | "command_run" | "runcommand" => ToolId::RunCommand,
        _ => return None,
    })
}

/// The text after the last `.` or `:`, when that separator is neither first nor last.
fn suffix_after_namespace(name: &str) -> Option<&str> {
    let at = name.rfind(['.', ':'])?;
    (at > 0 && at + 1 < name.len()).then(|| &name[at + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves the namespace suffix needs a separator that is neither first nor last.
    #[test]
    fn suffix_rows() {
        let rows = [
            ("openai.read_file", Some("read_file")),
            ("a:b.c", Some("c")),
            (".read_file", None),
            ("read_file.", None),
            ("read_file", None),
        ];
        for (name, expected) in rows {
            assert_eq!(suffix_after_namespace(name), expected, "{name}");
        }
    }
}

//! The tool catalogue: canonical names, risk, parameters and their aliases, name resolution,
//! and normalisation of a call's arguments into a typed [`ToolArgs`].

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolId {
    ReadFile,
    ListDir,
    Grep,
    WriteFile,
    EditFile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    ReadOnly,
    Write,
    Destructive,
}

impl Risk {
    pub fn requires_approval(self) -> bool {
        match self {
            Risk::ReadOnly => false,
            Risk::Write | Risk::Destructive => true,
        }
    }
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
}

const PATH_ALIASES: &[&str] = &["file_path", "filepath", "file", "filename"];

impl ToolId {
    pub const ALL: [ToolId; 5] = [
        ToolId::ReadFile,
        ToolId::WriteFile,
        ToolId::EditFile,
        ToolId::Grep,
        ToolId::ListDir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ToolId::ReadFile => "talos.read_file",
            ToolId::ListDir => "talos.list_dir",
            ToolId::Grep => "talos.grep",
            ToolId::WriteFile => "talos.write_file",
            ToolId::EditFile => "talos.edit_file",
        }
    }

    pub fn risk(self) -> Risk {
        match self {
            ToolId::ReadFile | ToolId::ListDir | ToolId::Grep => Risk::ReadOnly,
            ToolId::WriteFile | ToolId::EditFile => Risk::Write,
        }
    }

    pub fn mutates(self) -> bool {
        self.risk() != Risk::ReadOnly
    }

    pub fn description(self) -> &'static str {
        match self {
            ToolId::ReadFile => "Read a text file in the workspace. Lines are shown as `N | text`.",
            ToolId::ListDir => {
                "List the entries of a workspace directory; directories end with `/`."
            }
            ToolId::Grep => "Search workspace text files for a pattern (case-insensitive).",
            ToolId::WriteFile => {
                "Create or overwrite a workspace file with the full content given."
            }
            ToolId::EditFile => {
                "Replace exactly one occurrence of old_string with new_string in a workspace file."
            }
        }
    }

    pub fn params(self) -> Vec<ParamSpec> {
        let path = |description| ParamSpec {
            name: "path",
            kind: ParamKind::String,
            required: true,
            description,
            aliases: PATH_ALIASES,
        };
        match self {
            ToolId::ReadFile => vec![
                path("Workspace-relative path of the file to read."),
                ParamSpec {
                    name: "max_lines",
                    kind: ParamKind::Integer,
                    required: false,
                    description: "Lines to return (default 500).",
                    aliases: &[],
                },
                ParamSpec {
                    name: "offset",
                    kind: ParamKind::Integer,
                    required: false,
                    description: "1-based first line (default 1).",
                    aliases: &[],
                },
            ],
            ToolId::ListDir => vec![
                ParamSpec {
                    name: "path",
                    kind: ParamKind::String,
                    required: true,
                    description: "Workspace-relative directory; `.` is the root.",
                    aliases: &["dir", "directory", "dir_path", "folder"],
                },
                ParamSpec {
                    name: "max_depth",
                    kind: ParamKind::Integer,
                    required: false,
                    description: "Depth 1..5 (default 1).",
                    aliases: &[],
                },
                ParamSpec {
                    name: "max_entries",
                    kind: ParamKind::Integer,
                    required: false,
                    description: "Entries 1..2000 (default 200).",
                    aliases: &[],
                },
            ],
            ToolId::Grep => vec![
                ParamSpec {
                    name: "pattern",
                    kind: ParamKind::String,
                    required: true,
                    description: "Text to find (a regex only when regex is true).",
                    aliases: &["query", "search", "text", "search_pattern", "search_text"],
                },
                ParamSpec {
                    name: "include",
                    kind: ParamKind::String,
                    required: false,
                    description: "One glob such as *.py.",
                    aliases: &[],
                },
                ParamSpec {
                    name: "max_results",
                    kind: ParamKind::Integer,
                    required: false,
                    description: "Default 50.",
                    aliases: &[],
                },
                ParamSpec {
                    name: "regex",
                    kind: ParamKind::Boolean,
                    required: false,
                    description: "Treat pattern as a simple regex.",
                    aliases: &[],
                },
            ],
            ToolId::WriteFile => vec![
                path("Workspace-relative path of the file to write."),
                ParamSpec {
                    name: "content",
                    kind: ParamKind::String,
                    required: true,
                    description: "The complete new file content.",
                    aliases: &["text", "body", "data", "file_content"],
                },
            ],
            ToolId::EditFile => vec![
                path("Workspace-relative path of the file to edit."),
                ParamSpec {
                    name: "old_string",
                    kind: ParamKind::String,
                    required: true,
                    description: "Exact text to replace; must occur exactly once.",
                    aliases: &["oldString", "old_text", "search", "find", "original"],
                },
                ParamSpec {
                    name: "new_string",
                    kind: ParamKind::String,
                    required: true,
                    description: "Replacement text (may be empty).",
                    aliases: &["newString", "new_text", "replace", "replacement"],
                },
            ],
        }
    }

    pub fn from_canonical(name: &str) -> Option<ToolId> {
        ToolId::ALL.into_iter().find(|t| t.name() == name)
    }
}

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

fn alias_target(local: &str) -> Option<ToolId> {
    Some(match local {
        "write_file" | "file_write" | "file_create" | "create_file" | "writefile"
        | "createfile" => ToolId::WriteFile,
        "read_file" | "file_read" | "readfile" => ToolId::ReadFile,
        "edit_file" | "file_edit" | "editfile" => ToolId::EditFile,
        "list_dir" | "list_directory" | "dir_list" | "ls" | "listdir" | "listdirectory" => {
            ToolId::ListDir
        }
        "grep" | "search" | "grepsearch" => ToolId::Grep,
        _ => return None,
    })
}

/// Resolves a tool name the way the reference does; `strict` turns alias rescue off.
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
    if let Some(tool) = alias_target(&name) {
        return NameResolution::Alias(tool);
    }
    for prefix in [
        "talos.",
        "tool_use:",
        "tool_use.",
        "file_utils:",
        "file_utils.",
    ] {
        if let Some(tool) = name.strip_prefix(prefix).and_then(alias_target) {
            return NameResolution::Alias(tool);
        }
    }
    let suffix = name.rsplit(['.', ':']).next().unwrap_or(&name);
    if suffix != name && alias_target(suffix).is_some() {
        return NameResolution::RejectedNamespace;
    }
    NameResolution::Unknown
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
    WriteFile {
        path: String,
        content: String,
    },
    EditFile {
        path: String,
        old_string: String,
        new_string: String,
    },
}

impl ToolArgs {
    /// The workspace path the call targets, if any.
    pub fn path(&self) -> Option<&str> {
        match self {
            ToolArgs::ReadFile { path, .. }
            | ToolArgs::ListDir { path, .. }
            | ToolArgs::WriteFile { path, .. }
            | ToolArgs::EditFile { path, .. } => Some(path),
            ToolArgs::Grep { .. } => None,
        }
    }
}

/// Maps aliases to canonical parameter names and checks required ones and types. Unknown
/// parameters are refused: a call carrying keys the tool does not have is malformed.
pub fn normalise(tool: ToolId, raw: &BTreeMap<String, String>) -> Result<ToolArgs, String> {
    let specs = tool.params();
    let mut canonical: BTreeMap<&'static str, String> = BTreeMap::new();
    for (key, value) in raw {
        let spec = specs
            .iter()
            .find(|s| s.name == key.as_str() || s.aliases.contains(&key.as_str()));
        let Some(spec) = spec else {
            return Err(format!(
                "Invalid {} call: unknown parameter `{key}`.",
                tool.name()
            ));
        };
        if canonical.contains_key(spec.name) && spec.name != key.as_str() {
            continue; // the canonical spelling wins over an alias
        }
        canonical.insert(spec.name, value.clone());
    }
    for spec in &specs {
        if spec.required
            && !canonical.contains_key(spec.name)
            && !(tool == ToolId::ListDir && spec.name == "path")
        {
            return Err(format!(
                "Invalid {} call: missing required parameter `{}`.",
                tool.name(),
                spec.name
            ));
        }
    }
    let text = |name: &str| canonical.get(name).cloned().unwrap_or_default();
    let int = |name: &str, default: usize, min: usize, max: usize| -> Result<usize, String> {
        match canonical.get(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map(|n| n.clamp(min, max))
                .map_err(|_| {
                    format!(
                        "Invalid {} call: `{name}` must be a non-negative integer.",
                        tool.name()
                    )
                }),
        }
    };
    let args = match tool {
        ToolId::ReadFile => ToolArgs::ReadFile {
            path: text("path"),
            max_lines: int("max_lines", 500, 1, 5000)?,
            offset: int("offset", 1, 1, usize::MAX)?,
        },
        ToolId::ListDir => {
            let path = text("path");
            ToolArgs::ListDir {
                path: if path.trim().is_empty() {
                    ".".into()
                } else {
                    path
                },
                max_depth: int("max_depth", 1, 1, 5)?,
                max_entries: int("max_entries", 200, 1, 2000)?,
            }
        }
        ToolId::Grep => ToolArgs::Grep {
            pattern: text("pattern"),
            include: canonical
                .get("include")
                .cloned()
                .filter(|s| !s.trim().is_empty()),
            max_results: int("max_results", 50, 1, 1000)?,
            regex: parse_bool(canonical.get("regex").map(String::as_str)).ok_or_else(|| {
                format!(
                    "Invalid {} call: `regex` must be true or false.",
                    tool.name()
                )
            })?,
        },
        ToolId::WriteFile => ToolArgs::WriteFile {
            path: text("path"),
            content: text("content"),
        },
        ToolId::EditFile => ToolArgs::EditFile {
            path: text("path"),
            old_string: text("old_string"),
            new_string: text("new_string"),
        },
    };
    if let Some(path) = args.path()
        && path.trim().is_empty()
    {
        return Err(format!(
            "Invalid {} call: missing required parameter `path`.",
            tool.name()
        ));
    }
    if let ToolArgs::Grep { pattern, .. } = &args
        && pattern.is_empty()
    {
        return Err(format!(
            "Invalid {} call: missing required parameter `pattern`.",
            tool.name()
        ));
    }
    Ok(args)
}

fn parse_bool(value: Option<&str>) -> Option<bool> {
    match value.map(|v| v.trim().to_lowercase()) {
        None => Some(false),
        Some(v) => match v.as_str() {
            "true" | "yes" | "y" | "1" | "on" => Some(true),
            "false" | "no" | "n" | "0" | "off" | "" => Some(false),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn name_resolution_rows() {
        use NameResolution::*;
        let rows = [
            ("talos.edit_file", false, Canonical(ToolId::EditFile)),
            ("Talos:read_file", false, Canonical(ToolId::ReadFile)),
            ("talos_write_file", false, Canonical(ToolId::WriteFile)),
            ("create_file", false, Alias(ToolId::WriteFile)),
            ("talos.create_file", false, Alias(ToolId::WriteFile)),
            ("file_utils:read_file", false, Alias(ToolId::ReadFile)),
            ("ls", false, Alias(ToolId::ListDir)),
            ("openai.read_file", false, RejectedNamespace),
            ("create_file", true, Unknown),
            ("talos.run_shell", false, Unknown),
            ("bash", false, Unknown),
        ];
        for (raw, strict, expected) in rows {
            assert_eq!(resolve_name(raw, strict), expected, "{raw}");
        }
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn normalisation_rows() {
        assert_eq!(
            normalise(
                ToolId::EditFile,
                &map(&[
                    ("file_path", "a.py"),
                    ("old_text", "30"),
                    ("new_text", "60")
                ])
            ),
            Ok(ToolArgs::EditFile {
                path: "a.py".into(),
                old_string: "30".into(),
                new_string: "60".into()
            })
        );
        assert_eq!(
            normalise(ToolId::WriteFile, &map(&[("path", "a.py")])),
            Err("Invalid talos.write_file call: missing required parameter `content`.".into())
        );
        assert_eq!(
            normalise(
                ToolId::ReadFile,
                &map(&[("path", "a"), ("command", "rm -rf /")])
            ),
            Err("Invalid talos.read_file call: unknown parameter `command`.".into())
        );
        assert_eq!(
            normalise(ToolId::ListDir, &map(&[])),
            Ok(ToolArgs::ListDir {
                path: ".".into(),
                max_depth: 1,
                max_entries: 200
            })
        );
        assert!(
            normalise(
                ToolId::ReadFile,
                &map(&[("path", "a"), ("max_lines", "lots")])
            )
            .is_err()
        );
        assert!(
            normalise(
                ToolId::EditFile,
                &map(&[("path", " "), ("old_string", "a"), ("new_string", "b")])
            )
            .is_err()
        );
    }
}

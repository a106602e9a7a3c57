//! Normalisation of a call's raw string arguments into [`ToolArgs`]: aliases mapped to
//! canonical parameter names, unknown parameters refused, required ones checked, integers
//! and booleans parsed, a rename's new name checked to be one segment, and a batch's op list
//! parsed by [`crate::planning::ops::parse_operations`].

use std::collections::BTreeMap;
use std::fmt;

use super::{ToolArgs, ToolId};
use crate::planning::command::{self, CommandError, CommandRequest};
use crate::planning::ops;

/// A call whose arguments were refused: the tool and what was wrong. It reads
/// "Invalid <tool> call: <problem>".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    pub tool: ToolId,
    pub problem: ArgsProblem,
}

/// What was wrong with a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsProblem {
    /// A `talos.run_command` call carrying a raw command string.
    RawCommand,
    UnknownParameter(String),
    MissingParameter(String),
    EmptyOldString,
    NewNameNotOneSegment,
    NotAnInteger(String),
    NotABoolean(String),
    /// The batch's op list did not parse.
    Operations(ops::OpsError),
    Command(CommandError),
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid {} call: ", self.tool.name())?;
        match &self.problem {
            ArgsProblem::RawCommand => f.write_str(command::RAW_COMMAND_REFUSAL),
            ArgsProblem::UnknownParameter(key) => write!(f, "unknown parameter `{key}`."),
            ArgsProblem::MissingParameter(name) => {
                write!(
                    f,
                    "{} required parameter `{name}`.",
                    missing_lead(self.tool)
                )
            }
            ArgsProblem::EmptyOldString => {
                f.write_str("old_string is empty; give the exact text to replace.")
            }
            ArgsProblem::NewNameNotOneSegment => {
                f.write_str("new_name must be a single path segment.")
            }
            ArgsProblem::NotAnInteger(name) => {
                write!(f, "`{name}` must be a non-negative integer.")
            }
            ArgsProblem::NotABoolean(name) => write!(f, "`{name}` must be true or false."),
            ArgsProblem::Operations(problem) => write!(f, "{problem}."),
            ArgsProblem::Command(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ArgsError {}

/// Maps aliases to canonical parameter names and checks required ones and types. Unknown
/// parameters are refused: a call carrying keys the tool does not have is malformed.
pub fn normalise(tool: ToolId, raw: &BTreeMap<String, String>) -> Result<ToolArgs, ArgsError> {
    let refuse = |problem: ArgsProblem| ArgsError { tool, problem };
    if tool == ToolId::RunCommand
        && raw
            .keys()
            .any(|key| command::RAW_COMMAND_KEYS.contains(&key.as_str()))
    {
        return Err(refuse(ArgsProblem::RawCommand));
    }
    let specs = tool.params();
    let mut canonical: BTreeMap<&'static str, String> = BTreeMap::new();
    for (key, value) in raw {
        let spec = specs
            .iter()
            .find(|s| s.name == key.as_str() || s.aliases.contains(&key.as_str()));
        let Some(spec) = spec else {
            return Err(refuse(ArgsProblem::UnknownParameter(key.clone())));
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
            return Err(missing(tool, spec.name));
        }
    }
    let fields = Fields { tool, canonical };
    let args = match tool {
        ToolId::ReadFile => ToolArgs::ReadFile {
            path: fields.text("path"),
            max_lines: fields.int("max_lines", 500, 1, 5000)?,
            offset: fields.int("offset", 1, 1, usize::MAX)?,
        },
        ToolId::ListDir => {
            let path = fields.text("path");
            ToolArgs::ListDir {
                path: if path.trim().is_empty() {
                    ".".into()
                } else {
                    path
                },
                max_depth: fields.int("max_depth", 1, 1, 5)?,
                max_entries: fields.int("max_entries", 200, 1, 2000)?,
            }
        }
        ToolId::Grep => ToolArgs::Grep {
            pattern: fields.text("pattern"),
            include: fields
                .canonical
                .get("include")
                .cloned()
                .filter(|s| !s.trim().is_empty()),
            max_results: fields.int("max_results", 50, 1, 1000)?,
            regex: fields.flag("regex")?,
        },
        ToolId::Search => ToolArgs::Search {
            query: fields.text("query"),
            limit: fields.int(
                "limit",
                crate::planning::retrieval::DEFAULT_LIMIT,
                1,
                crate::planning::retrieval::MAX_LIMIT,
            )?,
        },
        ToolId::WriteFile => ToolArgs::WriteFile {
            path: fields.text("path"),
            content: fields.text("content"),
        },
        ToolId::EditFile => {
            let old_string = fields.text("old_string");
            if old_string.is_empty() && fields.canonical.contains_key("old_string") {
                return Err(refuse(ArgsProblem::EmptyOldString));
            }
            ToolArgs::EditFile {
                path: fields.text("path"),
                old_string,
                new_string: fields.text("new_string"),
            }
        }
        ToolId::MkDir => ToolArgs::MkDir {
            path: fields.required("path")?,
        },
        ToolId::MovePath => ToolArgs::MovePath {
            from: fields.required("from")?,
            to: fields.required("to")?,
            overwrite: fields.flag("overwrite")?,
        },
        ToolId::CopyPath => ToolArgs::CopyPath {
            from: fields.required("from")?,
            to: fields.required("to")?,
            recursive: fields.flag("recursive")?,
            overwrite: fields.flag("overwrite")?,
        },
        ToolId::RenamePath => {
            let path = fields.required("path")?;
            let new_name = fields.required("new_name")?;
            if !ops::is_single_segment(&new_name) {
                return Err(refuse(ArgsProblem::NewNameNotOneSegment));
            }
            ToolArgs::RenamePath {
                path,
                new_name,
                overwrite: fields.flag("overwrite")?,
            }
        }
        ToolId::DeletePath => ToolArgs::DeletePath {
            path: fields.required("path")?,
            recursive: fields.flag("recursive")?,
        },
        ToolId::ApplyWorkspaceBatch => ToolArgs::ApplyWorkspaceBatch {
            operations: ops::parse_operations(&fields.required("operations")?)
                .map_err(|problem| refuse(ArgsProblem::Operations(problem)))?,
        },
        ToolId::RunCommand => {
            let invalid = |error: CommandError| refuse(ArgsProblem::Command(error));
            let cwd = fields.text("cwd").trim().to_string();
            let timeout = fields.text("timeout_ms");
            ToolArgs::RunCommand {
                request: CommandRequest {
                    profile: fields.required("profile")?,
                    args: command::parse_args(&fields.text("args")).map_err(invalid)?,
                    cwd: if cwd.is_empty() { ".".into() } else { cwd },
                    timeout_ms: if timeout.trim().is_empty() {
                        None
                    } else {
                        Some(command::parse_timeout(&timeout).map_err(invalid)?)
                    },
                },
            }
        }
    };
    if let Some(path) = args.path()
        && path.trim().is_empty()
    {
        return Err(missing(tool, "path"));
    }
    if let ToolArgs::Grep { pattern, .. } = &args
        && pattern.is_empty()
    {
        return Err(missing(tool, "pattern"));
    }
    if let ToolArgs::Search { query, .. } = &args
        && query.trim().is_empty()
    {
        return Err(missing(tool, "query"));
    }
    Ok(args)
}

/// The refusal for a missing parameter.
fn missing(tool: ToolId, name: &str) -> ArgsError {
    ArgsError {
        tool,
        problem: ArgsProblem::MissingParameter(name.into()),
    }
}

/// How a missing parameter's refusal starts: a command's says `Missing`, with a capital.
fn missing_lead(tool: ToolId) -> &'static str {
    match tool {
        ToolId::RunCommand => "Missing",
        ToolId::ReadFile
        | ToolId::ListDir
        | ToolId::Grep
        | ToolId::Search
        | ToolId::WriteFile
        | ToolId::EditFile
        | ToolId::MkDir
        | ToolId::MovePath
        | ToolId::CopyPath
        | ToolId::RenamePath
        | ToolId::DeletePath
        | ToolId::ApplyWorkspaceBatch => "missing",
    }
}

/// The call's values under their canonical names.
struct Fields {
    tool: ToolId,
    canonical: BTreeMap<&'static str, String>,
}

impl Fields {
    /// The value as given (empty when absent).
    fn text(&self, name: &str) -> String {
        self.canonical.get(name).cloned().unwrap_or_default()
    }

    /// The value trimmed, refused when blank. Used by the workspace operations, whose
    /// paths and names never meaningfully start or end with whitespace.
    fn required(&self, name: &str) -> Result<String, ArgsError> {
        let value = self.text(name).trim().to_string();
        if value.is_empty() {
            return Err(missing(self.tool, name));
        }
        Ok(value)
    }

    fn int(&self, name: &str, default: usize, min: usize, max: usize) -> Result<usize, ArgsError> {
        match self.canonical.get(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .map(|n| n.clamp(min, max))
                .map_err(|_| ArgsError {
                    tool: self.tool,
                    problem: ArgsProblem::NotAnInteger(name.into()),
                }),
        }
    }

    /// A boolean: `true/yes/y/1/on` or `false/no/n/0/off`; absent or blank is false.
    fn flag(&self, name: &str) -> Result<bool, ArgsError> {
        match self.canonical.get(name) {
            None => Ok(false),
            Some(v) => ops::flag_word(v).ok_or_else(|| ArgsError {
                tool: self.tool,
                problem: ArgsProblem::NotABoolean(name.into()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The refusal as text, which is what a caller sees.
    fn normalise(tool: ToolId, raw: &BTreeMap<String, String>) -> Result<ToolArgs, String> {
        super::normalise(tool, raw).map_err(|e| e.to_string())
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Proves aliases, missing and unknown parameters, defaults and bad integers.
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

    /// Proves the canonical key wins when an alias is also given.
    #[test]
    fn the_canonical_spelling_wins_over_an_alias() {
        assert_eq!(
            normalise(
                ToolId::MovePath,
                &map(&[("from", "a"), ("path", "z"), ("to", "b")])
            ),
            Ok(ToolArgs::MovePath {
                from: "a".into(),
                to: "b".into(),
                overwrite: false
            })
        );
    }
}

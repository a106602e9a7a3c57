//! Parsing of a batch's op list from its JSON text: the list (an array, or an object holding
//! `operations`), each op's kind and its aliases, each field and its aliases, booleans written
//! as JSON booleans or as words, and errors that name the op by its 1-based position.

use std::fmt;

use serde_json::{Map, Value};

use super::{MAX_OPERATIONS, WorkspaceOp, is_single_segment};

/// Why a batch's op list was refused. Its text is lowercase, without a trailing period, and
/// names the op by its 1-based position: `operation 2: missing "to"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpsError {
    /// The JSON parser's message.
    NotJson(String),
    NotAList,
    Empty,
    /// How many operations there were.
    TooMany(usize),
    Operation {
        /// 1-based.
        position: usize,
        problem: OpProblem,
    },
}

/// What is wrong with one op of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpProblem {
    NotAnObject,
    MissingKind,
    /// A field (the kind's key, or a path, name or flag under the key it was given) that is
    /// not a string.
    NotAString(&'static str),
    UnknownKind(String),
    UnknownField(String),
    /// A field of another op kind, with a value.
    NotApplicable {
        key: String,
        kind: &'static str,
        takes: Vec<&'static str>,
    },
    Missing(&'static str),
    NewNameNotOneSegment,
    NotAFlag(&'static str),
}

impl fmt::Display for OpsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpsError::NotJson(error) => write!(f, "operations is not valid JSON ({error})"),
            OpsError::NotAList => {
                f.write_str("operations must be a JSON array of operation objects")
            }
            OpsError::Empty => {
                f.write_str("operations is empty: at least one operation is required (minItems 1)")
            }
            OpsError::TooMany(count) => write!(
                f,
                "operations holds {count} operations; at most {MAX_OPERATIONS} are allowed in one batch"
            ),
            OpsError::Operation { position, problem } => {
                write!(f, "operation {position}: {problem}")
            }
        }
    }
}

impl fmt::Display for OpProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpProblem::NotAnObject => {
                f.write_str(r#"expected an object such as {"op": "mkdir", "path": "docs"}"#)
            }
            OpProblem::MissingKind => {
                f.write_str(r#"missing "op" (one of mkdir, move, copy, rename, delete)"#)
            }
            OpProblem::NotAString(key) => write!(f, r#""{key}" must be a string"#),
            OpProblem::UnknownKind(raw) => write!(
                f,
                r#"unknown op "{raw}" (expected mkdir, move, copy, rename or delete)"#
            ),
            OpProblem::UnknownField(key) => write!(f, r#"unknown field "{key}""#),
            OpProblem::NotApplicable { key, kind, takes } => write!(
                f,
                r#""{key}" does not apply to {kind}; it takes {}"#,
                takes.join(", ")
            ),
            OpProblem::Missing(key) => write!(f, r#"missing "{key}""#),
            OpProblem::NewNameNotOneSegment => {
                f.write_str("new_name must be a single path segment")
            }
            OpProblem::NotAFlag(key) => write!(f, r#""{key}" must be true or false"#),
        }
    }
}

impl std::error::Error for OpsError {}

/// Parses the op list of a batch.
pub fn parse_operations(text: &str) -> Result<Vec<WorkspaceOp>, OpsError> {
    let root: Value =
        serde_json::from_str(text.trim()).map_err(|error| OpsError::NotJson(error.to_string()))?;
    let list = match &root {
        Value::Array(items) => items,
        Value::Object(fields) => match fields.get("operations") {
            Some(Value::Array(items)) => items,
            Some(_) | None => return Err(OpsError::NotAList),
        },
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            return Err(OpsError::NotAList);
        }
    };
    if list.is_empty() {
        return Err(OpsError::Empty);
    }
    if list.len() > MAX_OPERATIONS {
        return Err(OpsError::TooMany(list.len()));
    }
    list.iter()
        .enumerate()
        .map(|(index, item)| {
            parse_one(item).map_err(|problem| OpsError::Operation {
                position: index + 1,
                problem,
            })
        })
        .collect()
}

/// The keys that may name an op's kind, first wins.
const KIND_KEYS: [&str; 4] = ["op", "kind", "operation", "type"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Mkdir,
    Move,
    Copy,
    Rename,
    Delete,
}

/// One field of an op: its canonical key and accepted aliases (canonical first, then in
/// order). Paths and names are required text; `overwrite` and `recursive` are optional flags.
struct Field {
    key: &'static str,
    aliases: &'static [&'static str],
}

const FROM: Field = Field {
    key: "from",
    aliases: &["source", "source_path", "src", "path"],
};
const TO: Field = Field {
    key: "to",
    aliases: &["destination", "destination_path", "dest", "target"],
};
const OVERWRITE: Field = Field {
    key: "overwrite",
    aliases: &[],
};
const RECURSIVE: Field = Field {
    key: "recursive",
    aliases: &[],
};
const MKDIR_PATH: Field = Field {
    key: "path",
    aliases: &["dir", "directory"],
};
const RENAME_PATH: Field = Field {
    key: "path",
    aliases: &["from", "source", "source_path"],
};
const NEW_NAME: Field = Field {
    key: "new_name",
    aliases: &["newName", "name", "to_name"],
};
const DELETE_PATH: Field = Field {
    key: "path",
    aliases: &["target", "file", "filename"],
};

const MKDIR_FIELDS: &[&Field] = &[&MKDIR_PATH];
const MOVE_FIELDS: &[&Field] = &[&FROM, &TO, &OVERWRITE];
const COPY_FIELDS: &[&Field] = &[&FROM, &TO, &RECURSIVE, &OVERWRITE];
const RENAME_FIELDS: &[&Field] = &[&RENAME_PATH, &NEW_NAME, &OVERWRITE];
const DELETE_FIELDS: &[&Field] = &[&DELETE_PATH, &RECURSIVE];

impl Kind {
    fn parse(raw: &str) -> Option<Kind> {
        Some(match raw.trim().to_lowercase().replace('-', "_").as_str() {
            "mkdir" | "make_dir" | "make_directory" | "create_dir" | "create_directory" => {
                Kind::Mkdir
            }
            "move" | "mv" | "move_path" => Kind::Move,
            "copy" | "cp" | "copy_path" => Kind::Copy,
            "rename" | "rename_path" => Kind::Rename,
            "delete" | "rm" | "remove" | "delete_path" | "remove_path" => Kind::Delete,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Mkdir => "mkdir",
            Kind::Move => "move",
            Kind::Copy => "copy",
            Kind::Rename => "rename",
            Kind::Delete => "delete",
        }
    }

    fn fields(self) -> &'static [&'static Field] {
        match self {
            Kind::Mkdir => MKDIR_FIELDS,
            Kind::Move => MOVE_FIELDS,
            Kind::Copy => COPY_FIELDS,
            Kind::Rename => RENAME_FIELDS,
            Kind::Delete => DELETE_FIELDS,
        }
    }

    const ALL: [Kind; 5] = [
        Kind::Mkdir,
        Kind::Move,
        Kind::Copy,
        Kind::Rename,
        Kind::Delete,
    ];
}

fn parse_one(item: &Value) -> Result<WorkspaceOp, OpProblem> {
    let Value::Object(fields) = item else {
        return Err(OpProblem::NotAnObject);
    };
    let kind = kind_of(fields)?;
    check_keys(kind, fields)?;
    Ok(match kind {
        Kind::Mkdir => WorkspaceOp::Mkdir {
            path: text(fields, &MKDIR_PATH)?,
        },
        Kind::Move => WorkspaceOp::Move {
            from: text(fields, &FROM)?,
            to: text(fields, &TO)?,
            overwrite: flag(fields, &OVERWRITE)?,
        },
        Kind::Copy => WorkspaceOp::Copy {
            from: text(fields, &FROM)?,
            to: text(fields, &TO)?,
            recursive: flag(fields, &RECURSIVE)?,
            overwrite: flag(fields, &OVERWRITE)?,
        },
        Kind::Rename => {
            let path = text(fields, &RENAME_PATH)?;
            let new_name = text(fields, &NEW_NAME)?;
            if !is_single_segment(&new_name) {
                return Err(OpProblem::NewNameNotOneSegment);
            }
            WorkspaceOp::Rename {
                path,
                new_name,
                overwrite: flag(fields, &OVERWRITE)?,
            }
        }
        Kind::Delete => WorkspaceOp::Delete {
            path: text(fields, &DELETE_PATH)?,
            recursive: flag(fields, &RECURSIVE)?,
        },
    })
}

fn kind_of(fields: &Map<String, Value>) -> Result<Kind, OpProblem> {
    let Some((key, value)) = KIND_KEYS
        .iter()
        .find_map(|key| fields.get(*key).filter(|v| !v.is_null()).map(|v| (*key, v)))
    else {
        return Err(OpProblem::MissingKind);
    };
    let Value::String(raw) = value else {
        return Err(OpProblem::NotAString(key));
    };
    Kind::parse(raw).ok_or_else(|| OpProblem::UnknownKind(raw.trim().to_string()))
}

/// Refuses keys no op knows, and keys of another op kind that carry a value (a `to` on a
/// mkdir). Null, `false` and empty strings in another kind's keys are ignored: models fill
/// every advertised property with its default.
fn check_keys(kind: Kind, fields: &Map<String, Value>) -> Result<(), OpProblem> {
    for (key, value) in fields {
        if KIND_KEYS.contains(&key.as_str()) || knows(kind, key) {
            continue;
        }
        if !Kind::ALL.iter().any(|other| knows(*other, key)) {
            return Err(OpProblem::UnknownField(key.clone()));
        }
        let empty = match value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::String(s) => s.trim().is_empty(),
            Value::Number(_) | Value::Array(_) | Value::Object(_) => false,
        };
        if !empty {
            return Err(OpProblem::NotApplicable {
                key: key.clone(),
                kind: kind.name(),
                takes: kind.fields().iter().map(|f| f.key).collect(),
            });
        }
    }
    Ok(())
}

fn knows(kind: Kind, key: &str) -> bool {
    kind.fields()
        .iter()
        .any(|f| f.key == key || f.aliases.contains(&key))
}

/// The first non-null value among the field's key and aliases, with the key it came under.
fn lookup<'a>(fields: &'a Map<String, Value>, field: &Field) -> Option<(&'static str, &'a Value)> {
    std::iter::once(&field.key)
        .chain(field.aliases)
        .find_map(|key| fields.get(*key).filter(|v| !v.is_null()).map(|v| (*key, v)))
}

fn text(fields: &Map<String, Value>, field: &Field) -> Result<String, OpProblem> {
    match lookup(fields, field) {
        None => Err(OpProblem::Missing(field.key)),
        Some((_, Value::String(s))) if s.trim().is_empty() => Err(OpProblem::Missing(field.key)),
        Some((_, Value::String(s))) => Ok(s.trim().to_string()),
        Some((key, _)) => Err(OpProblem::NotAString(key)),
    }
}

fn flag(fields: &Map<String, Value>, field: &Field) -> Result<bool, OpProblem> {
    let Some((key, value)) = lookup(fields, field) else {
        return Ok(false);
    };
    let parsed = match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => flag_word(s),
        Value::Number(n) => match n.as_u64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            Some(_) | None => None,
        },
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    };
    parsed.ok_or(OpProblem::NotAFlag(key))
}

/// A boolean written as a word: `true/yes/y/1/on`, `false/no/n/0/off`; blank is false.
pub(crate) fn flag_word(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        "true" | "yes" | "y" | "1" | "on" => Some(true),
        "false" | "no" | "n" | "0" | "off" | "" => Some(false),
        _ => None,
    }
}

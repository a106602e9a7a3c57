//! Parsing of a batch's op list from its JSON text: the list (an array, or an object holding
//! `operations`), each op's kind and its aliases, each field and its aliases, booleans written
//! as JSON booleans or as words, and errors that name the op by its 1-based position.

use serde_json::{Map, Value};

use super::{MAX_OPERATIONS, WorkspaceOp, is_single_segment};

/// Parses the op list of a batch. Errors are lowercase, without a trailing period, and name
/// the op by its 1-based position: `operation 2: missing "to"`.
pub fn parse_operations(text: &str) -> Result<Vec<WorkspaceOp>, String> {
    let root: Value = serde_json::from_str(text.trim())
        .map_err(|error| format!("operations is not valid JSON ({error})"))?;
    let list = match &root {
        Value::Array(items) => items,
        Value::Object(fields) => match fields.get("operations") {
            Some(Value::Array(items)) => items,
            Some(_) | None => return Err(NOT_A_LIST.into()),
        },
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            return Err(NOT_A_LIST.into());
        }
    };
    if list.is_empty() {
        return Err("operations is empty: at least one operation is required (minItems 1)".into());
    }
    if list.len() > MAX_OPERATIONS {
        return Err(format!(
            "operations holds {} operations; at most {MAX_OPERATIONS} are allowed in one batch",
            list.len()
        ));
    }
    list.iter()
        .enumerate()
        .map(|(index, item)| {
            parse_one(item).map_err(|problem| format!("operation {}: {problem}", index + 1))
        })
        .collect()
}

const NOT_A_LIST: &str = "operations must be a JSON array of operation objects";

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

fn parse_one(item: &Value) -> Result<WorkspaceOp, String> {
    let Value::Object(fields) = item else {
        return Err(r#"expected an object such as {"op": "mkdir", "path": "docs"}"#.into());
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
                return Err("new_name must be a single path segment".into());
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

fn kind_of(fields: &Map<String, Value>) -> Result<Kind, String> {
    let Some((key, value)) = KIND_KEYS
        .iter()
        .find_map(|key| fields.get(*key).filter(|v| !v.is_null()).map(|v| (*key, v)))
    else {
        return Err(r#"missing "op" (one of mkdir, move, copy, rename, delete)"#.into());
    };
    let Value::String(raw) = value else {
        return Err(format!(r#""{key}" must be a string"#));
    };
    Kind::parse(raw).ok_or_else(|| {
        format!(
            r#"unknown op "{}" (expected mkdir, move, copy, rename or delete)"#,
            raw.trim()
        )
    })
}

/// Refuses keys no op knows, and keys of another op kind that carry a value (a `to` on a
/// mkdir). Null, `false` and empty strings in another kind's keys are ignored: models fill
/// every advertised property with its default.
fn check_keys(kind: Kind, fields: &Map<String, Value>) -> Result<(), String> {
    for (key, value) in fields {
        if KIND_KEYS.contains(&key.as_str()) || knows(kind, key) {
            continue;
        }
        if !Kind::ALL.iter().any(|other| knows(*other, key)) {
            return Err(format!(r#"unknown field "{key}""#));
        }
        let empty = match value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::String(s) => s.trim().is_empty(),
            Value::Number(_) | Value::Array(_) | Value::Object(_) => false,
        };
        if !empty {
            let takes: Vec<&str> = kind.fields().iter().map(|f| f.key).collect();
            return Err(format!(
                r#""{key}" does not apply to {}; it takes {}"#,
                kind.name(),
                takes.join(", ")
            ));
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

fn text(fields: &Map<String, Value>, field: &Field) -> Result<String, String> {
    match lookup(fields, field) {
        None => Err(format!(r#"missing "{}""#, field.key)),
        Some((_, Value::String(s))) if s.trim().is_empty() => {
            Err(format!(r#"missing "{}""#, field.key))
        }
        Some((_, Value::String(s))) => Ok(s.trim().to_string()),
        Some((key, _)) => Err(format!(r#""{key}" must be a string"#)),
    }
}

fn flag(fields: &Map<String, Value>, field: &Field) -> Result<bool, String> {
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
    parsed.ok_or_else(|| format!(r#""{key}" must be true or false"#))
}

/// A boolean written as a word: `true/yes/y/1/on`, `false/no/n/0/off`; blank is false.
pub(crate) fn flag_word(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        "true" | "yes" | "y" | "1" | "on" => Some(true),
        "false" | "no" | "n" | "0" | "off" | "" => Some(false),
        _ => None,
    }
}

//! The batch op list as tables: valid lists, every op-kind and field alias, booleans as JSON
//! or words, malformed JSON, wrong types, empty and oversized lists, unknown ops and fields,
//! the approval preview, and properties (the parser never panics; valid ops round-trip).

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};
use talos_core::ops::{MAX_OPERATIONS, WorkspaceOp, is_destructive, parse_operations, preview};

fn mkdir(path: &str) -> WorkspaceOp {
    WorkspaceOp::Mkdir { path: path.into() }
}

fn mv(from: &str, to: &str, overwrite: bool) -> WorkspaceOp {
    WorkspaceOp::Move {
        from: from.into(),
        to: to.into(),
        overwrite,
    }
}

fn cp(from: &str, to: &str, recursive: bool, overwrite: bool) -> WorkspaceOp {
    WorkspaceOp::Copy {
        from: from.into(),
        to: to.into(),
        recursive,
        overwrite,
    }
}

fn rename(path: &str, new_name: &str, overwrite: bool) -> WorkspaceOp {
    WorkspaceOp::Rename {
        path: path.into(),
        new_name: new_name.into(),
        overwrite,
    }
}

fn delete(path: &str, recursive: bool) -> WorkspaceOp {
    WorkspaceOp::Delete {
        path: path.into(),
        recursive,
    }
}

fn check(input: Value, expected: Result<Vec<WorkspaceOp>, &str>) {
    let text = input.to_string();
    assert_eq!(
        parse_operations(&text).map_err(|e| e.to_string()),
        expected.map_err(str::to_string),
        "{text}"
    );
}

/// Proves a valid list parses in order, as an array or an object holding `operations`.
#[test]
fn valid_lists() {
    let ops = json!([
        {"op": "mkdir", "path": "docs"},
        {"op": "move", "from": "a.txt", "to": "docs/a.txt"},
        {"op": "copy", "from": "src", "to": "bak", "recursive": true},
        {"op": "rename", "path": "docs/a.txt", "new_name": "b.txt", "overwrite": "yes"},
        {"op": "delete", "path": "build", "recursive": true},
    ]);
    let expected = vec![
        mkdir("docs"),
        mv("a.txt", "docs/a.txt", false),
        cp("src", "bak", true, false),
        rename("docs/a.txt", "b.txt", true),
        delete("build", true),
    ];
    check(ops.clone(), Ok(expected.clone()));
    check(json!({"operations": ops}), Ok(expected));
}

/// Proves every op-kind alias, in any case and with `-` for `_`.
#[test]
fn op_kind_aliases() {
    let rows: &[(&[&str], Value, WorkspaceOp)] = &[
        (
            &[
                "mkdir",
                "make_dir",
                "make_directory",
                "create_dir",
                "create_directory",
                "Make-Dir",
            ],
            json!({"path": "d"}),
            mkdir("d"),
        ),
        (
            &["move", "mv", "move_path", "MOVE"],
            json!({"from": "a", "to": "b"}),
            mv("a", "b", false),
        ),
        (
            &["copy", "cp", "copy_path"],
            json!({"from": "a", "to": "b"}),
            cp("a", "b", false, false),
        ),
        (
            &["rename", "rename_path", "rename-path"],
            json!({"path": "a", "new_name": "b"}),
            rename("a", "b", false),
        ),
        (
            &["delete", "rm", "remove", "delete_path", "remove_path"],
            json!({"path": "a"}),
            delete("a", false),
        ),
    ];
    for (kinds, fields, expected) in rows {
        for kind in *kinds {
            for key in ["op", "kind", "operation", "type"] {
                let mut op = fields.clone();
                op[key] = json!(kind);
                check(json!([op]), Ok(vec![expected.clone()]));
            }
        }
    }
}

/// Proves every field alias, per op kind, and that the canonical key wins.
#[test]
fn field_aliases() {
    let rows: &[(Value, WorkspaceOp)] = &[
        (json!({"op": "mkdir", "dir": "d"}), mkdir("d")),
        (json!({"op": "mkdir", "directory": " d "}), mkdir("d")),
        (
            json!({"op": "mv", "source": "a", "destination": "b"}),
            mv("a", "b", false),
        ),
        (
            json!({"op": "mv", "source_path": "a", "destination_path": "b"}),
            mv("a", "b", false),
        ),
        (
            json!({"op": "mv", "src": "a", "dest": "b"}),
            mv("a", "b", false),
        ),
        (
            json!({"op": "cp", "path": "a", "target": "b"}),
            cp("a", "b", false, false),
        ),
        (
            json!({"op": "mv", "from": "a", "src": "z", "to": "b"}),
            mv("a", "b", false),
        ),
        (
            json!({"op": "rename", "from": "a", "newName": "b"}),
            rename("a", "b", false),
        ),
        (
            json!({"op": "rename", "source": "a", "name": "b"}),
            rename("a", "b", false),
        ),
        (
            json!({"op": "rename", "source_path": "a", "to_name": "b"}),
            rename("a", "b", false),
        ),
        (json!({"op": "rm", "target": "a"}), delete("a", false)),
        (json!({"op": "rm", "file": "a"}), delete("a", false)),
        (json!({"op": "rm", "filename": "a"}), delete("a", false)),
    ];
    for (op, expected) in rows {
        check(json!([op]), Ok(vec![expected.clone()]));
    }
}

/// Proves booleans as JSON booleans, 0/1, or the words of the single-op tools.
#[test]
fn booleans() {
    let rows = [
        (json!(true), true),
        (json!(false), false),
        (json!(null), false),
        (json!(1), true),
        (json!(0), false),
        (json!("TRUE"), true),
        (json!("y"), true),
        (json!("on"), true),
        (json!("off"), false),
        (json!("no"), false),
        (json!(""), false),
    ];
    for (value, expected) in rows {
        check(
            json!([{"op": "rm", "path": "a", "recursive": value}]),
            Ok(vec![delete("a", expected)]),
        );
    }
}

/// Proves each refusal names the problem and the op's 1-based position.
#[test]
fn refusals() {
    let many: Vec<Value> = (0..=MAX_OPERATIONS)
        .map(|i| json!({"op": "mkdir", "path": format!("d{i}")}))
        .collect();
    let rows: Vec<(Value, &str)> = vec![
        (
            json!([]),
            "operations is empty: at least one operation is required (minItems 1)",
        ),
        (
            json!({"operations": []}),
            "operations is empty: at least one operation is required (minItems 1)",
        ),
        (
            json!(many),
            "operations holds 101 operations; at most 100 are allowed in one batch",
        ),
        (
            json!({"op": "mkdir", "path": "a"}),
            "operations must be a JSON array of operation objects",
        ),
        (
            json!({"operations": "mkdir a"}),
            "operations must be a JSON array of operation objects",
        ),
        (
            json!("mkdir a"),
            "operations must be a JSON array of operation objects",
        ),
        (
            json!(7),
            "operations must be a JSON array of operation objects",
        ),
        (
            json!(["mkdir a"]),
            r#"operation 1: expected an object such as {"op": "mkdir", "path": "docs"}"#,
        ),
        (
            json!([{"op": "mkdir", "path": "a"}, {"path": "b"}]),
            r#"operation 2: missing "op" (one of mkdir, move, copy, rename, delete)"#,
        ),
        (
            json!([{"op": 3, "path": "b"}]),
            r#"operation 1: "op" must be a string"#,
        ),
        (
            json!([{"op": "chmod", "path": "b"}]),
            r#"operation 1: unknown op "chmod" (expected mkdir, move, copy, rename or delete)"#,
        ),
        (
            json!([{"op": "delete_file", "path": "b"}]),
            r#"operation 1: unknown op "delete_file" (expected mkdir, move, copy, rename or delete)"#,
        ),
        (json!([{"op": "mkdir"}]), r#"operation 1: missing "path""#),
        (
            json!([{"op": "mkdir", "path": "  "}]),
            r#"operation 1: missing "path""#,
        ),
        (
            json!([{"op": "mkdir", "path": "a"}, {"op": "move", "from": "a"}]),
            r#"operation 2: missing "to""#,
        ),
        (
            json!([{"op": "copy", "to": "b"}]),
            r#"operation 1: missing "from""#,
        ),
        (
            json!([{"op": "rename", "path": "a"}]),
            r#"operation 1: missing "new_name""#,
        ),
        (
            json!([{"op": "mkdir", "path": ["a"]}]),
            r#"operation 1: "path" must be a string"#,
        ),
        (
            json!([{"op": "mv", "from": "a", "destination": 5}]),
            r#"operation 1: "destination" must be a string"#,
        ),
        (
            json!([{"op": "rm", "path": "a", "recursive": "maybe"}]),
            r#"operation 1: "recursive" must be true or false"#,
        ),
        (
            json!([{"op": "mv", "from": "a", "to": "b", "overwrite": 2}]),
            r#"operation 1: "overwrite" must be true or false"#,
        ),
        (
            json!([{"op": "rename", "path": "a", "new_name": "x/y"}]),
            "operation 1: new_name must be a single path segment",
        ),
        (
            json!([{"op": "rename", "path": "a", "new_name": ".."}]),
            "operation 1: new_name must be a single path segment",
        ),
        (
            json!([{"op": "mkdir", "path": "a", "content": "x"}]),
            r#"operation 1: unknown field "content""#,
        ),
        (
            json!([{"op": "mkdir", "path": "a", "to": "b"}]),
            r#"operation 1: "to" does not apply to mkdir; it takes path"#,
        ),
        (
            json!([{"op": "rename", "path": "a", "to": "b"}]),
            r#"operation 1: "to" does not apply to rename; it takes path, new_name, overwrite"#,
        ),
        (
            json!([{"op": "mv", "from": "a", "to": "b", "recursive": true}]),
            r#"operation 1: "recursive" does not apply to move; it takes from, to, overwrite"#,
        ),
    ];
    for (input, message) in rows {
        check(input, Err(message));
    }
}

/// Proves default-filled keys of other op kinds are ignored when they carry no value.
#[test]
fn empty_keys_of_other_kinds_are_ignored() {
    check(
        json!([{"op": "mkdir", "path": "a", "from": null, "to": "", "new_name": null, "overwrite": false, "recursive": false}]),
        Ok(vec![mkdir("a")]),
    );
}

/// Proves exactly 100 operations are accepted.
#[test]
fn the_cap_is_inclusive() {
    let ops: Vec<Value> = (0..MAX_OPERATIONS)
        .map(|i| json!({"op": "mkdir", "path": format!("d{i}")}))
        .collect();
    let parsed = parse_operations(&json!(ops).to_string());
    assert_eq!(parsed.map(|ops| ops.len()), Ok(MAX_OPERATIONS));
}

/// Proves malformed JSON is refused with the parser's position.
#[test]
fn malformed_json() {
    for text in [
        "",
        "[",
        "[{\"op\": \"mkdir\",}]",
        "mkdir docs",
        "[{op: mkdir}]",
    ] {
        let Err(message) = parse_operations(text).map_err(|e| e.to_string()) else {
            panic!("accepted {text:?}");
        };
        assert!(
            message.starts_with("operations is not valid JSON ("),
            "{text:?}: {message}"
        );
    }
}

/// Proves the approval preview: one line per op, flags in brackets.
#[test]
fn preview_lines() {
    let ops = [
        mkdir("docs"),
        mv("a.txt", "b/a.txt", false),
        cp("src", "bak", true, true),
        rename("docs/a.md", "b.md", true),
        delete("build", true),
        delete("x.log", false),
    ];
    assert_eq!(
        preview(&ops),
        "mkdir docs\n\
         move a.txt -> b/a.txt\n\
         copy src -> bak (recursive, overwrite)\n\
         rename docs/a.md -> docs/b.md (overwrite)\n\
         delete build (recursive)\n\
         delete x.log"
    );
    assert!(is_destructive(&ops));
    assert!(!is_destructive(&ops[..4]));
}

fn segment() -> impl Strategy<Value = String> {
    "[a-z0-9_]{1,8}(\\.[a-z]{1,3})?"
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(), 1..4).prop_map(|s| s.join("/"))
}

fn op() -> impl Strategy<Value = WorkspaceOp> {
    prop_oneof![
        path().prop_map(|path| WorkspaceOp::Mkdir { path }),
        (path(), path(), any::<bool>()).prop_map(|(from, to, overwrite)| WorkspaceOp::Move {
            from,
            to,
            overwrite
        }),
        (path(), path(), any::<bool>(), any::<bool>()).prop_map(
            |(from, to, recursive, overwrite)| {
                WorkspaceOp::Copy {
                    from,
                    to,
                    recursive,
                    overwrite,
                }
            }
        ),
        (path(), segment(), any::<bool>()).prop_map(|(path, new_name, overwrite)| {
            WorkspaceOp::Rename {
                path,
                new_name,
                overwrite,
            }
        }),
        (path(), any::<bool>())
            .prop_map(|(path, recursive)| WorkspaceOp::Delete { path, recursive }),
    ]
}

fn to_json(op: &WorkspaceOp) -> Value {
    match op {
        WorkspaceOp::Mkdir { path } => json!({"op": "mkdir", "path": path}),
        WorkspaceOp::Move {
            from,
            to,
            overwrite,
        } => {
            json!({"op": "move", "from": from, "to": to, "overwrite": overwrite})
        }
        WorkspaceOp::Copy {
            from,
            to,
            recursive,
            overwrite,
        } => {
            json!({"op": "copy", "from": from, "to": to, "recursive": recursive, "overwrite": overwrite})
        }
        WorkspaceOp::Rename {
            path,
            new_name,
            overwrite,
        } => {
            json!({"op": "rename", "path": path, "new_name": new_name, "overwrite": overwrite})
        }
        WorkspaceOp::Delete { path, recursive } => {
            json!({"op": "delete", "path": path, "recursive": recursive})
        }
    }
}

proptest! {
    /// Proves the parser returns a value (never panics) on arbitrary text.
    #[test]
    fn the_parser_never_panics(text in ".{0,200}") {
        let _ = parse_operations(&text);
    }

    /// Proves any valid op list survives serialising and parsing, and previews one line per op.
    #[test]
    fn valid_ops_round_trip(ops in prop::collection::vec(op(), 1..=MAX_OPERATIONS)) {
        let text = Value::Array(ops.iter().map(to_json).collect()).to_string();
        prop_assert_eq!(parse_operations(&text), Ok(ops.clone()));
        prop_assert_eq!(preview(&ops).lines().count(), ops.len());
    }
}

//! The tool catalogue as tables: registration order, risk and metadata, every canonical name
//! and alias resolving (strict and not), every parameter alias normalising
//! to its canonical name, the required/invalid parameter messages, and per-call risk.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use talos_core::ops::WorkspaceOp;
use talos_core::tools::{
    NameResolution, ParamKind, Risk, ToolArgs, ToolId, normalise, resolve_name,
};

/// The alias table for the tools this catalogue has (`talosd/core/src/planning/tools/names.rs`).
const ALIASES: &[(ToolId, &[&str])] = &[
    (
        ToolId::WriteFile,
        &[
            "file_write",
            "write_file",
            "file_create",
            "create_file",
            "writefile",
            "createfile",
        ],
    ),
    (ToolId::ReadFile, &["file_read", "read_file", "readfile"]),
    (ToolId::EditFile, &["file_edit", "edit_file", "editfile"]),
    (
        ToolId::ApplyWorkspaceBatch,
        &[
            "apply_workspace_batch",
            "workspace_batch",
            "batch_apply",
            "apply_batch",
        ],
    ),
    (
        ToolId::MkDir,
        &[
            "mkdir",
            "make_dir",
            "make_directory",
            "create_dir",
            "create_directory",
        ],
    ),
    (ToolId::MovePath, &["move_path", "move", "mv"]),
    (ToolId::CopyPath, &["copy_path", "copy", "cp"]),
    (ToolId::RenamePath, &["rename_path", "rename"]),
    (
        ToolId::DeletePath,
        &[
            "delete_path",
            "delete_file",
            "deletefile",
            "delete",
            "remove_path",
            "remove_file",
            "removefile",
            "remove",
            "rm",
        ],
    ),
    (
        ToolId::ListDir,
        &[
            "list_dir",
            "list_directory",
            "dir_list",
            "ls",
            "listdir",
            "listdirectory",
        ],
    ),
    (ToolId::Grep, &["grep", "grepsearch"]),
    (
        ToolId::Search,
        &[
            "search",
            "search_workspace",
            "codebase_search",
            "search_index",
        ],
    ),
    (
        ToolId::RunCommand,
        &["run_command", "command_run", "runcommand"],
    ),
];

const NAMESPACES: [&str; 4] = ["tool_use:", "tool_use.", "file_utils:", "file_utils."];

fn check_name(raw: &str, strict: bool, expected: NameResolution) {
    assert_eq!(
        resolve_name(raw, strict),
        expected,
        "{raw:?} strict={strict}"
    );
}

fn local(tool: ToolId) -> &'static str {
    tool.name().trim_start_matches("talos.")
}

/// Proves `ToolId::ALL` is in registration order and names are canonical.
#[test]
fn registration_order_and_names() {
    let names: Vec<&str> = ToolId::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "talos.read_file",
            "talos.write_file",
            "talos.edit_file",
            "talos.apply_workspace_batch",
            "talos.mkdir",
            "talos.move_path",
            "talos.copy_path",
            "talos.rename_path",
            "talos.delete_path",
            "talos.run_command",
            "talos.grep",
            "talos.search",
            "talos.list_dir",
        ]
    );
    for tool in ToolId::ALL {
        assert_eq!(ToolId::from_canonical(tool.name()), Some(tool));
        assert!(!tool.description().is_empty(), "{tool:?}");
    }
}

/// Proves each tool's risk and operation metadata.
#[test]
fn risk_and_metadata_rows() {
    use Risk::*;
    // (tool, risk, mutates, requires_checkpoint, is_workspace_operation)
    let rows = [
        (ToolId::ReadFile, ReadOnly, false, false, false),
        (ToolId::ListDir, ReadOnly, false, false, false),
        (ToolId::Grep, ReadOnly, false, false, false),
        (ToolId::Search, ReadOnly, false, false, false),
        (ToolId::WriteFile, Write, true, true, false),
        (ToolId::EditFile, Write, true, true, false),
        (ToolId::MkDir, Write, true, true, true),
        (ToolId::MovePath, Write, true, true, true),
        (ToolId::CopyPath, Write, true, true, true),
        (ToolId::RenamePath, Write, true, true, true),
        (ToolId::DeletePath, Destructive, true, true, true),
        (ToolId::ApplyWorkspaceBatch, Write, true, true, true),
        (ToolId::RunCommand, Write, false, false, false),
    ];
    assert_eq!(rows.len(), ToolId::ALL.len(), "a tool is missing a row");
    for (tool, risk, mutates, checkpoint, workspace) in rows {
        let actual = (
            tool.risk(),
            tool.mutates(),
            tool.requires_checkpoint(),
            tool.is_workspace_operation(),
        );
        assert_eq!(actual, (risk, mutates, checkpoint, workspace), "{tool:?}");
        assert_eq!(tool.risk().requires_approval(), risk != ReadOnly);
    }
}

/// Proves canonical names resolve in both modes, through the `talos` separator rewrite.
#[test]
fn canonical_names_resolve_strict_and_not() {
    for tool in ToolId::ALL {
        let l = local(tool);
        for raw in [
            tool.name().to_string(),
            tool.name().to_uppercase(),
            format!("  {}  ", tool.name()),
            format!("talos:{l}"),
            format!("talos/{l}"),
            format!("talos-{l}"),
            format!("talos_{l}"),
            format!("Talos:{}", l.to_uppercase()),
        ] {
            check_name(&raw, false, NameResolution::Canonical(tool));
            check_name(&raw, true, NameResolution::Canonical(tool));
        }
    }
}

/// Proves every alias in the table resolves to its tool, and strict mode refuses it.
#[test]
fn every_alias_resolves_and_strict_refuses_it() {
    let mut seen = Vec::new();
    for (tool, aliases) in ALIASES {
        seen.push(*tool);
        for alias in *aliases {
            check_name(alias, false, NameResolution::Alias(*tool));
            check_name(&alias.to_uppercase(), false, NameResolution::Alias(*tool));
            check_name(alias, true, NameResolution::Unknown);
            // `talos.<alias>` is accepted, or canonical when it spells the tool's name.
            let prefixed = format!("talos.{alias}");
            let expected = if prefixed == tool.name() {
                NameResolution::Canonical(*tool)
            } else {
                NameResolution::Alias(*tool)
            };
            check_name(&prefixed, false, expected);
            check_name(&format!("talos_{alias}"), false, expected);
        }
    }
    seen.sort();
    let mut all = ToolId::ALL.to_vec();
    all.sort();
    assert_eq!(seen, all, "every tool has an alias row");
}

/// Proves backend namespaces accept canonical local names (and `delete_file`) only; any
/// other known name under a namespace is refused, as under a foreign one.
#[test]
fn backend_namespaces_and_foreign_namespaces() {
    for namespace in NAMESPACES {
        for tool in ToolId::ALL {
            let raw = format!("{namespace}{}", local(tool));
            check_name(&raw, false, NameResolution::Alias(tool));
            check_name(&raw, true, NameResolution::Unknown);
            check_name(&format!("talos.{raw}"), false, NameResolution::Alias(tool));
        }
        let raw = format!("{namespace}delete_file");
        check_name(&raw, false, NameResolution::Alias(ToolId::DeletePath));
        for other in ["rm", "mv", "create_file", "ls", "grepsearch"] {
            let raw = format!("{namespace}{other}");
            check_name(&raw, false, NameResolution::RejectedNamespace);
        }
    }
    for (_, aliases) in ALIASES {
        for alias in *aliases {
            for namespace in ["openai.", "functions:", "mcp.fs:"] {
                let raw = format!("{namespace}{alias}");
                check_name(&raw, false, NameResolution::RejectedNamespace);
                check_name(&raw, true, NameResolution::Unknown);
            }
        }
    }
}

/// Proves names the catalogue does not have stay unknown.
#[test]
fn unknown_names() {
    for raw in [
        "bash",
        "",
        "talos.run_shell",
        "run_shell",
        "shell",
        "exec",
        "talos.bash",
        "retrieve",
        "talos.retrieve",
        "delete_everything",
        ".rm",
        "rm.",
        "talos.",
    ] {
        check_name(raw, false, NameResolution::Unknown);
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A valid value for each parameter, by canonical name.
fn sample(name: &str, kind: ParamKind) -> &'static str {
    match (name, kind) {
        ("operations", _) => r#"[{"op": "mkdir", "path": "docs"}]"#,
        ("new_name", _) => "b.txt",
        ("args", _) => r#"["--tests", "*ModelTest*"]"#,
        (_, ParamKind::Integer) => "3",
        (_, ParamKind::Boolean) => "yes",
        (_, ParamKind::String | ParamKind::Array) => "a/x.txt",
    }
}

/// Proves every parameter alias normalises exactly as its canonical name does.
#[test]
fn every_parameter_alias_normalises_to_its_canonical_name() {
    for tool in ToolId::ALL {
        let specs = tool.params();
        let base: Vec<(&str, &str)> = specs
            .iter()
            .map(|s| (s.name, sample(s.name, s.kind)))
            .collect();
        let expected = normalise(tool, &map(&base));
        assert!(expected.is_ok(), "{tool:?}: {expected:?}");
        for spec in &specs {
            for alias in spec.aliases {
                let renamed: Vec<(&str, &str)> = base
                    .iter()
                    .map(|(k, v)| (if *k == spec.name { *alias } else { *k }, *v))
                    .collect();
                assert_eq!(
                    normalise(tool, &map(&renamed)),
                    expected,
                    "{tool:?}: {alias} -> {}",
                    spec.name
                );
            }
        }
    }
}

fn check(tool: ToolId, args: &[(&str, &str)], expected: Result<ToolArgs, &str>) {
    assert_eq!(
        normalise(tool, &map(args)).map_err(|e| e.to_string()),
        expected.map_err(str::to_string),
        "{tool:?} {args:?}"
    );
}

/// Proves the workspace tools' arguments, booleans and refusals, message by message.
#[test]
fn workspace_tool_normalisation_rows() {
    use ToolId::*;
    check(
        MkDir,
        &[("dir", " docs ")],
        Ok(ToolArgs::MkDir {
            path: "docs".into(),
        }),
    );
    check(
        MovePath,
        &[
            ("source", "a.txt"),
            ("dest", "b/a.txt"),
            ("overwrite", "ON"),
        ],
        Ok(ToolArgs::MovePath {
            from: "a.txt".into(),
            to: "b/a.txt".into(),
            overwrite: true,
        }),
    );
    check(
        CopyPath,
        &[
            ("from", "src"),
            ("to", "dst"),
            ("recursive", "y"),
            ("overwrite", "off"),
        ],
        Ok(ToolArgs::CopyPath {
            from: "src".into(),
            to: "dst".into(),
            recursive: true,
            overwrite: false,
        }),
    );
    check(
        RenamePath,
        &[("path", "src/a.rs"), ("newName", "b.rs")],
        Ok(ToolArgs::RenamePath {
            path: "src/a.rs".into(),
            new_name: "b.rs".into(),
            overwrite: false,
        }),
    );
    check(
        DeletePath,
        &[("target", "build"), ("recursive", "1")],
        Ok(ToolArgs::DeletePath {
            path: "build".into(),
            recursive: true,
        }),
    );
    let refusals: &[(ToolId, &[(&str, &str)], &str)] = &[
        (
            MovePath,
            &[("from", "a")],
            "Invalid talos.move_path call: missing required parameter `to`.",
        ),
        (
            MovePath,
            &[("from", "a"), ("to", "  ")],
            "Invalid talos.move_path call: missing required parameter `to`.",
        ),
        (
            CopyPath,
            &[("to", "b")],
            "Invalid talos.copy_path call: missing required parameter `from`.",
        ),
        (
            MkDir,
            &[],
            "Invalid talos.mkdir call: missing required parameter `path`.",
        ),
        (
            DeletePath,
            &[("path", "")],
            "Invalid talos.delete_path call: missing required parameter `path`.",
        ),
        (
            RenamePath,
            &[("path", "a")],
            "Invalid talos.rename_path call: missing required parameter `new_name`.",
        ),
        (
            ApplyWorkspaceBatch,
            &[],
            "Invalid talos.apply_workspace_batch call: missing required parameter `operations`.",
        ),
        (
            MovePath,
            &[("from", "a"), ("to", "b"), ("overwrite", "maybe")],
            "Invalid talos.move_path call: `overwrite` must be true or false.",
        ),
        (
            DeletePath,
            &[("path", "a"), ("recursive", "2")],
            "Invalid talos.delete_path call: `recursive` must be true or false.",
        ),
        (
            MovePath,
            &[("from", "a"), ("to", "b"), ("recursive", "true")],
            "Invalid talos.move_path call: unknown parameter `recursive`.",
        ),
        (
            MkDir,
            &[("path", "a"), ("parents", "true")],
            "Invalid talos.mkdir call: unknown parameter `parents`.",
        ),
        (
            DeletePath,
            &[("file_path", "a")],
            "Invalid talos.delete_path call: unknown parameter `file_path`.",
        ),
        (
            ApplyWorkspaceBatch,
            &[("operations", "[]")],
            "Invalid talos.apply_workspace_batch call: operations is empty: at least one operation is required (minItems 1).",
        ),
        (
            ApplyWorkspaceBatch,
            &[(
                "operations_json",
                r#"[{"op":"mkdir","path":"a"},{"op":"move","from":"a"}]"#,
            )],
            r#"Invalid talos.apply_workspace_batch call: operation 2: missing "to"."#,
        ),
    ];
    for (tool, args, message) in refusals {
        check(*tool, args, Err(message));
    }
}

/// Proves a rename's new name must be one path segment.
#[test]
fn new_name_must_be_a_single_segment() {
    for new_name in ["a/b", "a\\b", "..", ".", "/b", "../b"] {
        check(
            ToolId::RenamePath,
            &[("path", "src/a.rs"), ("new_name", new_name)],
            Err("Invalid talos.rename_path call: new_name must be a single path segment."),
        );
    }
}

/// Proves the paths each call touches, primary first, with a rename's sibling computed.
#[test]
fn paths_rows() {
    let rows: &[(ToolId, &[(&str, &str)], &[&str])] = &[
        (ToolId::Grep, &[("pattern", "x")], &[]),
        (ToolId::ReadFile, &[("path", "a.txt")], &["a.txt"]),
        (ToolId::ListDir, &[], &["."]),
        (ToolId::MkDir, &[("path", "docs")], &["docs"]),
        (
            ToolId::MovePath,
            &[("from", "a"), ("to", "b/a")],
            &["a", "b/a"],
        ),
        (ToolId::CopyPath, &[("from", "a"), ("to", "b")], &["a", "b"]),
        (
            ToolId::RenamePath,
            &[("path", "src/a.rs"), ("new_name", "b.rs")],
            &["src/a.rs", "src/b.rs"],
        ),
        (ToolId::DeletePath, &[("path", "build")], &["build"]),
        (
            ToolId::ApplyWorkspaceBatch,
            &[(
                "operations",
                r#"[{"op":"mkdir","path":"docs"},{"op":"mv","from":"a.md","to":"docs/a.md"},{"op":"rename","path":"docs/a.md","new_name":"b.md"},{"op":"rm","path":"old"}]"#,
            )],
            &["docs", "a.md", "docs/a.md", "docs/a.md", "docs/b.md", "old"],
        ),
    ];
    for (tool, args, expected) in rows {
        let normalised = normalise(*tool, &map(args));
        let Ok(normalised) = normalised else {
            panic!("{tool:?}: {normalised:?}");
        };
        assert_eq!(normalised.paths(), *expected, "{tool:?}");
        assert_eq!(normalised.path(), expected.first().copied(), "{tool:?}");
        assert_eq!(normalised.tool(), *tool);
    }
}

/// Proves a batch is destructive exactly when it holds a delete.
#[test]
fn effective_risk_rows() {
    let batch = |ops: Vec<WorkspaceOp>| ToolArgs::ApplyWorkspaceBatch { operations: ops };
    let mkdir = WorkspaceOp::Mkdir { path: "d".into() };
    let delete = WorkspaceOp::Delete {
        path: "d".into(),
        recursive: true,
    };
    let rows = [
        (batch(vec![mkdir.clone()]), Risk::Write),
        (
            batch(vec![mkdir.clone(), delete.clone()]),
            Risk::Destructive,
        ),
        (
            ToolArgs::DeletePath {
                path: "d".into(),
                recursive: false,
            },
            Risk::Destructive,
        ),
        (ToolArgs::MkDir { path: "d".into() }, Risk::Write),
        (
            ToolArgs::ListDir {
                path: ".".into(),
                max_depth: 1,
                max_entries: 200,
            },
            Risk::ReadOnly,
        ),
        (
            ToolArgs::WriteFile {
                path: "a".into(),
                content: String::new(),
            },
            Risk::Write,
        ),
    ];
    for (args, risk) in rows {
        assert_eq!(args.effective_risk(), risk, "{args:?}");
    }
    assert_eq!(
        ToolId::ApplyWorkspaceBatch.risk(),
        Risk::Write,
        "static risk stays Write"
    );
}

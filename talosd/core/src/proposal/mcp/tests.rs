//! Table rows for which MCP tools join a turn, the MCP ladder, arguments and approvals.

use super::*;
use crate::proposal::rules::{Effect, Rule};

fn tool(server: &str, name: &str, read_only: bool) -> ExternalTool {
    ExternalTool {
        server: server.into(),
        name: name.into(),
        description: "d".into(),
        input_schema: json!({"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}),
        read_only_hint: read_only,
        destructive_hint: None,
    }
}

fn server(name: &str, always: bool, trust: bool) -> ServerPolicy {
    ServerPolicy {
        name: name.into(),
        always,
        trust_read_only_hints: trust,
    }
}

fn offered_names(request: &str, read_only: bool, servers: &[ServerPolicy]) -> Vec<String> {
    let tools = [
        tool("fs", "read_text", true),
        tool("fs", "write_text", true),
        tool("tracker", "list_issues", false),
    ];
    offered(request, read_only, servers, &tools)
        .tools
        .iter()
        .map(ExternalTool::qualified)
        .collect()
}

/// Which tools join a turn: named server, named tool, `always`, and the read-only rule.
#[test]
fn tools_join_only_when_named_or_always_and_read_only_needs_trusted_hints() {
    let plain = [server("fs", false, false), server("tracker", false, false)];
    let rows: [(&str, bool, &[ServerPolicy], &[&str]); 8] = [
        ("Explain main.rs", false, &plain, &[]),
        (
            "Use the fs server to read notes",
            false,
            &plain,
            &["mcp.fs.read_text", "mcp.fs.write_text"],
        ),
        (
            "call list_issues for me",
            false,
            &plain,
            &["mcp.tracker.list_issues"],
        ),
        ("open fsync.c", false, &plain, &[]),
        (
            "Explain main.rs",
            false,
            &[server("tracker", true, false)],
            &["mcp.tracker.list_issues"],
        ),
        ("Use fs to read notes", true, &plain, &[]),
        (
            "Use fs to read notes",
            true,
            &[server("fs", false, true)],
            &["mcp.fs.read_text", "mcp.fs.write_text"],
        ),
        ("Use tracker", true, &[server("tracker", false, true)], &[]),
    ];
    for (request, read_only, servers, expected) in rows {
        assert_eq!(
            offered_names(request, read_only, servers),
            expected,
            "{request} ro={read_only}"
        );
    }
}

#[test]
fn a_turn_offers_at_most_sixteen_mcp_tools() {
    let tools: Vec<ExternalTool> = (0..20)
        .map(|i| tool("big", &format!("t{i}"), false))
        .collect();
    let offer = offered("use big", false, &[server("big", false, false)], &tools);
    assert_eq!(offer.tools.len(), MAX_OFFERED);
    assert_eq!(offer.left_out.len(), 4);
}

fn rule(effect: Effect, mcp: &[&str]) -> Rule {
    Rule {
        effect,
        tools: Vec::new(),
        mcp_tools: mcp.iter().map(|s| s.to_string()).collect(),
        risks: Vec::new(),
        phases: Vec::new(),
        paths: Vec::new(),
        within_workspace: None,
        reason: "rule".into(),
    }
}

/// The MCP ladder: ask by default, rules by name, the strictest wins, never remembered.
#[test]
fn mcp_calls_ask_unless_a_rule_names_them() {
    let rows: [(Vec<Rule>, Action, ReasonCode); 5] = [
        (vec![], Action::Ask, ReasonCode::McpDefaultAsk),
        (
            vec![rule(Effect::Allow, &["mcp.fs.read_text"])],
            Action::Allow,
            ReasonCode::ConfigAllow,
        ),
        (
            vec![rule(Effect::Allow, &["mcp.fs.*"])],
            Action::Allow,
            ReasonCode::ConfigAllow,
        ),
        (
            vec![
                rule(Effect::Allow, &["mcp.fs.*"]),
                rule(Effect::Deny, &["mcp.fs.read_text"]),
            ],
            Action::Deny,
            ReasonCode::ConfigDeny,
        ),
        (
            vec![
                rule(Effect::Allow, &["mcp.other.*"]),
                rule(Effect::Allow, &[]),
            ],
            Action::Ask,
            ReasonCode::McpDefaultAsk,
        ),
    ];
    for (rules, action, code) in rows {
        let d = decide("mcp.fs.read_text", &rules);
        assert_eq!((d.action, d.reason_code), (action, code), "{rules:?}");
        assert!(!d.remember_eligible);
    }
}

/// A rule naming only MCP tools does not match one of Talos's own calls.
#[test]
fn an_mcp_only_rule_never_matches_an_own_tool() {
    let r = rule(Effect::Allow, &["mcp.fs.*"]);
    let q = crate::proposal::rules::RuleQuery {
        tool: crate::planning::tools::ToolId::WriteFile,
        risk: crate::planning::tools::Risk::Write,
        phase: crate::planning::plan::Phase::Apply,
        path: Some("a.txt"),
        within_workspace: true,
    };
    assert!(!r.matches(&q));
}

#[test]
fn arguments_follow_the_schema_and_approvals_escape() {
    let raw = BTreeMap::from([
        ("n".to_string(), "5".to_string()),
        ("s".to_string(), "5".to_string()),
        ("x".to_string(), "[1,2]".to_string()),
        ("y".to_string(), "plain".to_string()),
    ]);
    let args = arguments(&raw, &tool("fs", "t", false).input_schema);
    assert_eq!(
        Value::Object(args.clone()),
        json!({"n": 5, "s": "5", "x": [1, 2], "y": "plain"})
    );
    let hostile = Map::from_iter([("path".to_string(), json!("a\u{202e}txt.exe\nrm -rf"))]);
    let t = tool("fs", "t", false);
    let paths = approval::path_arguments(&t, &hostile, "/ws");
    let lines = approval::view(&t, &hostile, &paths).unwrap().details;
    assert!(lines.iter().all(|l| !l.contains('\n')), "{lines:?}");
    let warned = crate::text::deceptive::warnings(&crate::text::deceptive::ApprovalText {
        description: "mcp.fs.write_text",
        target: None,
        details: &lines,
        diff: None,
        diff_cut: "",
    });
    assert!(
        !warned.is_empty(),
        "the approval screen warns about the override: {lines:?}"
    );
}

#[test]
fn tool_names_outside_the_safe_set_are_not_usable() {
    for (name, ok) in [
        ("read_file", true),
        ("a-b", true),
        ("a.b", false),
        ("a b", false),
        ("\u{1b}[31m", false),
        ("", false),
    ] {
        assert_eq!(usable_tool_name(name), ok, "{name:?}");
    }
    assert_eq!(
        tool("fs", "read_text", false).native_spec()["function"]["name"],
        "mcp.fs.read_text"
    );
}

/// Proves the tools the request names come first (qualified, then by name), so that the ones
/// a small context leaves out are the ones nobody named; and definitions are compact.
#[test]
fn named_tools_come_first_and_definitions_are_compact() {
    let tools: Vec<ExternalTool> = ["read_file", "list_directory", "write_file", "move_file"]
        .iter()
        .map(|n| tool("fs", n, false))
        .collect();
    let offer = offered(
        "use fs: write_file then mcp.fs.move_file",
        false,
        &[server("fs", false, false)],
        &tools,
    );
    let names: Vec<String> = offer.tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(
        names,
        ["move_file", "write_file", "read_file", "list_directory"]
    );
    let mut wordy = tool("fs", "read_text_file", true);
    wordy.description = format!("Read a file. {}", "More words. ".repeat(50));
    wordy.input_schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "additionalProperties": false,
        "properties": {"path": {"type": "string", "title": "Path", "description": "x ".repeat(100)}, "title": {"type": "string", "default": "t"}},
        "required": ["path"]});
    let spec = wordy.native_spec();
    assert_eq!(
        spec["function"]["description"],
        "[MCP `fs`, untrusted] Read a file."
    );
    let parameters = &spec["function"]["parameters"];
    assert_eq!(
        parameters["properties"]["title"],
        json!({"type": "string"}),
        "a property named like a keyword stays"
    );
    assert!(
        parameters.get("$schema").is_none() && parameters.get("additionalProperties").is_none()
    );
    assert!(
        parameters["properties"]["path"]["description"]
            .as_str()
            .unwrap()
            .len()
            <= 80
    );
    assert_eq!(parameters["required"], json!(["path"]));
}

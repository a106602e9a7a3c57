//! The constraint's table tests, and the property that matters: every reply the schema admits
//! passes the runtime's own checks for that step (`check::check_call`, then `edit::apply_edit`
//! on the file as read for an edit).

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::planning::plan::TurnPlan;
use crate::planning::posture::{Posture, apply};
use crate::planning::tools::ToolArgs;
use crate::proposal::check::{CheckOutcome, check_call};
use crate::request::contract::resolve;
use crate::text::edit::apply_edit;
use crate::text::textcall;

fn plan_for(request: &str) -> TurnPlan {
    TurnPlan::from_turn(apply(Posture::Agent, resolve(request)))
}

const SETTINGS: &str = "TIMEOUT = 30\nRETRIES = 3\n";

fn step<'a>(
    plan: &'a TurnPlan,
    phase: Phase,
    readable: &'a [String],
    read_texts: &'a [(String, String)],
    answer_allowed: bool,
) -> Step<'a> {
    let contract = plan.contract();
    Step {
        tools: plan.surface().tools(),
        phase,
        mutation_allowed: contract.mutation_allowed,
        expected: &contract.expected_targets,
        forbidden: &contract.forbidden_targets,
        readable,
        read_texts,
        known: &[],
        // The rules of a test's plan live as long as the test binary: leaked on purpose.
        rules: Box::leak(crate::proposal::change_rule::rules(plan).into_boxed_slice()),
        answer_allowed,
    }
}

/// Instances the schema admits: every `const`/`enum` value, a few sample strings for free
/// strings (never equal to an `old_string` candidate), bounded in number.
fn instances(schema: &Value) -> Vec<Value> {
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        return any.iter().flat_map(instances).collect();
    }
    if let Some(c) = schema.get("const") {
        return vec![c.clone()];
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        return e.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => {
            let samples = [
                "X = 99",
                "a\nb \"quoted\" \\ \u{e9}",
                "docs/a b.txt",
                "src/x-1.rs",
                "new name.rs",
            ];
            let pattern = schema.get("pattern").and_then(Value::as_str);
            let fits = |s: &&&str| match pattern {
                None => true,
                Some(PATH_PATTERN) => s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.@+,=~ /-".contains(c)),
                Some(NAME_PATTERN) => {
                    !s.starts_with('.')
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_.@+,=~ -".contains(c))
                }
                Some(other) => panic!("a pattern the test does not know: {other}"),
            };
            samples.iter().filter(fits).map(|s| json!(s)).collect()
        }
        Some("integer") => vec![json!(1), json!(40)],
        Some("boolean") => vec![json!(true)],
        Some("array") => vec![json!([{}])],
        Some("object") => {
            let props = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let mut acc: Vec<Map<String, Value>> = vec![Map::new()];
            for (key, sub) in props {
                let values = instances(&sub);
                let mut next = Vec::new();
                for partial in &acc {
                    for v in values.iter().take(12) {
                        let mut m = partial.clone();
                        m.insert(key.clone(), v.clone());
                        next.push(m);
                    }
                }
                acc = next.into_iter().take(400).collect();
            }
            acc.into_iter().map(Value::Object).collect()
        }
        _ => vec![],
    }
}

/// What the runtime does with an admitted reply: the call read from the text (as the daemon
/// reads it), its checks, and for an edit the edit on the file as read.
fn runtime_accepts(plan: &TurnPlan, phase: Phase, texts: &[(String, String)], reply: &str) {
    if let Some(answer) = unwrap_answer(reply) {
        assert!(!answer.is_empty());
        return;
    }
    let parsed = textcall::parse(reply);
    assert_eq!(parsed.calls.len(), 1, "one call in {reply}");
    assert!(!parsed.malformed, "{reply}");
    let call = &parsed.calls[0];
    let outcome = check_call(&call.name, &call.args, plan, plan.surface(), phase, true);
    let CheckOutcome::Accepted { args, .. } = outcome else {
        panic!("refused: {reply}: {outcome:?}");
    };
    if let ToolArgs::EditFile {
        path,
        old_string,
        new_string,
    } = args
        && let Some((_, text)) = texts.iter().find(|(p, _)| *p == path)
    {
        let after = apply_edit(text, &old_string, &new_string)
            .unwrap_or_else(|e| panic!("edit refused: {reply}: {e:?}"));
        // Where the request named the old and the new value, the verifier's check passes
        // too: the constraint and the check are one rule. Where several lines hold the old
        // value and the request names none of them, each admitted edit is a real choice and
        // the check says the request did not say which, so it is never verified.
        let rules = crate::proposal::change_rule::rules(plan);
        if let Some(rule) = crate::proposal::change_rule::rule_for(&rules, &path) {
            let candidates = crate::proposal::change_rule::replacements_of(rule, text).len();
            let verdict = crate::proposal::change_rule::check(rule, Some(text), &after);
            match candidates {
                0 => {}
                1 => assert_eq!(verdict, None, "{reply}"),
                _ => assert!(
                    verdict
                        .as_deref()
                        .is_some_and(|v| v.contains("did not say which")),
                    "{reply}: {verdict:?}"
                ),
            }
        }
    }
}

fn every_instance_passes(plan: &TurnPlan, phase: Phase, texts: &[(String, String)], s: &Step) {
    let schema = compile(Level::Strict, s).expect("a schema");
    let all = instances(&schema);
    assert!(!all.is_empty());
    for instance in all {
        runtime_accepts(plan, phase, texts, &instance.to_string());
    }
}

#[test]
fn levels_parse_by_name() {
    let table = [
        ("off", Some(Level::Off)),
        ("names", Some(Level::Names)),
        ("strict", Some(Level::Strict)),
        ("STRICT", None),
        ("", None),
    ];
    for (name, want) in table {
        assert_eq!(Level::parse(name), want, "{name}");
    }
}

#[test]
fn off_and_toolless_turns_carry_nothing() {
    let plan = plan_for("In settings.py, change TIMEOUT from 30 to 60.");
    let s = step(&plan, Phase::Apply, &[], &[], false);
    assert_eq!(compile(Level::Off, &s), None);
    let chat = plan_for("hello");
    assert!(chat.surface().tools().is_empty());
    assert_eq!(
        compile(Level::Strict, &step(&chat, Phase::Apply, &[], &[], true)),
        None
    );
}

#[test]
fn a_change_step_limits_names_and_paths() {
    let plan = plan_for("In settings.py, change TIMEOUT from 30 to 60.");
    let texts = vec![("settings.py".to_string(), SETTINGS.to_string())];
    let schema = compile(
        Level::Strict,
        &step(&plan, Phase::Apply, &[], &texts, false),
    )
    .unwrap();
    let text = schema.to_string();
    assert!(
        !text.contains("\"answer\""),
        "no prose while a change is owed"
    );
    let names: Vec<String> = instances(&schema)
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    for name in &names {
        assert!(
            plan.surface().tools().iter().any(|t| t.name() == name),
            "{name}"
        );
    }
    let edits: Vec<Value> = instances(&schema)
        .into_iter()
        .filter(|i| i["name"] == "talos.edit_file")
        .collect();
    assert!(!edits.is_empty());
    for e in &edits {
        assert_eq!(e["arguments"]["path"], "settings.py");
        let old = e["arguments"]["old_string"].as_str().unwrap();
        assert!(SETTINGS.contains(old), "{old}");
    }
    // names: the same paths, old_string free.
    let names = compile(Level::Names, &step(&plan, Phase::Apply, &[], &texts, false)).unwrap();
    assert!(!names.to_string().contains("TIMEOUT = 30"));
    assert!(names.to_string().contains("\"settings.py\""));
}

#[test]
fn a_target_that_does_not_exist_is_written_never_edited() {
    let plan = plan_for("Create notes.txt with exactly \"hello world\"");
    let schema = compile(Level::Strict, &step(&plan, Phase::Apply, &[], &[], false)).unwrap();
    let text = schema.to_string();
    assert!(!text.contains("talos.edit_file"), "{text}");
    assert!(text.contains("talos.write_file") && text.contains("\"notes.txt\""));
    let readable = vec!["notes.txt".to_string()];
    let schema = compile(
        Level::Names,
        &step(&plan, Phase::Apply, &readable, &[], false),
    )
    .unwrap();
    assert!(schema.to_string().contains("talos.edit_file"));
}

#[test]
fn outside_apply_no_mutating_tool_is_offered() {
    let plan = plan_for("In settings.py, change TIMEOUT from 30 to 60.");
    let schema = compile(Level::Strict, &step(&plan, Phase::Verify, &[], &[], true)).unwrap();
    let text = schema.to_string();
    assert!(!text.contains("talos.edit_file") && !text.contains("talos.write_file"));
    assert!(text.contains("\"answer\""));
}

#[test]
fn reads_are_limited_to_readable_unprotected_paths() {
    let plan = plan_for("What is TIMEOUT in settings.py?");
    let readable = vec![
        "settings.py".to_string(),
        ".env".to_string(),
        "README.md".to_string(),
    ];
    let names = compile(
        Level::Names,
        &step(&plan, Phase::Inspect, &readable, &[], false),
    )
    .unwrap();
    assert!(
        !names.to_string().contains("README.md"),
        "names leaves reads free"
    );
    let schema = compile(
        Level::Strict,
        &step(&plan, Phase::Inspect, &readable, &[], false),
    )
    .unwrap();
    let reads: Vec<String> = instances(&schema)
        .into_iter()
        .filter(|i| i["name"] == "talos.read_file")
        .map(|i| i["arguments"]["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(reads, vec!["settings.py", "README.md"]);
}

#[test]
fn answers_unwrap_only_from_the_answer_object() {
    let table = [
        (r#"{"answer": "TIMEOUT is 30."}"#, Some("TIMEOUT is 30.")),
        (r#"  {"answer":"x"}  "#, Some("x")),
        (r#"{"answer": "x", "name": "talos.read_file"}"#, None),
        (r#"{"answer": 3}"#, None),
        ("plain prose", None),
        (
            r#"{"name":"talos.read_file","arguments":{"path":"a"}}"#,
            None,
        ),
    ];
    for (reply, want) in table {
        assert_eq!(unwrap_answer(reply).as_deref(), want, "{reply}");
    }
}

/// Proves a constrained answer cut at the reply limit gives its prose, unescaped, and a reply
/// that is no answer gives none.
#[test]
fn a_cut_answer_gives_its_prose() {
    let table = [
        (
            r#"{"answer": "parse_header returns a di"#,
            Some("parse_header returns a di"),
        ),
        (
            r#"{"answer":"line one\nline \"two\""#,
            Some("line one\nline \"two\""),
        ),
        (
            r#"{"answer": "caf\u00e9 \ud83d\ude00 and"#,
            Some("café 😀 and"),
        ),
        (
            r#"{"answer": "cut in an escape \u00"#,
            Some("cut in an escape "),
        ),
        (r#"{"answer": "ends \"#, Some("ends ")),
        (r#"{"answer": "whole."}"#, Some("whole.")),
        (r#"{"answer": "#, None),
        (r#"{"name":"talos.read_file","arguments":{"path":"a"#, None),
        ("plain prose", None),
    ];
    for (reply, want) in table {
        assert_eq!(salvage_answer(reply).as_deref(), want, "{reply}");
    }
}

#[test]
fn candidates_are_unique_lines_and_runs() {
    let text = "a = 1\nb = 2\na = 1\n\nc = 3\n";
    let runs = old_string_candidates(text);
    assert!(!runs.contains(&"a = 1".to_string()), "twice in the file");
    assert!(runs.contains(&"b = 2".to_string()));
    assert!(runs.contains(&"a = 1\nb = 2".to_string()));
    assert!(runs.contains(&"c = 3".to_string()));
    assert!(runs.iter().all(|r| !r.trim().is_empty()));
    assert!(runs.iter().all(|r| text.matches(r.as_str()).count() == 1));
}

#[test]
fn the_default_demo_request_admits_only_passing_calls() {
    let plan = plan_for("In settings.py, change TIMEOUT from 30 to 60.");
    let texts = vec![("settings.py".to_string(), SETTINGS.to_string())];
    let s = step(&plan, Phase::Apply, &[], &texts, false);
    every_instance_passes(&plan, Phase::Apply, &texts, &s);
}

const REQUESTS: [&str; 7] = [
    "In {f}, change x from 1 to 5.",
    "In {f}, change the port from 8080 to 9090.",
    "In {f}, change the first value to 7.",
    "Edit {f}: rename the function.",
    "Update {f} so the port is 9090.",
    "What does {f} say about the port?",
    "Fix the typo in {f} but do not touch notes.md.",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every reply the strict schema admits passes the checks for that step.
    #[test]
    fn admitted_replies_pass_the_runtime_checks(
        request in 0..REQUESTS.len(),
        file in prop::sample::select(vec!["settings.py", "src/app.rs", "README.md", "conf/port.toml"]),
        lines in prop::collection::vec(prop::sample::select(vec!["x = 1", "y = 2", "x = 1 ", "", "  indented", "fn main() {}", "\"q\" \\ z", "port = 8080", "x = 10 # 1"]), 1..7),
        answer_allowed in any::<bool>(),
    ) {
        let request = REQUESTS[request].replace("{f}", file);
        let plan = plan_for(&request);
        let text = lines.join("\n") + "\n";
        let texts = vec![(file.to_string(), text)];
        let readable = vec![file.to_string(), ".env".to_string()];
        let phase = plan.initial_phase();
        let s = step(&plan, phase, &readable, &texts, answer_allowed);
        if let Some(schema) = compile(Level::Strict, &s) {
            for instance in instances(&schema) {
                runtime_accepts(&plan, phase, &texts, &instance.to_string());
            }
        }
    }
}

#[test]
fn a_violating_reply_is_still_refused_by_the_checks() {
    // What a server without grammar support might send: the checks do not rely on the schema.
    let plan = plan_for("In settings.py, change TIMEOUT from 30 to 60.");
    let mut args = BTreeMap::new();
    args.insert("path".to_string(), "other.py".to_string());
    args.insert("old_string".to_string(), "x".to_string());
    args.insert("new_string".to_string(), "y".to_string());
    let outcome = check_call(
        "talos.edit_file",
        &args,
        &plan,
        plan.surface(),
        Phase::Apply,
        true,
    );
    assert!(matches!(outcome, CheckOutcome::Rejected { .. }));
}

#[test]
fn a_named_replacement_admits_only_the_old_lines_with_the_replacement_made() {
    let plan = plan_for("In settings.py, change TIMEOUT from 30 to 60.");
    let texts = vec![("settings.py".to_string(), SETTINGS.to_string())];
    let readable = vec!["settings.py".to_string()];
    let known = vec!["settings.py".to_string()];
    let s = Step {
        known: &known,
        ..step(&plan, Phase::Apply, &readable, &texts, false)
    };
    let schema = compile(Level::Strict, &s).expect("a schema");
    assert_eq!(
        instances(&schema),
        [
            json!({"name": "talos.edit_file", "arguments": {"new_string": "TIMEOUT = 60", "old_string": "TIMEOUT = 30", "path": "settings.py"}})
        ],
        "the file is read: no read is admitted, and the edit is the replacement"
    );
    assert!(pins_new_text(Level::Strict, &s, "settings.py"));
    every_instance_passes(&plan, Phase::Apply, &texts, &s);
    // At `names` the new text stays the model's, but the read is still left out.
    let names = compile(Level::Names, &s).expect("a schema").to_string();
    assert!(
        !names.contains("talos.read_file") && names.contains("talos.edit_file"),
        "{names}"
    );
}

#[test]
fn a_question_whose_files_are_read_admits_only_the_answer() {
    let plan = plan_for("What is the value of TIMEOUT in settings.py?");
    let texts = vec![("settings.py".to_string(), SETTINGS.to_string())];
    let readable = vec!["settings.py".to_string()];
    let rows: [(&[String], bool); 2] = [(&[], false), (&readable, true)];
    for (known, answer_only) in rows {
        let s = Step {
            known,
            ..step(&plan, plan.initial_phase(), &readable, &texts, true)
        };
        for level in [Level::Names, Level::Strict] {
            let schema = compile(level, &s).expect("a schema");
            let only_answer =
                schema.get("anyOf").is_none() && schema["required"] == json!(["answer"]);
            assert_eq!(
                only_answer, answer_only,
                "{level:?}, known {known:?}: {schema}"
            );
        }
    }
}

#[test]
fn a_known_file_is_not_read_again_on_the_strict_level() {
    let plan = plan_for("Explain settings.py and README.md");
    let readable = vec!["settings.py".to_string(), "README.md".to_string()];
    let known = vec!["settings.py".to_string()];
    let s = Step {
        known: &known,
        ..step(&plan, plan.initial_phase(), &readable, &[], false)
    };
    let schema = compile(Level::Strict, &s).expect("a schema").to_string();
    assert!(schema.contains(r#"{"enum":["README.md"]}"#), "{schema}");
}

#[test]
fn an_exact_literal_is_the_only_content_a_write_may_carry() {
    let plan = plan_for("Create notes.txt with exactly \"hello world\"");
    let rules = crate::proposal::change_rule::rules(&plan);
    assert!(!rules.is_empty(), "the contract records the literal");
    let s = step(&plan, Phase::Apply, &[], &[], false);
    let schema = compile(Level::Strict, &s).expect("a schema").to_string();
    let crate::request::change::ChangeAsk::Content { content } = &rules[0].ask else {
        panic!("{rules:?}");
    };
    assert!(
        schema.contains(&json!({"const": content}).to_string()),
        "{schema}"
    );
}

/// A new file whose whole content the request gives needs no read: the strict and names levels
/// offer only the change, so a small model cannot spend the turn reading a file not there yet.
#[test]
fn a_file_given_whole_is_written_without_a_read() {
    for request in [
        "Create notes.txt with the content: hello world",
        "Create VERSION containing 2.0.0",
        "Create LICENSE containing MIT",
        "Create .nvmrc containing 20",
        "Create .gitignore with the lines target/ and *.log",
    ] {
        let plan = plan_for(request);
        let s = step(&plan, Phase::Apply, &[], &[], false);
        for level in [Level::Strict, Level::Names] {
            let schema = compile(level, &s).expect("a schema").to_string();
            assert!(
                !schema.contains("talos.read_file") && schema.contains("talos.write_file"),
                "{request}: {schema}"
            );
            // Nor a batch of free objects, a folder or a move: only the write.
            for other in ["apply_workspace_batch", "talos.mkdir", "talos.move_path"] {
                assert!(!schema.contains(other), "{request}: {schema}");
            }
        }
    }
}

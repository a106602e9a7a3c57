//! What the person approves is what they see (issue 18), through the call state machine and
//! the shared pretend daemon (`turn_support`, where files under `shared/` are hard links):
//! the ladder's hard-link rung, a hard-linked read that asks and, denied, gives the model
//! nothing, a path with a hidden character refused before approval (and let through to an
//! approval that warns when the setting allows it), and the screen that adds `warning: `
//! lines to an approval and records them.

use crate::turn_support;

use crate::turn_support::{Reply, check, drive, proposal, row, turn};
use pretty_assertions::assert_eq;
use talos_core::diff;
use talos_core::ladder::{self, Action, Grants, LadderInput, PathFacts};
use talos_core::modes::SessionMode;
use talos_core::rules::{Effect as RuleEffect, Glob, Rule};
use talos_core::tools::ToolId;
use talos_core::turn::call::{ApprovalAsk, Effect};
use talos_core::turn::record::{CallStage, WarningCode};

fn linked(relative: &str, hard_links: u64) -> PathFacts {
    PathFacts {
        relative: Some(relative.into()),
        escapes: false,
        problem: None,
        protected: talos_core::protected::protected_kind(relative),
        hard_links,
    }
}

/// Proves a read of a regular file with more than one link asks (whatever an allow rule
/// says), a listing or a write of it does not take that rung, a protected path keeps its own
/// rung, and a deny rule still wins.
#[test]
fn the_hard_link_rung() {
    let allow_all = [Rule {
        effect: RuleEffect::Allow,
        tools: vec![],
        mcp_tools: Vec::new(),
        risks: vec![],
        phases: vec![],
        paths: vec![Glob::new("**").unwrap_or_else(|e| panic!("{e}"))],
        within_workspace: None,
        reason: "everything".into(),
    }];
    let deny_notes = [Rule {
        effect: RuleEffect::Deny,
        paths: vec![Glob::new("notes.txt").unwrap_or_else(|e| panic!("{e}"))],
        reason: "no notes".into(),
        ..allow_all[0].clone()
    }];
    let rows: [(&str, ToolId, PathFacts, &[Rule], Action, &str); 7] = [
        (
            "one link",
            ToolId::ReadFile,
            linked("notes.txt", 1),
            &[],
            Action::Allow,
            "DEFAULT_READ_ALLOW",
        ),
        (
            "two links",
            ToolId::ReadFile,
            linked("notes.txt", 2),
            &[],
            Action::Ask,
            "HARD_LINK_ASK",
        ),
        (
            "an allow rule",
            ToolId::ReadFile,
            linked("notes.txt", 3),
            &allow_all,
            Action::Ask,
            "HARD_LINK_ASK",
        ),
        (
            "a deny rule",
            ToolId::ReadFile,
            linked("notes.txt", 2),
            &deny_notes,
            Action::Deny,
            "CONFIG_DENY",
        ),
        (
            "protected",
            ToolId::ReadFile,
            linked(".env", 2),
            &[],
            Action::Ask,
            "PROTECTED_PATH_ASK",
        ),
        (
            "a listing",
            ToolId::ListDir,
            linked("notes.txt", 2),
            &[],
            Action::Allow,
            "DEFAULT_READ_ALLOW",
        ),
        (
            "a write",
            ToolId::WriteFile,
            linked("notes.txt", 2),
            &[],
            Action::Ask,
            "DEFAULT_WRITE_ASK",
        ),
    ];
    for (what, tool, facts, rules, action, code) in rows {
        let input = LadderInput {
            rules,
            ..LadderInput::plain(tool, tool.risk(), Grants::default())
        };
        let decision = ladder::decide(&input, &facts);
        assert_eq!(
            (decision.action, decision.reason_code.as_str()),
            (action, code),
            "{what}"
        );
        if code == "HARD_LINK_ASK" {
            assert!(
                decision.message.contains("hard link") && !decision.remember_eligible,
                "{what}: {}",
                decision.message
            );
        }
    }
}

/// Proves a hard-linked read asks with the reason in the approval and, denied, nothing is
/// read and the loop stops.
#[test]
fn a_hard_linked_read_asks_and_denied_reads_nothing() {
    let mut t = turn(
        "What is in shared/notes.txt?",
        SessionMode::Agent,
        Grants::default(),
    );
    let read = proposal("talos.read_file", &[("path", "shared/notes.txt")]);
    let mut call = t.propose(read.clone());
    let effect = call.step(&mut t, talos_core::turn::call::Input::Start);
    assert!(matches!(effect, Effect::Resolve(_)), "{effect:?}");
    let effect = call.step(&mut t, turn_support::answer(&Reply::Paths, &effect));
    let Effect::Ask(ask) = effect else {
        panic!("expected an approval, got {effect:?}")
    };
    assert_eq!(ask.description, "protected read: talos.read_file");
    assert!(
        ask.details.iter().any(|d| d.starts_with("permission: ")
            && d.contains("it is a hard link (2 names share its bytes)")),
        "{:?}",
        ask.details
    );
    let mut denied = row(
        "a denied hard-linked read",
        "What is in shared/notes.txt?",
        read,
    );
    denied.script = vec![Reply::Paths, Reply::Deny];
    denied.effects = &["resolve", "ask", "finish"];
    denied.says = "User did not approve";
    denied.stops = true;
    denied.holds = |t| {
        if t.record().facts.read_denied && t.record().executions.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "read_denied {} executions {:?}",
                t.record().facts.read_denied,
                t.record().executions
            ))
        }
    };
    check(denied, Grants::default());
}

/// Proves an approved hard-linked read is kept from the answer like a protected one.
#[test]
fn an_approved_hard_linked_read_is_guarded_like_a_protected_one() {
    let mut approved = row(
        "an approved hard-linked read",
        "What is in shared/notes.txt?",
        proposal("talos.read_file", &[("path", "shared/notes.txt")]),
    );
    approved.script = vec![
        Reply::Paths,
        Reply::Approve,
        Reply::Output("1 | API_KEY=sk-live-123456\n"),
    ];
    approved.effects = &["resolve", "ask", "read", "finish"];
    approved.says = "API_KEY";
    approved.holds = |t| {
        if t.record().protected_lines == ["API_KEY=sk-live-123456"] {
            Ok(())
        } else {
            Err(format!("protected lines {:?}", t.record().protected_lines))
        }
    };
    check(approved, Grants::default());
}

/// Proves a path with a right-to-left override is refused before anything is resolved or
/// asked, the record shows it escaped, and the setting lets it through to an approval that
/// warns about the target.
#[test]
fn a_path_with_a_hidden_character_is_refused_before_approval() {
    let request = "Write a short greeting into a new file.";
    let write = proposal(
        "talos.write_file",
        &[("path", "notes\u{202E}txt.sh"), ("content", "hello\n")],
    );
    let mut refused = row("refused", request, write.clone());
    refused.effects = &["finish"];
    refused.says = "path `notes\\u{202e}txt.sh` contains a right-to-left override (U+202E)";
    refused.holds = |t| {
        let call = t.record().tool_calls.last().ok_or("no call recorded")?;
        let ok = call.stage == CallStage::Rejected
            && call.path_hint.as_deref() == Some("notes\\u{202e}txt.sh")
            && call
                .rejection
                .as_deref()
                .is_some_and(|r| r.starts_with("validation: path `notes\\u{202e}txt.sh`"));
        if ok { Ok(()) } else { Err(format!("{call:?}")) }
    };
    check(refused, Grants::default());

    let mut allowed = turn(request, SessionMode::Agent, Grants::default());
    allowed.settings.allow_invisible_path_characters = true;
    let (seen, _) = drive(
        &mut allowed,
        write,
        &[Reply::Paths, Reply::Current(None), Reply::Deny],
    );
    assert_eq!(seen, ["resolve", "current", "ask", "finish"]);
}

/// Proves the screen appends the warnings to the approval's details and records each in the
/// turn's warnings, and leaves a clean approval alone.
#[test]
fn the_screen_warns_in_the_details_and_the_record() {
    let mut t = turn("Create a.rs.", SessionMode::Agent, Grants::default());
    let mut ask = ApprovalAsk {
        tool: ToolId::WriteFile.name().into(),
        description: "write operation: talos.write_file".into(),
        target: Some("a.rs".into()),
        details: vec!["target: a.rs (40 bytes, 2 lines)".into()],
        diff: Some(diff::preview(
            None,
            "fn main() {}\nif admin \u{202E} } \u{2066}{ return; }\n",
        )),
        change: None,
        remember_eligible: true,
    };
    let clean = ApprovalAsk {
        diff: Some(diff::preview(None, "fn main() {}\n")),
        ..ask.clone()
    };
    assert_eq!(t.screen_approval(&mut ask), 2);
    assert_eq!(
        ask.details,
        [
            "target: a.rs (40 bytes, 2 lines)",
            "warning: this change contains a right-to-left override (U+202E) at line 2",
            "warning: this change contains a left-to-right isolate (U+2066) at line 2",
        ]
    );
    let recorded: Vec<(&str, &str)> = t
        .record()
        .warnings
        .iter()
        .map(|w| (w.code.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        recorded,
        [
            (
                "DECEPTIVE_TEXT_IN_APPROVAL",
                "talos.write_file approval: this change contains a right-to-left override (U+202E) at line 2"
            ),
            (
                "DECEPTIVE_TEXT_IN_APPROVAL",
                "talos.write_file approval: this change contains a left-to-right isolate (U+2066) at line 2"
            ),
        ]
    );
    let mut clean = clean;
    assert_eq!(t.screen_approval(&mut clean), 0);
    assert_eq!(clean.details, ["target: a.rs (40 bytes, 2 lines)"]);
    assert_eq!(
        t.record()
            .warnings
            .iter()
            .filter(|w| w.code == WarningCode::DeceptiveTextInApproval)
            .count(),
        2
    );
}

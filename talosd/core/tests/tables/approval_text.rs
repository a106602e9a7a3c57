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
        // The line, and the value it assigns (withheld wherever it is quoted).
        if t.record().protected_lines == ["API_KEY=sk-live-123456", "sk-live-123456"] {
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

/// The approval a call asks for, the replies before it answering its earlier effects.
fn asked_for(
    t: &mut talos_core::turn::Turn,
    call: talos_core::turn::call::Proposal,
    replies: &[Reply],
) -> ApprovalAsk {
    let mut call = t.propose(call);
    let mut input = talos_core::turn::call::Input::Start;
    let mut replies = replies.iter();
    loop {
        match call.step(t, input) {
            Effect::Ask(ask) => return ask,
            Effect::Finish(report) => panic!("finished without asking: {}", report.text),
            effect => {
                let reply = replies
                    .next()
                    .unwrap_or_else(|| panic!("no reply for {effect:?}"));
                input = turn_support::answer(reply, &effect);
            }
        }
    }
}

const TWELVE: &str =
    "A = 1\nB = 2\nC = 3\nD = 4\nE = 5\nF = 6\nG = 7\nH = 8\nI = 9\nJ = 10\nK = 11\nTIMEOUT = 30\n";

/// Proves an approval whose change removes more than half of an existing file's lines says so
/// first, with the request's rule (else its first line), and a small change says nothing.
#[test]
fn an_approval_that_removes_most_of_a_file_says_so_first() {
    let write = |content: &'static str| {
        proposal(
            "talos.write_file",
            &[("path", "settings.py"), ("content", content)],
        )
    };
    let edit = |old: &'static str, new: &'static str| {
        proposal(
            "talos.edit_file",
            &[
                ("path", "settings.py"),
                ("old_string", old),
                ("new_string", new),
            ],
        )
    };
    let read = || proposal("talos.read_file", &[("path", "settings.py")]);
    // (what, request, call, file before, the first detail, or None for no note)
    type Make = Box<dyn Fn() -> talos_core::turn::call::Proposal>;
    let rows: Vec<(&str, &str, Make, &'static str, Option<&str>)> = vec![
        (
            "a whole-file write of one line over twelve, no rule: the request's first line",
            "Rewrite settings.py so TIMEOUT is 60\nand keep it short",
            Box::new(move || write("temporary file with default size of 10MB\n")),
            TWELVE,
            Some(
                "replaces all 12 lines of settings.py; the request: \"Rewrite settings.py so TIMEOUT is 60\"",
            ),
        ),
        (
            "an edit that removes most lines names the request's rule",
            "In settings.py, change TIMEOUT from 30 to 60.",
            Box::new(move || edit("A = 1\nTIMEOUT = 30\nB = 2", "TIMEOUT = 60")),
            "A = 1\nTIMEOUT = 30\nB = 2\n",
            Some(
                "replaces all 3 lines of settings.py; the request asked to change TIMEOUT from 30 to 60 in settings.py",
            ),
        ),
        (
            "a write that removes seven of twelve lines",
            "Rewrite settings.py so TIMEOUT is 60",
            Box::new(move || write("A = 1\nB = 2\nC = 3\nD = 4\nE = 5\n")),
            TWELVE,
            Some(
                "removes 7 of the 12 lines of settings.py; the request: \"Rewrite settings.py so TIMEOUT is 60\"",
            ),
        ),
        (
            "a small edit says nothing more",
            "In settings.py, change TIMEOUT from 30 to 60.",
            Box::new(move || edit("TIMEOUT = 30", "TIMEOUT = 60")),
            TWELVE,
            None,
        ),
    ];
    for (what, request, call, before, note) in rows {
        let mut t = turn(request, SessionMode::Agent, Grants::default());
        drive(&mut t, read(), &[Reply::Paths, Reply::Output(before)]);
        let ask = asked_for(
            &mut t,
            call(),
            &[Reply::Paths, Reply::Current(Some(before))],
        );
        let first = ask.details.first().map(String::as_str);
        match note {
            Some(note) => assert_eq!(first, Some(note), "{what}: {:?}", ask.details),
            None => assert!(
                !ask.details
                    .iter()
                    .any(|d| d.contains(" lines of settings.py;")),
                "{what}: {:?}",
                ask.details
            ),
        }
    }
}

/// Proves a whole-file write of an existing file the request asked a small change of is
/// refused before approval, read or not, with the way to make the change; a new file and an
/// exact literal are not.
#[test]
fn a_whole_file_write_of_a_small_change_is_refused_before_approval() {
    let write = proposal(
        "talos.write_file",
        &[("path", "settings.py"), ("content", "TIMEOUT = 60\n")],
    );
    let mut refused = row(
        "a whole-file write where a small change was asked",
        "In settings.py, change TIMEOUT from 30 to 60.",
        write.clone(),
    );
    refused.script = vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 30\n"))];
    refused.effects = &["resolve", "current", "finish"];
    refused.says = "settings.py already exists and the request asked for a small change to it (change TIMEOUT from 30 to 60 in settings.py). Make that change with talos.edit_file";
    check(refused, Grants::default());
    let mut read_first = row(
        "read first, the same refusal",
        "In settings.py, change TIMEOUT from 30 to 60.",
        write.clone(),
    );
    read_first.before = vec![crate::turn_support::read_settings()];
    read_first.script = vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 30\n"))];
    read_first.effects = &["resolve", "current", "finish"];
    read_first.says = "a whole-file talos.write_file of settings.py is refused";
    check(read_first, Grants::default());
    let mut exact = row(
        "an exact literal is a whole-file write by design",
        "Overwrite settings.py with exactly: TIMEOUT = 60",
        write,
    );
    exact.before = vec![crate::turn_support::read_settings()];
    exact.script = vec![
        Reply::Paths,
        Reply::Current(Some("TIMEOUT = 30\n")),
        Reply::Deny,
    ];
    exact.effects = &["resolve", "current", "ask", "finish"];
    exact.says = "User did not approve";
    exact.stops = true;
    exact.stop_says = "not approved";
    check(exact, Grants::default());
}

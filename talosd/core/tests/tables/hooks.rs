//! `pre_call` hooks narrow and never widen (issue 28), one row per rule, through the call
//! state machine and the shared pretend daemon: after the ladder, each hook is asked; `allow`
//! keeps an ask the ladder requires; `ask` makes an allowed read (or a remembered write) ask;
//! `deny`, a crash, a timeout or bad output denies with nothing written; a call the ladder
//! denies never reaches the hooks. Every verdict is in the record.

use crate::turn_support::{EDIT, Reply, drive, edit_settings, plan_for, proposal, settings};
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::turn::Turn;
use talos_core::turn::call::Effect;

fn hooked_turn(request: &str, hooks: usize, grants: Grants) -> Turn {
    let mode = SessionMode::Agent;
    let settings = talos_core::turn::TurnSettings {
        pre_call_hooks: hooks,
        ..settings(mode)
    };
    Turn::new(
        plan_for(talos_core::contract::resolve(request), mode),
        settings,
        grants,
    )
}

struct HookRow {
    what: &'static str,
    request: &'static str,
    hooks: usize,
    grants: Grants,
    call: talos_core::turn::call::Proposal,
    script: Vec<Reply>,
    effects: &'static [&'static str],
    says: &'static str,
    /// The record's hook verdicts, in order.
    verdicts: &'static [&'static str],
    /// The permission the record keeps for the call.
    reason_code: &'static str,
}

const ALLOW: &str = r#"{"decision":"allow"}"#;
const ASK: &str = r#"{"decision":"ask","reason":"reads of config need a look"}"#;
const DENY: &str = r#"{"decision":"deny","reason":"no edits on Fridays"}"#;
const QUESTION: &str = "What does settings.py do?";

fn read() -> talos_core::turn::call::Proposal {
    proposal("talos.read_file", &[("path", "settings.py")])
}

/// Proves each row: the effects in order, what the model is told, and the records.
#[test]
fn every_hook_rule_holds() {
    let remembered = Grants {
        remember_writes: true,
    };
    let rows = vec![
        HookRow {
            what: "allow never skips the ask the ladder requires",
            request: EDIT,
            hooks: 1,
            grants: Grants::default(),
            call: edit_settings(),
            script: vec![
                Reply::Paths,
                Reply::Hooks(&[ALLOW]),
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Deny,
            ],
            effects: &["resolve", "pre-call", "current", "ask", "finish"],
            says: "User did not approve",
            verdicts: &["allow"],
            reason_code: "DEFAULT_WRITE_ASK",
        },
        HookRow {
            what: "ask makes an allowed read ask, and a denial reads nothing",
            request: QUESTION,
            hooks: 1,
            grants: Grants::default(),
            call: read(),
            script: vec![Reply::Paths, Reply::Hooks(&[ASK]), Reply::Deny],
            effects: &["resolve", "pre-call", "ask", "finish"],
            says: "",
            verdicts: &["ask"],
            reason_code: "HOOK_ASK",
        },
        HookRow {
            what: "ask is not answered by a remembered write grant",
            request: EDIT,
            hooks: 1,
            grants: remembered,
            call: edit_settings(),
            script: vec![
                Reply::Paths,
                Reply::Hooks(&[ASK]),
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Deny,
            ],
            effects: &["resolve", "pre-call", "current", "ask", "finish"],
            says: "User did not approve",
            verdicts: &["ask"],
            reason_code: "HOOK_ASK",
        },
        HookRow {
            what: "one deny among allows denies, with nothing written",
            request: EDIT,
            hooks: 2,
            grants: Grants::default(),
            call: edit_settings(),
            script: vec![Reply::Paths, Reply::Hooks(&[ALLOW, DENY])],
            effects: &["resolve", "pre-call", "finish"],
            says: "hooks.pre_call[1] denied: no edits on Fridays",
            verdicts: &["allow", "deny"],
            reason_code: "HOOK_DENY",
        },
        HookRow {
            what: "a crashed hook denies",
            request: QUESTION,
            hooks: 1,
            grants: Grants::default(),
            call: read(),
            script: vec![Reply::Paths, Reply::Hooks(&["!exited with status 2"])],
            effects: &["resolve", "pre-call", "finish"],
            says: "hooks.pre_call[0] failed, which denies: exited with status 2",
            verdicts: &["deny"],
            reason_code: "HOOK_DENY",
        },
        HookRow {
            what: "output that is not one JSON object denies",
            request: QUESTION,
            hooks: 1,
            grants: Grants::default(),
            call: read(),
            script: vec![Reply::Paths, Reply::Hooks(&["sure, go ahead"])],
            effects: &["resolve", "pre-call", "finish"],
            says: "which denies: answered something that is not one JSON object",
            verdicts: &["deny"],
            reason_code: "HOOK_DENY",
        },
        HookRow {
            what: "a hook the daemon did not report on denies",
            request: QUESTION,
            hooks: 2,
            grants: Grants::default(),
            call: read(),
            script: vec![Reply::Paths, Reply::Hooks(&[ALLOW])],
            effects: &["resolve", "pre-call", "finish"],
            says: "hooks.pre_call[1] failed, which denies: no answer was reported",
            verdicts: &["allow", "deny"],
            reason_code: "HOOK_DENY",
        },
        HookRow {
            what: "a call the ladder denies never reaches the hooks",
            request: QUESTION,
            hooks: 1,
            grants: Grants::default(),
            call: proposal("talos.read_file", &[("path", "link/secret")]),
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            says: "Permission policy denied",
            verdicts: &[],
            reason_code: "WORKSPACE_ESCAPE",
        },
        HookRow {
            what: "an allowed read with allowing hooks reads",
            request: QUESTION,
            hooks: 1,
            grants: Grants::default(),
            call: read(),
            script: vec![
                Reply::Paths,
                Reply::Hooks(&[ALLOW]),
                Reply::Output("1 | TIMEOUT = 30"),
            ],
            effects: &["resolve", "pre-call", "read", "finish"],
            says: "TIMEOUT = 30",
            verdicts: &["allow"],
            reason_code: "DEFAULT_READ_ALLOW",
        },
    ];
    for row in rows {
        let mut turn = hooked_turn(row.request, row.hooks, row.grants);
        let (seen, last) = drive(&mut turn, row.call, &row.script);
        let Effect::Finish(report) = last else {
            unreachable!()
        };
        assert_eq!(seen, row.effects, "{}: {:?}", row.what, report.text);
        assert!(
            report.text.contains(row.says),
            "{}: {:?} lacks {:?}",
            row.what,
            report.text,
            row.says
        );
        assert!(!report.mutated, "{}: nothing is written", row.what);
        let record = turn.record();
        let verdicts: Vec<&str> = record.hooks.iter().map(|h| h.decision.as_str()).collect();
        assert_eq!(verdicts, row.verdicts, "{}", row.what);
        let permission = record
            .permission_decisions
            .last()
            .map(|p| p.reason_code.as_str());
        assert_eq!(permission, Some(row.reason_code), "{}", row.what);
    }
}

/// With no hooks configured, no call asks for them (no extra round trip).
#[test]
fn without_hooks_no_pre_call_effect_is_asked() {
    let mut turn = hooked_turn(QUESTION, 0, Grants::default());
    let (seen, _) = drive(
        &mut turn,
        read(),
        &[Reply::Paths, Reply::Output("1 | TIMEOUT = 30")],
    );
    assert_eq!(seen, ["resolve", "read", "finish"]);
    assert!(turn.record().hooks.is_empty());
}

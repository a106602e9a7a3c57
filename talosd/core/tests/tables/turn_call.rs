//! More of the call state machine's rules, one row each, through the shared pretend daemon
//! (`turn_support`): loop discipline across calls (a repeated broken payload, a denied change,
//! a failed edit), the write flow's sanitising and read-back check, workspace batches and
//! their denial, command output and how a run ended, protected paths in the record,
//! cancellation before a checkpoint, a daemon that breaks the protocol, and the read-only
//! posture.

use crate::turn_support;

use crate::turn_support::{
    EDIT, Reply, Row, check, edit_settings, has_warning, proposal, read_settings, row,
};
use talos_core::ladder::Grants;
use talos_core::modes::SessionMode;
use talos_core::outcome::MutationResult;
use talos_core::turn::Turn;
use talos_core::turn::call::{Effect, Input, Proposal};
use talos_core::turn::record::{CallStage, CheckStatus, Decision, WarningCode};

/// A proposal whose arguments could not be read.
fn broken_payload() -> Proposal {
    Proposal {
        args: Err("expected value at line 1 column 1".into()),
        ..proposal("talos.read_file", &[])
    }
}

/// An edit whose old text is not in the file the pretend daemon shows (`TIMEOUT = 45`).
fn failing_edit() -> (Proposal, Vec<Reply>) {
    (
        edit_settings(),
        vec![Reply::Paths, Reply::Current(Some("TIMEOUT = 45\n"))],
    )
}

fn edit_from_45() -> Proposal {
    proposal(
        "talos.edit_file",
        &[
            ("path", "settings.py"),
            ("old_string", "TIMEOUT = 45"),
            ("new_string", "TIMEOUT = 60"),
        ],
    )
}

fn denied_edit() -> (Proposal, Vec<Reply>) {
    (
        edit_settings(),
        vec![
            Reply::Paths,
            Reply::Current(Some("TIMEOUT = 30\n")),
            Reply::Deny,
        ],
    )
}

const CREATE: &str = "Create app.py with a function f that returns 1.";
const MOVE: &str = "Move a.txt to b.txt.";
const BATCH: &str = "Use apply_workspace_batch to mkdir docs and mkdir build.";
const RUN: &str = "Run the cargo_test command profile.";
const QUESTION: &str = "What does settings.py do?";

fn move_a() -> Proposal {
    proposal("talos.move_path", &[("from", "a.txt"), ("to", "b.txt")])
}

fn run_tests() -> Proposal {
    proposal("talos.run_command", &[("profile", "cargo_test")])
}

/// The script of an approved cargo_test run that ends with `ran`.
fn approved_run(ran: Reply) -> Vec<Reply> {
    vec![
        Reply::Paths,
        Reply::Planned("cargo_test"),
        Reply::Approve,
        ran,
    ]
}

const RUN_EFFECTS: &[&str] = &["resolve", "plan-command", "ask", "run-command", "finish"];

fn last_path_hint_is_hidden(turn: &Turn) -> Result<(), String> {
    let hint = turn
        .record()
        .tool_calls
        .last()
        .and_then(|c| c.path_hint.clone());
    if hint.as_deref() == Some("<protected-path>") {
        Ok(())
    } else {
        Err(format!("path hint {hint:?}"))
    }
}

fn last_mutation_is(turn: &Turn, target: &str, failed: bool) -> Result<(), String> {
    let last = turn.record().facts.mutations.last();
    let ok = last.is_some_and(|m| {
        m.target == target
            && if failed {
                matches!(m.result, MutationResult::Failed { .. })
            } else {
                m.result == MutationResult::Denied
            }
    });
    if ok {
        Ok(())
    } else {
        Err(format!("last mutation {last:?}"))
    }
}

fn nothing_changed(turn: &Turn) -> Result<(), String> {
    let f = turn.record();
    let changes = f.executions.iter().any(|e| e.tool.mutates());
    if f.facts.mutations.is_empty() && !changes && f.checkpoints.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "mutations {:?}, executions {:?}, checkpoints {:?}",
            f.facts.mutations, f.executions, f.checkpoints
        ))
    }
}

/// Proves each rule below, one row per rule, through the pretend daemon.
#[test]
fn every_further_call_rule_holds() {
    let rows = vec![
        Row {
            says: "Invalid tool-call payload",
            before: vec![(broken_payload(), Vec::new())],
            effects: &["finish"],
            stops: true,
            stop_says: "repeated a call that had already been refused",
            holds: |t| {
                t.record()
                    .facts
                    .malformed_tool_call
                    .then_some(())
                    .ok_or_else(|| "malformed_tool_call not set".into())
            },
            ..row(
                "a broken payload proposed again stops the loop",
                EDIT,
                broken_payload(),
            )
        },
        Row {
            says: "[error] cannot make an unguessable id; nothing was done",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Failed("cannot make an unguessable id"),
            ],
            effects: &["resolve", "current", "ask", "finish"],
            stops: true,
            stop_says: "could not carry out a step",
            holds: |t| {
                nothing_changed(t)?;
                match t.record().tool_calls.last() {
                    Some(c) if c.stage == CallStage::Failed => Ok(()),
                    other => Err(format!("last call {other:?}")),
                }
            },
            ..row(
                "an approval the daemon cannot ask ends the call with nothing written",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "already denied this talos.edit_file call in this turn; it is not asked again",
            before: vec![read_settings(), denied_edit()],
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            holds: |t| match t.record().approvals.as_slice() {
                [only] if only.answer.decision == Decision::Deny => Ok(()),
                other => Err(format!("approvals {other:?}")),
            },
            ..row(
                "a change the person denied is not asked again",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "The previous edit of settings.py failed. Call talos.read_file on settings.py",
            before: vec![read_settings(), failing_edit()],
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            ..row(
                "after a failed edit, another edit of the file needs a fresh read",
                EDIT,
                edit_from_45(),
            )
        },
        Row {
            says: "[verification: PASS]",
            before: vec![read_settings(), failing_edit(), read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 45\n")),
                Reply::Approve,
                Reply::Checkpoint,
                Reply::Written,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            ..row(
                "after a failed edit and a fresh read, the next edit proceeds",
                EDIT,
                edit_from_45(),
            )
        },
        Row {
            says: "",
            before: vec![read_settings(), failing_edit()],
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            stops: true,
            stop_says: "repeated a talos.edit_file call that had already failed",
            ..row(
                "repeating the very edit that failed stops the loop",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "[verification: PASS]",
            script: vec![
                Reply::Paths,
                Reply::Current(None),
                Reply::Approve,
                Reply::Checkpoint,
                Reply::Written,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            mutated: true,
            holds: |t| has_warning(t, WarningCode::ToolContentSanitized),
            ..row(
                "commentary after the code is removed before approval, and recorded",
                CREATE,
                proposal(
                    "talos.write_file",
                    &[
                        ("path", "app.py"),
                        (
                            "content",
                            "def f():\n    return 1\n\nThis code defines f, which returns one.\n",
                        ),
                    ],
                ),
            )
        },
        Row {
            says: "File verification failed",
            script: vec![
                Reply::Paths,
                Reply::Current(None),
                Reply::Approve,
                Reply::Checkpoint,
                Reply::WrittenAs(b"def f():\n    return 2\n"),
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "write", "finish"],
            stops: true,
            holds: |t| match t.record().verification.last() {
                Some(v) if v.status == CheckStatus::IntegrityFail => {
                    last_mutation_is(t, "app.py", true)
                }
                other => Err(format!("verification {other:?}")),
            },
            ..row(
                "a read-back that differs from the approval is an INTEGRITY_FAIL and stops",
                CREATE,
                proposal(
                    "talos.write_file",
                    &[("path", "app.py"), ("content", "def f():\n    return 1\n")],
                ),
            )
        },
        Row {
            says: "Batch partially applied. Applied: created docs. Failed: operation 2: build exists. The checkpoint holds the state before the batch.",
            script: vec![
                Reply::Paths,
                Reply::OpsOk,
                Reply::Approve,
                Reply::Checkpoint,
                Reply::OpsApplied(&[Ok("created docs"), Err("build exists")]),
            ],
            effects: &[
                "resolve",
                "check-ops",
                "ask",
                "checkpoint",
                "apply-ops",
                "finish",
            ],
            stops: true,
            holds: |t| {
                let results: Vec<&MutationResult> = t
                    .record()
                    .facts
                    .mutations
                    .iter()
                    .map(|m| &m.result)
                    .collect();
                match results.as_slice() {
                    [
                        MutationResult::Succeeded { verified: true },
                        MutationResult::Failed { .. },
                    ] => Ok(()),
                    other => Err(format!("mutations {other:?}")),
                }
            },
            ..row(
                "a batch that fails part-way says what was applied and stops",
                BATCH,
                proposal(
                    "talos.apply_workspace_batch",
                    &[(
                        "operations",
                        r#"[{"op":"mkdir","path":"docs"},{"op":"mkdir","path":"build"}]"#,
                    )],
                ),
            )
        },
        Row {
            says: "User did not approve the talos.move_path call. Target path: `a.txt`. Nothing was changed.",
            script: vec![Reply::Paths, Reply::OpsOk, Reply::Deny],
            effects: &["resolve", "check-ops", "ask", "finish"],
            stops: true,
            stop_says: "the requested change was not approved",
            holds: |t| last_mutation_is(t, "a.txt", false),
            ..row(
                "a denied workspace operation changes nothing and stops",
                MOVE,
                move_a(),
            )
        },
        Row {
            says: "output withheld from the model",
            script: approved_run(Reply::RanAs(0, false, false, "DB_PASSWORD=hunter2hunter2")),
            effects: RUN_EFFECTS,
            holds: |t| match t.record().commands.last() {
                Some(c) if c.redaction_applied && c.withheld_from_model => Ok(()),
                other => Err(format!("command {other:?}")),
            },
            ..row(
                "command output that needed redaction is withheld from the model",
                RUN,
                run_tests(),
            )
        },
        Row {
            says: "Command timed out: cargo_test after 5ms (process tree killed).",
            script: approved_run(Reply::RanAs(1, true, false, "")),
            effects: RUN_EFFECTS,
            holds: |t| {
                t.record()
                    .facts
                    .command_failed
                    .then_some(())
                    .ok_or_else(|| "command_failed not set".into())
            },
            ..row(
                "a run that timed out says so and counts as failed",
                RUN,
                run_tests(),
            )
        },
        Row {
            says: "Command cancelled: cargo_test after 5ms (process tree killed).",
            script: approved_run(Reply::RanAs(1, false, true, "")),
            effects: RUN_EFFECTS,
            stops: true,
            stop_says: "[Tool loop stopped: the command was cancelled.]",
            ..row(
                "a cancelled run says so and stops the loop",
                RUN,
                run_tests(),
            )
        },
        Row {
            says: "Current-turn tool surface did not allow talos.write_file",
            effects: &["finish"],
            holds: last_path_hint_is_hidden,
            ..row(
                "a protected path is recorded as <protected-path> when a check rejects the call",
                QUESTION,
                proposal("talos.write_file", &[("path", ".env"), ("content", "x")]),
            )
        },
        Row {
            says: "User did not approve the talos.read_file call",
            script: vec![Reply::Paths, Reply::Deny],
            effects: &["resolve", "ask", "finish"],
            stops: true,
            holds: last_path_hint_is_hidden,
            ..row(
                "a protected path is recorded as <protected-path> when the read is denied",
                "Show me .env",
                proposal("talos.read_file", &[("path", ".env")]),
            )
        },
        Row {
            says: "the turn was cancelled before the write",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Approve,
                Reply::Cancelled,
            ],
            effects: &["resolve", "current", "ask", "checkpoint", "finish"],
            stops: true,
            holds: |t| last_mutation_is(t, "settings.py", true),
            ..row(
                "a turn cancelled before the checkpoint writes nothing and stops",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "the turn was cancelled before the change",
            script: vec![Reply::Paths, Reply::OpsOk, Reply::Approve, Reply::Cancelled],
            effects: &["resolve", "check-ops", "ask", "checkpoint", "finish"],
            stops: true,
            holds: |t| last_mutation_is(t, "a.txt", true),
            ..row(
                "a turn cancelled before an operation's checkpoint applies nothing and stops",
                MOVE,
                move_a(),
            )
        },
        Row {
            says: "unexpected step input Done; nothing was done",
            script: vec![Reply::Ack],
            effects: &["resolve", "finish"],
            stops: true,
            stop_says: "[Tool loop stopped: internal error.]",
            holds: nothing_changed,
            ..row(
                "an answer that does not fit the resolve effect fails closed",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "unexpected step input Output",
            before: vec![read_settings()],
            script: vec![
                Reply::Paths,
                Reply::Current(Some("TIMEOUT = 30\n")),
                Reply::Output("approved"),
            ],
            effects: &["resolve", "current", "ask", "finish"],
            stops: true,
            stop_says: "[Tool loop stopped: internal error.]",
            holds: nothing_changed,
            ..row(
                "an answer that does not fit the approval fails closed: nothing is written",
                EDIT,
                edit_settings(),
            )
        },
        Row {
            says: "unexpected step input Output",
            script: vec![Reply::Paths, Reply::Output("API_KEY=abcdefgh1234")],
            effects: &["resolve", "ask", "finish"],
            stops: true,
            holds: nothing_changed,
            ..row(
                "output offered before a protected read was approved fails closed",
                "Show me .env",
                proposal("talos.read_file", &[("path", ".env")]),
            )
        },
        Row {
            says: "unexpected step input Done",
            script: vec![Reply::Paths, Reply::Ack],
            effects: &["resolve", "plan-command", "finish"],
            stops: true,
            holds: |t| {
                if t.record().commands.is_empty() {
                    Ok(())
                } else {
                    Err(format!("commands {:?}", t.record().commands))
                }
            },
            ..row(
                "an answer that does not fit the command plan fails closed: nothing runs",
                RUN,
                run_tests(),
            )
        },
        Row {
            says: "Current-turn tool surface did not allow talos.edit_file",
            mode: SessionMode::Ask,
            effects: &["finish"],
            holds: |t| {
                let f = &t.record().facts;
                if f.read_only_blocked && f.mutations.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "read_only_blocked {}, mutations {:?}",
                        f.read_only_blocked, f.mutations
                    ))
                }
            },
            ..row(
                "ask mode's read-only posture blocks a write before any IO",
                EDIT,
                edit_settings(),
            )
        },
    ];
    for r in rows {
        check(r, Grants::default());
    }
}

/// Proves a call that already finished answers any further input by failing closed.
#[test]
fn a_finished_call_stepped_again_fails_closed() {
    let mut turn = turn_support::turn(EDIT, SessionMode::Agent, Grants::default());
    let mut call = turn.propose(broken_payload());
    let first = call.step(&mut turn, Input::Start);
    assert!(matches!(first, Effect::Finish(_)), "{first:?}");
    let Effect::Finish(report) = call.step(&mut turn, Input::Done) else {
        panic!("a finished call asked for more")
    };
    assert!(
        report.text.contains("unexpected step input Done"),
        "{report:?}"
    );
    assert_eq!(
        report.stop.as_deref(),
        Some("[Tool loop stopped: internal error.]")
    );
}

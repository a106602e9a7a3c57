//! Rows for the ACP mapping: tool kinds, call states, permissions, stop reasons, plans.

use super::*;
use agent_client_protocol_schema::v1::SelectedPermissionOutcome;
use serde_json::json;
use talos_protocol::{FileResult, ProposedChange};

fn outcome(status: CompletionStatus, classification: Classification) -> TurnOutcome {
    TurnOutcome {
        turn_id: "turn-1".into(),
        status,
        classification,
        final_answer: "done".into(),
        trace_id: "trc-1".into(),
        trace_path: None,
        files: vec![FileResult {
            path: "settings.py".into(),
            changed: true,
            detail: "Edited (13 bytes, +1 -1), verified".into(),
        }],
    }
}

#[test]
fn every_talos_tool_has_its_acp_kind() {
    let rows = [
        ("talos.read_file", ToolKind::Read),
        ("talos.list_dir", ToolKind::Read),
        ("read_file", ToolKind::Read),
        ("talos.grep", ToolKind::Search),
        ("talos.search", ToolKind::Search),
        ("talos.edit_file", ToolKind::Edit),
        ("talos.write_file", ToolKind::Edit),
        ("talos.mkdir", ToolKind::Edit),
        ("talos.copy_path", ToolKind::Edit),
        ("talos.apply_workspace_batch", ToolKind::Edit),
        ("talos.delete_path", ToolKind::Delete),
        ("talos.move_path", ToolKind::Move),
        ("talos.rename_path", ToolKind::Move),
        ("talos.run_command", ToolKind::Execute),
        ("shell", ToolKind::Other),
    ];
    for (tool, kind) in rows {
        assert_eq!(tool_kind(tool), kind, "{tool}");
    }
}

#[test]
fn call_states_map_to_acp_statuses_with_the_reason_shown() {
    let rows = [
        (CallStatus::Running, None, "in_progress", None),
        (CallStatus::Completed, None, "completed", None),
        (
            CallStatus::Failed,
            Some("disk full"),
            "failed",
            Some("failed: disk full"),
        ),
        (
            CallStatus::Rejected,
            Some("path: escapes the workspace"),
            "failed",
            Some("rejected by a check: path: escapes the workspace"),
        ),
        (
            CallStatus::Denied,
            Some("approval denied"),
            "failed",
            Some("denied: approval denied"),
        ),
        (CallStatus::Denied, None, "failed", Some("denied")),
    ];
    for (status, reason, acp, shown) in rows {
        let call = CallEvent {
            call_id: "call-1",
            tool: "talos.edit_file",
            status,
            target: Some("settings.py"),
            reason,
        };
        let first = serde_json::to_value(tool_call("/ws", &call)).unwrap();
        assert_eq!(first["status"], acp, "{status:?}");
        assert_eq!(first["kind"], "edit");
        assert_eq!(first["title"], "talos.edit_file settings.py");
        assert_eq!(first["locations"], json!([{"path": "/ws/settings.py"}]));
        let text = first["content"][0]["content"]["text"]
            .as_str()
            .map(str::to_string);
        assert_eq!(text.as_deref(), shown, "{status:?}");
        let later = serde_json::to_value(tool_call_update(&call)).unwrap();
        assert_eq!(later["status"], acp);
        assert_eq!(later["toolCallId"], "call-1");
    }
}

#[test]
fn a_protected_target_is_never_a_location() {
    let call = CallEvent {
        call_id: "call-1",
        tool: "talos.read_file",
        status: CallStatus::Denied,
        target: Some("<protected-path>"),
        reason: None,
    };
    let value = serde_json::to_value(tool_call("/ws", &call)).unwrap();
    assert!(
        value.get("locations").is_none_or(|l| l == &json!([])),
        "{value}"
    );
}

fn approval(change: Option<ProposedChange>, eligible: bool) -> ApprovalRequestParams {
    serde_json::from_value(json!({
        "turnId": "t", "sessionId": "s", "requestId": "apr-1", "tool": "talos.edit_file",
        "description": "write operation: talos.edit_file", "target": "settings.py",
        "details": ["permission: asks", "warning: this change contains a right-to-left override (U+202E) at line 2"],
        "diff": {"text": "@@ -1 +1 @@\n-a\n+b\n", "added": 1, "removed": 1, "truncated": false, "note": ""},
        "rememberEligible": eligible, "callId": "call-2",
        "change": change.map(|c| serde_json::to_value(c).unwrap()),
    }))
    .unwrap()
}

#[test]
fn a_permission_carries_the_diff_the_details_and_the_call_id() {
    let change = ProposedChange {
        path: "settings.py".into(),
        old_text: Some("TIMEOUT = 30\n".into()),
        new_text: "TIMEOUT = 60\n".into(),
    };
    let value =
        serde_json::to_value(permission_call("/ws", &approval(Some(change), true))).unwrap();
    assert_eq!(value["toolCallId"], "call-2");
    assert_eq!(value["status"], "pending");
    assert_eq!(value["kind"], "edit");
    assert_eq!(
        value["content"][0],
        json!({"type": "diff", "path": "/ws/settings.py", "oldText": "TIMEOUT = 30\n", "newText": "TIMEOUT = 60\n"})
    );
    let details = value["content"][1]["content"]["text"].as_str().unwrap();
    assert!(
        details.contains("warning: this change contains a right-to-left override"),
        "{details}"
    );
    // Without the whole text, the capped unified diff is shown as text.
    let value = serde_json::to_value(permission_call("/ws", &approval(None, true))).unwrap();
    assert!(
        value["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("-a\n+b")
    );
}

#[test]
fn only_an_offered_allow_option_allows() {
    let selected = |id: &str| {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
    };
    let rows = [
        (selected(ALLOW_ONCE), true, Decision::Approve),
        (selected(ALLOW_ALWAYS), true, Decision::ApproveForSession),
        (selected(ALLOW_ALWAYS), false, Decision::Deny),
        (selected(REJECT_ONCE), true, Decision::Deny),
        (selected("approve"), true, Decision::Deny),
        (RequestPermissionOutcome::Cancelled, true, Decision::Deny),
    ];
    for (outcome, eligible, expected) in rows {
        assert_eq!(
            decision(&outcome, eligible),
            expected,
            "{outcome:?} {eligible}"
        );
    }
    let ids = |eligible| {
        permission_options(eligible)
            .into_iter()
            .map(|o| o.option_id.0.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(true), [ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE]);
    assert_eq!(ids(false), [ALLOW_ONCE, REJECT_ONCE]);
}

#[test]
fn stop_reasons_follow_the_outcome() {
    let rows = [
        (
            CompletionStatus::Complete,
            Classification::CompletedVerified,
            false,
            StopReason::EndTurn,
        ),
        (
            CompletionStatus::Complete,
            Classification::CompletedVerified,
            true,
            StopReason::Cancelled,
        ),
        (
            CompletionStatus::Cancelled,
            Classification::Cancelled,
            false,
            StopReason::Cancelled,
        ),
        (
            CompletionStatus::Blocked,
            Classification::BlockedByPolicy,
            false,
            StopReason::Refusal,
        ),
        (
            CompletionStatus::Blocked,
            Classification::BlockedByApproval,
            false,
            StopReason::EndTurn,
        ),
        (
            CompletionStatus::Failed,
            Classification::Failed,
            false,
            StopReason::EndTurn,
        ),
        (
            CompletionStatus::AdvisoryOnly,
            Classification::AdvisoryOnly,
            false,
            StopReason::EndTurn,
        ),
    ];
    for (status, classification, cancel, expected) in rows {
        assert_eq!(
            stop_reason(&outcome(status, classification), cancel),
            expected,
            "{status:?} {classification:?} {cancel}"
        );
    }
}

#[test]
fn the_final_message_names_status_classification_files_and_trace() {
    let text = outcome_message(&outcome(
        CompletionStatus::Complete,
        Classification::CompletedVerified,
    ));
    assert!(
        text.contains("**COMPLETE** (COMPLETED_VERIFIED) · trace `trc-1`"),
        "{text}"
    );
    assert!(
        text.contains("- `settings.py`: Edited (13 bytes, +1 -1), verified"),
        "{text}"
    );
}

#[test]
fn the_answer_is_sent_only_when_the_stream_was_not_it() {
    assert_eq!(answer_to_send("done", "done\n"), None);
    assert_eq!(answer_to_send("", "done"), Some("done".into()));
    assert_eq!(answer_to_send("", ""), None);
    let replaced = answer_to_send("I changed it", "[Not inspected: settings.py]").unwrap();
    assert!(
        replaced.contains("Talos replaced the answer above")
            && replaced.ends_with("[Not inspected: settings.py]")
    );
}

#[test]
fn plans_steps_and_modes() {
    let steps = vec![
        PlanStep {
            text: "Read a.py".into(),
            kind: "read".into(),
            target: Some("a.py".into()),
        },
        PlanStep {
            text: "Change b.py".into(),
            kind: "change".into(),
            target: Some("b.py".into()),
        },
        PlanStep {
            text: "Answer".into(),
            kind: "answer".into(),
            target: None,
        },
    ];
    assert_eq!(step_of(&steps, "talos.read_file", Some("a.py")), Some(0));
    assert_eq!(step_of(&steps, "talos.edit_file", Some("b.py")), Some(1));
    assert_eq!(step_of(&steps, "talos.edit_file", Some("a.py")), None);
    assert_eq!(step_of(&steps, "talos.run_command", None), None);
    let value =
        serde_json::to_value(plan(&steps, &[StepState::Completed, StepState::InProgress])).unwrap();
    assert_eq!(
        value["entries"],
        json!([
            {"content": "Read a.py", "priority": "medium", "status": "completed"},
            {"content": "Change b.py", "priority": "medium", "status": "in_progress"},
            {"content": "Answer", "priority": "medium", "status": "pending"}
        ])
    );
    let modes = serde_json::to_value(modes(Mode::Ask)).unwrap();
    assert_eq!(modes["currentModeId"], "ask");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["agent", "ask", "plan", "auto", "private"]);
    assert_eq!(mode_from_id("plan"), Some(Mode::Plan));
    assert_eq!(mode_from_id("Agent"), None, "mode ids are exact");
}

/// Proves a model call's progress reaches the editor first at once, then at most once every
/// two seconds, and a new model call's first progress at once again.
#[test]
fn progress_thoughts_are_rate_limited_per_model_call_rows() {
    let start = std::time::Instant::now();
    let ms = |n: u64| start + std::time::Duration::from_millis(n);
    let mut gate = ProgressGate::default();
    let rows = [
        (0, 0, true),
        (0, 250, false),
        (0, 1_999, false),
        (0, 2_000, true),
        (0, 2_250, false),
        (1, 2_500, true),
        (1, 2_750, false),
        (0, 2_800, true),
        (0, 4_900, true),
    ];
    for (model_call, at, expected) in rows {
        assert_eq!(
            gate.admit(model_call, ms(at)),
            expected,
            "{model_call} {at}"
        );
    }
    for (tokens, expected) in [
        (0, "working…\n"),
        (1, "working… 1 token\n"),
        (37, "working… 37 tokens\n"),
        (4_096, "working… 4,096 tokens\n"),
    ] {
        assert_eq!(progress_thought(tokens, None), expected);
    }
}

/// Proves a `usage` event becomes ACP's `usage_update` with the prompt and the reply as used.
#[test]
fn usage_becomes_a_usage_update() {
    let event: talos_protocol::TurnEvent = serde_json::from_value(json!({
        "kind": "usage", "modelCall": 1, "promptTokens": 3_083, "cachedTokens": 2_900,
        "completionTokens": 37, "contextTokens": 4_096
    }))
    .unwrap();
    let context = crate::render::ContextUse::of(&event).unwrap();
    let update =
        agent_client_protocol_schema::v1::SessionUpdate::UsageUpdate(usage_update(&context));
    assert_eq!(
        serde_json::to_value(update).unwrap(),
        json!({"sessionUpdate": "usage_update", "used": 3_120, "size": 4_096})
    );
}

/// Proves a call waiting for approval is announced `pending` and turns `in_progress` once
/// approved, as ACP's ToolCallStatus defines them.
#[test]
fn a_call_that_waits_for_approval_is_pending_until_approved() {
    let call = CallEvent {
        call_id: "c1",
        tool: "talos.edit_file",
        status: CallStatus::Running,
        target: Some("settings.py"),
        reason: None,
    };
    // ACP's types leave `pending`, the default status, out of the JSON: read back, it is pending.
    let waiting = serde_json::to_value(pending_tool_call("/ws", &call)).unwrap();
    let read: ToolCall = serde_json::from_value(waiting.clone()).unwrap();
    assert_eq!(read.status, ToolCallStatus::Pending, "{waiting}");
    assert!(
        waiting.get("status").is_none_or(|s| s == "pending"),
        "{waiting}"
    );
    assert_eq!(waiting["kind"], "edit");
    assert_eq!(waiting["locations"][0]["path"], "/ws/settings.py");
    let running = serde_json::to_value(tool_call("/ws", &call)).unwrap();
    assert_eq!(running["status"], "in_progress");
    let approved = serde_json::to_value(approved_call("c1")).unwrap();
    assert_eq!(
        approved,
        json!({"toolCallId": "c1", "status": "in_progress"})
    );
}

/// Proves no plan step is left `in_progress` when a turn ends: a complete turn completes
/// every step; a denied, cancelled or blocked one ends each unfinished step with its reason.
#[test]
fn the_plan_ends_as_the_turn_ended() {
    use StepState::{Completed, Ended, InProgress, Pending};
    assert_eq!(step_state(CallStatus::Denied), Ended("denied"));
    assert_eq!(
        step_state(CallStatus::Rejected),
        Ended("refused by a check")
    );
    assert_eq!(step_state(CallStatus::Failed), Ended("failed"));
    assert_eq!(step_state(CallStatus::Running), InProgress);
    let states = [Completed, InProgress, Pending, Ended("denied")];
    let rows = [
        (CompletionStatus::Complete, false, [Completed; 4]),
        (
            CompletionStatus::Blocked,
            false,
            [
                Completed,
                Ended("blocked"),
                Ended("blocked"),
                Ended("denied"),
            ],
        ),
        (
            CompletionStatus::Partial,
            true,
            [
                Completed,
                Ended("cancelled"),
                Ended("cancelled"),
                Ended("denied"),
            ],
        ),
        (
            CompletionStatus::Cancelled,
            false,
            [
                Completed,
                Ended("cancelled"),
                Ended("cancelled"),
                Ended("denied"),
            ],
        ),
        (
            CompletionStatus::Failed,
            false,
            [Completed, Ended("failed"), Ended("failed"), Ended("denied")],
        ),
    ];
    for (status, cancelled, expected) in rows {
        assert_eq!(
            ended_states(&states, status, cancelled),
            expected,
            "{status:?}"
        );
    }
    let steps = [PlanStep {
        text: "Change b.py".into(),
        kind: "change".into(),
        target: Some("b.py".into()),
    }];
    assert_eq!(
        serde_json::to_value(plan(&steps, &[Ended("denied")])).unwrap()["entries"],
        json!([{"content": "Change b.py (denied)", "priority": "medium", "status": "pending"}])
    );
}

/// Proves the reading question is a permission with the two readings as options ("Change
/// config.py" allows, "Only answer a question" rejects), at the file, and that only an offered
/// option chooses.
#[test]
fn the_reading_question_offers_both_readings() {
    let request: ContractChooseParams = serde_json::from_value(json!({
        "turnId": "turn-1", "sessionId": "ses-1",
        "request": "I think DEBUG in config.py should change",
        "change": {"targets": ["config.py"], "description": "Change config.py?"},
        "question": {"description": "Only answer a question"}
    }))
    .unwrap();
    let options = serde_json::to_value(reading_options(&request)).unwrap();
    assert_eq!(
        options,
        json!([
            {"optionId": "change", "name": "Change config.py", "kind": "allow_once"},
            {"optionId": "question", "name": "Only answer a question", "kind": "reject_once"}
        ])
    );
    let call = serde_json::to_value(reading_call("/ws", &request)).unwrap();
    assert_eq!(call["title"], json!("Change config.py?"));
    assert_eq!(call["locations"][0]["path"], json!("/ws/config.py"));
    let selected = |id: &str| {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id.to_string()))
    };
    for (outcome, expected) in [
        (selected("change"), Some(ReadingChoice::Change)),
        (selected("question"), Some(ReadingChoice::Question)),
        (selected("allow_once"), None),
        (RequestPermissionOutcome::Cancelled, None),
    ] {
        assert_eq!(reading_choice(&outcome), expected);
    }
}

//! The turn's domain record (talos-core's `TurnRecord`) as the wire trace: the one place the
//! trace's lists are assembled. The trace header (ids, times, contract, plan) is built when
//! the turn starts; everything the turn did is filled in here when it ends.

use talos_core::turn::record::{
    Answer, AnswerSource, ApprovalRecord, CheckpointRecord, Decision, ExecutionRecord,
    ModelCallRecord, PermissionRecord, SurfaceRecord, ToolCallRecord, TurnRecord,
    VerificationRecord,
};
use talos_protocol as proto;
use talos_protocol::event::ApprovalSource;
use talos_protocol::trace::*;

use super::digest;

/// What the trace header is made of.
#[derive(Debug)]
pub struct Header<'a> {
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub turn_number: u64,
    pub started_at_ms: u64,
    pub trace_id: &'a str,
    pub workspace: &'a std::path::Path,
    pub mode: &'a str,
    pub model_url: &'a str,
    pub model_name: &'a str,
    pub prompt: &'a str,
    pub plan: &'a talos_core::plan::TurnPlan,
}

/// The trace as the turn starts: ids, the request (digested), contract and plan; the lists
/// are filled by [`fill`] when it ends.
pub fn header(h: &Header<'_>) -> TraceRecord {
    let contract = h.plan.contract();
    TraceRecord {
        schema_version: TRACE_SCHEMA_VERSION,
        trace_id: h.trace_id.into(),
        session_id: h.session_id.into(),
        turn_id: h.turn_id.into(),
        turn_number: h.turn_number,
        started_at_ms: h.started_at_ms,
        finished_at_ms: 0,
        workspace_hash: talos_core::digest::sha256(h.workspace.to_string_lossy().as_bytes()),
        mode: h.mode.into(),
        model: TraceModel {
            backend: crate::engine::Kind::LlamaCpp.as_str().into(),
            url: h.model_url.into(),
            name: h.model_name.into(),
            tool_calling: String::new(),
            served: None,
        },
        request: super::text_digest(h.prompt),
        request_targets: contract
            .expected_targets
            .iter()
            .chain(&contract.forbidden_targets)
            .chain(&contract.source_evidence_targets)
            .cloned()
            .collect(),
        task_contract: super::contract(contract),
        turn_plan: super::plan(h.plan),
        pinned: Vec::new(),
        instructions: Vec::new(),
        hooks: Vec::new(),
        mcp_tools: Vec::new(),
        mcp_calls: Vec::new(),
        phase_transitions: Vec::new(),
        tool_surfaces: Vec::new(),
        model_calls: Vec::new(),
        tool_calls: Vec::new(),
        permission_decisions: Vec::new(),
        approvals: Vec::new(),
        checkpoints: Vec::new(),
        executions: Vec::new(),
        verification: Vec::new(),
        commands: Vec::new(),
        warnings: Vec::new(),
        outcome: TraceOutcome {
            status: proto::CompletionStatus::Failed,
            classification: proto::Classification::Failed,
            mutation_status: String::new(),
            approval_status: String::new(),
            answer: TextDigest::default(),
            obligation_retries: 0,
        },
    }
}

/// One instruction file as the wire tells it.
pub fn instruction_file(used: &talos_core::instructions::Used) -> talos_protocol::InstructionFile {
    talos_protocol::InstructionFile {
        path: used.path.clone(),
        origin: used.origin.as_str().into(),
        sha256: used.sha256.clone(),
        bytes: used.bytes as u64,
        sent_bytes: used.sent_bytes as u64,
    }
}

/// One MCP call as the trace keeps it.
fn mcp_call(
    c: &talos_core::turn::record::ExternalCallRecord,
) -> talos_protocol::trace::TraceMcpCall {
    talos_protocol::trace::TraceMcpCall {
        call_id: c.call_id.clone(),
        tool: c.tool.clone(),
        arguments: super::digest(c.arguments.clone()),
        action: c.action.as_str().into(),
        reason_code: c.reason_code.clone(),
        approval: c.approval.map(decision),
        request_id: c.approval_request.clone(),
        output: c.output.clone().map(super::digest),
        is_error: c.is_error,
        truncated: c.truncated,
        error: c.error.clone(),
    }
}

/// One hook's run as the trace keeps it.
pub fn hook(h: &talos_core::hooks::HookRecord) -> talos_protocol::trace::TraceHook {
    talos_protocol::trace::TraceHook {
        event: h.event.into(),
        call_id: h.call_id.clone(),
        hook: h.hook,
        decision: h.decision.clone(),
        reason: h.reason.clone(),
        problem: h.problem.clone(),
    }
}

/// Fills the trace's lists from the record.
pub fn fill(trace: &mut TraceRecord, record: &TurnRecord) {
    trace.model.tool_calling = record.tool_calling.as_str().into();
    trace.pinned = record
        .pinned
        .iter()
        .map(|(name, d)| NamedDigest {
            name: name.clone(),
            digest: digest(d.clone()),
        })
        .collect();
    trace.instructions = record.instructions.iter().map(instruction_file).collect();
    trace.hooks = record.hooks.iter().map(hook).collect();
    trace.mcp_tools = record.external_offered.clone();
    trace.mcp_calls = record.external_calls.iter().map(mcp_call).collect();
    trace.phase_transitions = record
        .phase_transitions
        .iter()
        .map(|(from, to, reason)| TracePhaseTransition {
            from: from.as_str().into(),
            to: to.as_str().into(),
            reason: reason.clone(),
        })
        .collect();
    trace.tool_surfaces = record.tool_surfaces.iter().map(surface).collect();
    trace.model_calls = record.model_calls.iter().map(model_call).collect();
    trace.tool_calls = record.tool_calls.iter().map(tool_call).collect();
    trace.permission_decisions = record.permission_decisions.iter().map(permission).collect();
    trace.approvals = record.approvals.iter().map(approval).collect();
    trace.checkpoints = record.checkpoints.iter().map(checkpoint).collect();
    trace.executions = record.executions.iter().map(execution).collect();
    trace.verification = record.verification.iter().map(verification).collect();
    trace.commands = record.commands.iter().map(command).collect();
    trace.warnings = record
        .warnings
        .iter()
        .map(|w| TraceWarning {
            code: w.code.as_str().into(),
            message: w.message.clone(),
        })
        .collect();
}

fn surface(s: &SurfaceRecord) -> TraceSurface {
    TraceSurface {
        model_call: s.model_call,
        phase: s.phase.as_str().into(),
        tools: s.tools.iter().map(|t| t.name().to_string()).collect(),
        reason: s.reason.clone(),
    }
}

fn model_call(m: &ModelCallRecord) -> TraceModelCall {
    TraceModelCall {
        index: m.index,
        finish_reason: m.finish_reason.clone(),
        content: digest(m.content.clone()),
        tool_calls: m.tool_calls,
        prompt_tokens: m.prompt_tokens,
        completion_tokens: m.completion_tokens,
        cached_tokens: m.cached_tokens,
        context_tokens: m.context_tokens,
        budgeted_tokens: m.budgeted_tokens,
        cut: m.cut.clone(),
        error: m.error.clone(),
    }
}

fn permission(p: &PermissionRecord) -> TracePermission {
    TracePermission {
        call_id: p.call_id.clone(),
        tool: p.tool.clone(),
        action: p.action.as_str().into(),
        reason_code: p.reason_code.clone(),
        relative_path: p.relative_path.clone(),
        remember_eligible: p.remember_eligible,
    }
}

fn approval(a: &ApprovalRecord) -> TraceApproval {
    TraceApproval {
        request_id: a.request_id.clone(),
        call_id: a.call_id.clone(),
        tool: a.tool.name().into(),
        decision: decision(a.answer.decision),
        source: source(a.answer.source),
        diff_added: a.diff_added,
        diff_removed: a.diff_removed,
        diff_truncated: a.diff_truncated,
    }
}

fn verification(v: &VerificationRecord) -> TraceVerification {
    TraceVerification {
        call_id: v.call_id.clone(),
        path: v.path.clone(),
        status: v.status.as_str().into(),
        summary: v.summary.clone(),
    }
}

fn tool_call(c: &ToolCallRecord) -> TraceToolCall {
    TraceToolCall {
        call_id: c.call_id.clone(),
        requested_name: c.requested_name.clone(),
        tool: c.tool.map(|t| t.name().into()),
        source: c.source.into(),
        parameter_names: c.parameter_names.clone(),
        path_hint: c.path_hint.clone(),
        content_digests: c
            .content_digests
            .iter()
            .map(|(name, d)| NamedDigest {
                name: name.clone(),
                digest: digest(d.clone()),
            })
            .collect(),
        stage: c.stage.as_str().into(),
        rejection: c.rejection.clone(),
    }
}

fn checkpoint(c: &CheckpointRecord) -> TraceCheckpoint {
    let (status, checkpoint_id, blob, message, existed_before) = match &c.result {
        Ok(taken) => (
            "created",
            Some(taken.checkpoint_id.clone()),
            taken.blob_sha256.clone().map(|h| format!("sha256:{h}")),
            None,
            taken.existed_before,
        ),
        Err(e) => ("failed", None, None, Some(e.clone()), c.existed_before),
    };
    TraceCheckpoint {
        call_id: c.call_id.clone(),
        status: status.into(),
        checkpoint_id,
        path: c.path.clone(),
        existed_before,
        blob_sha256: blob,
        message,
    }
}

fn execution(e: &ExecutionRecord) -> TraceExecution {
    TraceExecution {
        call_id: e.call_id.clone(),
        tool: e.tool.name().into(),
        success: e.success,
        path: e.path.clone(),
        output: digest(e.output.clone()),
        sha256_after: e.sha256_after.clone(),
        error: e.error.clone(),
    }
}

fn command(c: &talos_core::turn::record::CommandRecord) -> TraceCommand {
    TraceCommand {
        call_id: c.call_id.clone(),
        profile: c.profile.clone(),
        argv: c.argv.clone(),
        cwd: c.cwd.clone(),
        exit_code: c.exit_code,
        timed_out: c.timed_out,
        cancelled: c.cancelled,
        duration_ms: c.duration_ms,
        stdout: digest(c.stdout.clone()),
        stderr: digest(c.stderr.clone()),
        stdout_truncated: c.stdout_truncated,
        stderr_truncated: c.stderr_truncated,
        redaction_applied: c.redaction_applied,
        withheld_from_model: c.withheld_from_model,
        network_isolated: c.network_isolated,
        writes_confined: c.writes_confined,
    }
}

pub fn decision(d: Decision) -> proto::Decision {
    match d {
        Decision::Approve => proto::Decision::Approve,
        Decision::ApproveForSession => proto::Decision::ApproveForSession,
        Decision::Deny => proto::Decision::Deny,
    }
}

pub fn source(s: AnswerSource) -> ApprovalSource {
    match s {
        AnswerSource::Client => ApprovalSource::Client,
        AnswerSource::Disconnect => ApprovalSource::Disconnect,
        AnswerSource::Timeout => ApprovalSource::Timeout,
        AnswerSource::Cancelled => ApprovalSource::Cancelled,
    }
}

/// A wire decision and source as the core's answer.
pub fn answer(decision: proto::Decision, source: ApprovalSource) -> Answer {
    let decision = match decision {
        proto::Decision::Approve => Decision::Approve,
        proto::Decision::ApproveForSession => Decision::ApproveForSession,
        proto::Decision::Deny => Decision::Deny,
    };
    let source = match source {
        ApprovalSource::Client | ApprovalSource::Remembered => AnswerSource::Client,
        ApprovalSource::Disconnect => AnswerSource::Disconnect,
        ApprovalSource::Timeout => AnswerSource::Timeout,
        ApprovalSource::Cancelled => AnswerSource::Cancelled,
    };
    Answer { decision, source }
}

/// The previous turn's outcome as the core's status answer reads it.
pub fn prior(last: &proto::TurnOutcome) -> talos_core::turn::route::PriorRecord {
    talos_core::turn::route::PriorRecord {
        trace_id: last.trace_id.clone(),
        classification: super::fine(last.classification),
        files: last
            .files
            .iter()
            .map(|f| talos_core::turn::record::FileResult {
                path: f.path.clone(),
                changed: f.changed,
                detail: f.detail.clone(),
            })
            .collect(),
    }
}

/// The per-file results of the outcome.
pub fn files(files: Vec<talos_core::turn::record::FileResult>) -> Vec<proto::FileResult> {
    files
        .into_iter()
        .map(|f| proto::FileResult {
            path: f.path,
            changed: f.changed,
            detail: f.detail,
        })
        .collect()
}

/// A notice of the core as the turn event the client receives.
pub fn notice(notice: talos_core::turn::Notice) -> talos_protocol::event::TurnEvent {
    use talos_core::turn::Notice;
    use talos_protocol::event::TurnEvent;
    match notice {
        Notice::ToolProgress {
            tool,
            call_id,
            message,
        } => TurnEvent::ToolProgress {
            tool,
            call_id,
            message,
        },
        Notice::Info(text) => TurnEvent::Info { text },
        Notice::Ok(text) => TurnEvent::Ok { text },
        Notice::TrustedInfo(text) => TurnEvent::TrustedInfo { text },
        Notice::Error(message) => TurnEvent::Error { message },
        Notice::Instructions(used) => TurnEvent::Instructions {
            files: used.iter().map(instruction_file).collect(),
        },
        Notice::Usage {
            model_call,
            prompt_tokens,
            cached_tokens,
            completion_tokens,
            context_tokens,
        } => TurnEvent::Usage {
            model_call,
            prompt_tokens,
            cached_tokens,
            completion_tokens,
            context_tokens,
        },
        Notice::Plan(steps) => TurnEvent::Plan {
            steps: steps
                .into_iter()
                .map(|s| talos_protocol::PlanStep {
                    text: s.text,
                    kind: s.kind.as_str().into(),
                    target: s.target,
                })
                .collect(),
        },
        Notice::Call {
            call_id,
            tool,
            status,
            target,
            reason,
        } => TurnEvent::Call {
            call_id,
            tool,
            status: call_status(status),
            target,
            reason,
        },
    }
}

fn call_status(status: talos_core::turn::CallStatus) -> talos_protocol::CallStatus {
    use talos_core::turn::CallStatus as Core;
    use talos_protocol::CallStatus as Wire;
    match status {
        Core::Running => Wire::Running,
        Core::Completed => Wire::Completed,
        Core::Failed => Wire::Failed,
        Core::Rejected => Wire::Rejected,
        Core::Denied => Wire::Denied,
    }
}

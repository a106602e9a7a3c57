//! Conversions from talos-core's domain values to the wire and trace types. The only place
//! the two meet.

pub mod record;
pub mod restore;

use serde_json::Value;
use talos_core::contract::TaskContract;
use talos_core::diff::Preview;
use talos_core::digest::Digested;
use talos_core::outcome::{Fine, Status};
use talos_core::plan::{
    ArtifactGoal, Expectation, OutputObligation, RequestedResult, TurnPlan, VerifierProfile,
};
use talos_core::tools::ToolId;
use talos_protocol as proto;
use talos_protocol::trace::{TextDigest, TraceContract, TracePlan, TraceTarget};

pub fn digest(d: Digested) -> TextDigest {
    TextDigest {
        hash: d.hash,
        chars: d.chars,
        bytes: d.bytes,
        lines: d.lines,
    }
}

pub fn text_digest(text: &str) -> TextDigest {
    digest(talos_core::digest::digest_text(text))
}

pub fn contract(c: &TaskContract) -> TraceContract {
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    TraceContract {
        task_type: c.task_type.as_str().into(),
        mutation_requested: c.mutation_requested,
        mutation_allowed: c.mutation_allowed,
        verification_required: c.verification_required,
        expected_targets: sorted(&c.expected_targets),
        source_evidence_targets: sorted(&c.source_evidence_targets),
        forbidden_targets: sorted(&c.forbidden_targets),
        classification_reason: c.classification_reason(),
        roleful_targets: c
            .roleful_targets
            .iter()
            .map(|t| TraceTarget {
                path: t.path.clone(),
                role: t.role.as_str().into(),
                source: t.source.as_str().into(),
                reason: t.reason.into(),
            })
            .collect(),
        required_visible_facts: c.static_web.required_visible_facts.len(),
        forbidden_artifacts: c.static_web.forbidden_artifacts.clone(),
        // Filled by the turn once the person was asked (`crate::reading`).
        reading: None,
    }
}

pub fn status(s: Status) -> proto::CompletionStatus {
    match s {
        Status::Complete => proto::CompletionStatus::Complete,
        Status::Partial => proto::CompletionStatus::Partial,
        Status::Blocked => proto::CompletionStatus::Blocked,
        Status::AdvisoryOnly => proto::CompletionStatus::AdvisoryOnly,
        Status::Failed => proto::CompletionStatus::Failed,
        Status::Cancelled => proto::CompletionStatus::Cancelled,
    }
}

pub fn classification(f: Fine) -> proto::Classification {
    match f {
        Fine::CompletedVerified => proto::Classification::CompletedVerified,
        Fine::CompletedUnverified => proto::Classification::CompletedUnverified,
        Fine::ReadOnlyAnswered => proto::Classification::ReadOnlyAnswered,
        Fine::Partial => proto::Classification::Partial,
        Fine::BlockedByApproval => proto::Classification::BlockedByApproval,
        Fine::BlockedByPolicy => proto::Classification::BlockedByPolicy,
        Fine::AdvisoryOnly => proto::Classification::AdvisoryOnly,
        Fine::Failed => proto::Classification::Failed,
        Fine::Cancelled => proto::Classification::Cancelled,
        Fine::ContractAmbiguous => proto::Classification::ContractAmbiguous,
    }
}

/// The session's mode as the core knows it.
pub fn mode(mode: proto::Mode) -> talos_core::modes::SessionMode {
    use talos_core::modes::SessionMode;
    match mode {
        proto::Mode::Agent => SessionMode::Agent,
        proto::Mode::Ask => SessionMode::Ask,
        proto::Mode::Plan => SessionMode::Plan,
        proto::Mode::Auto => SessionMode::Auto,
        proto::Mode::Private => SessionMode::Private,
    }
}

/// A wire classification as the core's.
pub fn fine(c: proto::Classification) -> Fine {
    match c {
        proto::Classification::CompletedVerified => Fine::CompletedVerified,
        proto::Classification::CompletedUnverified => Fine::CompletedUnverified,
        proto::Classification::ReadOnlyAnswered => Fine::ReadOnlyAnswered,
        proto::Classification::Partial => Fine::Partial,
        proto::Classification::BlockedByApproval => Fine::BlockedByApproval,
        proto::Classification::BlockedByPolicy => Fine::BlockedByPolicy,
        proto::Classification::AdvisoryOnly => Fine::AdvisoryOnly,
        proto::Classification::Failed => Fine::Failed,
        proto::Classification::Cancelled => Fine::Cancelled,
        proto::Classification::ContractAmbiguous => Fine::ContractAmbiguous,
    }
}

pub fn diff(p: &Preview) -> proto::DiffPreview {
    proto::DiffPreview {
        text: p.text.clone(),
        added: p.added,
        removed: p.removed,
        truncated: p.truncated,
        note: p.note.into(),
    }
}

pub fn plan(plan: &TurnPlan) -> TracePlan {
    let names = |tools: &[ToolId]| {
        tools
            .iter()
            .map(|t| t.name().to_string())
            .collect::<Vec<_>>()
    };
    let tools = names(plan.surface().tools());
    TracePlan {
        posture: format!("{:?}", plan.posture()),
        phase_initial: plan.initial_phase().as_str().into(),
        phase_final: plan.final_phase().as_str().into(),
        action_obligation: plan.obligation().as_str().into(),
        evidence_obligation: plan.evidence_obligation().as_str().into(),
        output_obligation: match plan.output_obligation() {
            OutputObligation::DirectAnswer => "DIRECT_ANSWER",
            OutputObligation::DirectoryListing => "DIRECTORY_LISTING",
            OutputObligation::Answer => "ANSWER",
            OutputObligation::ChangedFiles => "CHANGED_FILES",
        }
        .into(),
        expectations: plan
            .expectations()
            .iter()
            .map(|e| match e {
                Expectation::MustChange { target } => format!("must-change {target}"),
                // The kind only: the request's words reach traces as digests, never as text.
                Expectation::Change { target, ask } => format!("{} in {target}", ask.kind()),
                Expectation::ExactContent { target, content } => format!(
                    "exact content of {target} ({})",
                    talos_core::digest::sha256(content.as_bytes())
                ),
            })
            .collect(),
        requested_results: plan
            .requested_results()
            .iter()
            .map(|r| match r {
                RequestedResult::Changed { target } => format!("changed {target}"),
                RequestedResult::Read { target } => format!("read {target}"),
                RequestedResult::Answer => "answer".to_string(),
            })
            .collect(),
        native_tools: tools.clone(),
        prompt_tools: tools,
        blocked_tools: names(plan.blocked_tools()),
        surface_reason: plan.surface().reason().into(),
        active_task_context: plan.active_task_context().map(str::to_string),
        artifact_goal: match plan.artifact_goal() {
            ArtifactGoal::None => Vec::new(),
            ArtifactGoal::Files(files) => files.clone(),
        },
        verifier_profile: match plan.verifier_profile() {
            VerifierProfile::None => "NONE",
            VerifierProfile::ContentReadback => "CONTENT_READBACK",
        }
        .into(),
        iteration_budget: plan.iteration_budget(),
    }
}

/// One chat message as the `/v1/chat/completions` body carries it.
pub fn chat_message(message: &talos_core::turn::conversation::Message) -> Value {
    let mut value = serde_json::json!({"role": message.role.as_str(), "content": message.content});
    if !message.tool_calls.is_empty() {
        value["tool_calls"] = Value::Array(
            message
                .tool_calls
                .iter()
                .map(|c| serde_json::json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect(),
        );
    }
    if let Some(id) = &message.tool_call_id {
        value["tool_call_id"] = Value::String(id.clone());
    }
    value
}

//! One turn, in the seed's order: contract, posture, plan, surface, proposal, checks, ladder,
//! approval, checkpoint, write and verification, outcome and trace. Every decision is made by
//! talos-core; this module and its children perform the effects and keep the records.

mod calls;
mod command;
mod context;
mod model_loop;
mod mutate;
mod pins;
mod read_tools;
mod verify;
mod viewer;
mod workspace_ops;

use std::sync::Arc;

use talos_core::contract::TaskType;
use talos_core::modes::{self, SessionMode};
use talos_core::outcome::{self, MutationResult};
use talos_core::plan::{Expectation, PlanSettings, RequestedResult, TurnPlan};
use talos_core::posture;
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::*;

use crate::connection::Peer;
use crate::server::Daemon;
use crate::sessions::{Session, SessionTurn};
use crate::to_proto;
use context::TurnCtx;
pub use context::now_ms;

const RESTORE_ANSWER: &str = "Checkpoint restore is available through Talos's local checkpoint store.\nI did not restore files from this natural-language turn.\nCheckpoint restore commands arrive in a later release; the checkpoints of every change are kept under the Talos home.";

const UNSUPPORTED_COMMAND_ANSWER: &str = "I can't run that command check because no approved command profile was specified. Talos runs commands only through bounded, approved command profiles: the built-in cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check and gradle_* profiles, and workspace profiles you pinned with talos profiles trust. Name one (for example: run the cargo_test command profile).";

/// What a client asked for.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub prompt: String,
    pub pins: Vec<String>,
}

/// The session's mode as the core knows it.
pub fn session_mode(mode: proto::Mode) -> SessionMode {
    match mode {
        proto::Mode::Agent => SessionMode::Agent,
        proto::Mode::Ask => SessionMode::Ask,
        proto::Mode::Plan => SessionMode::Plan,
        proto::Mode::Auto => SessionMode::Auto,
        proto::Mode::Private => SessionMode::Private,
    }
}

/// Runs one turn to its outcome. The trace is written however the turn ends.
pub async fn run(
    daemon: Arc<Daemon>,
    mut session: SessionTurn,
    peer: Arc<Peer>,
    request: TurnRequest,
) -> proto::TurnOutcome {
    let turn_number = session.next_turn();
    let turn_id = crate::ids::new_id("turn");
    let trace_id = crate::ids::new_id("trc");
    let mode = session_mode(session.mode);
    let history = session.history();
    let resolved = talos_core::history::resolve_in_context(&history, &request.prompt);
    let inherited = resolved
        .classification_reason
        .contains("inherited")
        .then(|| {
            format!(
                "continues the previous turn's contract ({})",
                resolved.classification_reason
            )
        });
    let findings = session.last_findings();
    let inherited = match inherited {
        Some(context) if !findings.is_empty() => Some(format!(
            "{context}; the last verification found: {}",
            findings.join("; ")
        )),
        other => other,
    };
    let effective = posture::apply(mode.posture(), resolved.clone());
    let settings = PlanSettings {
        iteration_budget: daemon.config.turn.max_model_calls,
        pinned: request.pins.clone(),
        active_task_context: inherited,
    };
    let plan = match TurnPlan::new(
        effective.clone(),
        TurnPlan::claims_for(&effective),
        settings,
    ) {
        Ok(plan) => plan,
        Err(e) => {
            tracing::error!(error = %e, "turn plan refused; using the compiled plan");
            TurnPlan::from_turn(effective)
        }
    };
    let trace = new_trace(
        &daemon,
        &session,
        &plan,
        trace_id,
        turn_id.clone(),
        turn_number,
        &request.prompt,
    );
    let mut ctx = TurnCtx::new(
        daemon.clone(),
        session.session(),
        peer,
        turn_id.clone(),
        trace,
        mode,
    );
    ctx.facts.mutation_requested = plan.contract().mutation_requested;
    ctx.facts.mutation_allowed = plan.contract().mutation_allowed;
    tracing::info!(turn = %turn_id, task = plan.contract().task_type.as_str(), mode = mode.as_str(), "turn started");

    let structural = mode
        .routes_structural()
        .then(|| modes::structural_command(&request.prompt))
        .flatten();
    let answer = if let Some(command) = structural {
        ctx.trace.model.tool_calling = "none".into();
        viewer::answer(&mut ctx, command).await
    } else if plan
        .contract()
        .classification_reason
        .starts_with("prior-change-status-question")
        && let Some(last) = session.last_outcome()
    {
        ctx.trace.model.tool_calling = "none".into();
        status_from_records(&last)
    } else if plan
        .contract()
        .classification_reason
        .starts_with("unsupported-command-verification-request")
    {
        ctx.trace.model.tool_calling = "none".into();
        UNSUPPORTED_COMMAND_ANSWER.to_string()
    } else if let Some(documents) = unreadable_documents(&plan) {
        ctx.trace.model.tool_calling = "none".into();
        ctx.trace.warnings.push(TraceWarning {
            code: "DOCUMENT_NOT_READABLE".into(),
            message: format!("{} cannot be read by the text tools", documents.join(", ")),
        });
        let answer = document_note(&documents);
        ctx.facts.unreadable_documents = documents;
        answer
    } else if plan.contract().task_type == TaskType::CheckpointRestore {
        ctx.trace.model.tool_calling = "none".into();
        RESTORE_ANSWER.to_string()
    } else {
        model_loop::run(&mut ctx, &plan).await
    };
    let (outcome, findings) = finish(ctx, &plan, answer).await;
    // A status question ("did you make the changes?") is answered from the records; it does
    // not become the turn a later "try again" continues.
    if resolved.classification_reason != "prior-change-status-question" {
        session.remember_outcome(&outcome);
        session.remember_findings(findings);
        session.remember_turn(talos_core::history::PriorTurn {
            contract: resolved,
            outcome: prior_outcome(outcome.classification),
        });
    }
    outcome
}

/// Named documents the text tools cannot read, on a turn that only needs to read them.
fn unreadable_documents(plan: &TurnPlan) -> Option<Vec<String>> {
    let contract = plan.contract();
    if contract.mutation_requested {
        return None;
    }
    let documents: Vec<String> = contract
        .expected_targets
        .iter()
        .chain(&contract.source_evidence_targets)
        .filter(|t| talos_core::targets::is_unreadable_document(t))
        .fold(Vec::new(), |mut seen: Vec<String>, t| {
            if !seen.contains(t) {
                seen.push(t.clone());
            }
            seen
        });
    (!documents.is_empty()).then_some(documents)
}

/// The honest capability note for documents the text tools cannot read.
fn document_note(documents: &[String]) -> String {
    format!(
        "[Capability note: Talos's file tools read text files; they cannot extract the text of {} (PDF, Word, Excel and other binary document formats are not supported yet).]\nNo file was read in this turn, and Talos did not guess at the document's contents from other files. Export it to text (for example with pdftotext, or by saving it as .txt or .md), name that file, and Talos can work from it.",
        documents.join(", ")
    )
}

/// "Did you make the changes?", answered from the session's records, not by the model.
fn status_from_records(last: &proto::TurnOutcome) -> String {
    let class = serde_json::to_value(last.classification)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut out = format!(
        "From Talos's records of the previous turn (trace {}): {class}.",
        last.trace_id
    );
    let changed: Vec<String> = last
        .files
        .iter()
        .filter(|f| f.changed)
        .map(|f| format!("- {}: {}", f.path, f.detail))
        .collect();
    let unchanged: Vec<String> = last
        .files
        .iter()
        .filter(|f| !f.changed)
        .map(|f| format!("- {}: {}", f.path, f.detail))
        .collect();
    if changed.is_empty() {
        out.push_str("\nNo file was changed.");
    } else {
        out.push_str(&format!("\nChanged:\n{}", changed.join("\n")));
    }
    if !unchanged.is_empty() {
        out.push_str(&format!("\nNot changed:\n{}", unchanged.join("\n")));
    }
    out
}

fn prior_outcome(classification: proto::Classification) -> talos_core::history::PriorOutcome {
    use talos_core::history::PriorOutcome;
    match classification {
        proto::Classification::CompletedVerified => PriorOutcome::Verified,
        proto::Classification::CompletedUnverified => PriorOutcome::Unverified,
        proto::Classification::ReadOnlyAnswered => PriorOutcome::ReadOnly,
        proto::Classification::Partial
        | proto::Classification::AdvisoryOnly
        | proto::Classification::Cancelled => PriorOutcome::Incomplete,
        proto::Classification::BlockedByApproval => PriorOutcome::Denied,
        proto::Classification::BlockedByPolicy => PriorOutcome::Blocked,
        proto::Classification::Failed => PriorOutcome::Failed,
    }
}

#[allow(clippy::too_many_arguments)]
fn new_trace(
    daemon: &Daemon,
    session: &Session,
    plan: &TurnPlan,
    trace_id: String,
    turn_id: String,
    turn_number: u64,
    prompt: &str,
) -> TraceRecord {
    let contract = plan.contract();
    TraceRecord {
        schema_version: TRACE_SCHEMA_VERSION,
        trace_id,
        session_id: session.id.clone(),
        turn_id,
        turn_number,
        started_at_ms: now_ms(),
        finished_at_ms: 0,
        workspace_hash: talos_core::digest::sha256(session.workspace.to_string_lossy().as_bytes()),
        mode: session.mode.as_str().into(),
        model: TraceModel {
            backend: "llama.cpp".into(),
            url: daemon.engine.url.clone(),
            tool_calling: String::new(),
        },
        request: to_proto::text_digest(prompt),
        request_targets: contract
            .expected_targets
            .iter()
            .chain(&contract.forbidden_targets)
            .chain(&contract.source_evidence_targets)
            .cloned()
            .collect(),
        task_contract: to_proto::contract(contract),
        turn_plan: to_proto::plan(plan),
        pinned: Vec::new(),
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
        },
    }
}

async fn finish(
    mut ctx: TurnCtx,
    plan: &TurnPlan,
    model_answer: String,
) -> (proto::TurnOutcome, Vec<String>) {
    if ctx.cancel.is_cancelled() {
        ctx.facts.cancelled = true;
    }
    let changed: Vec<&str> = ctx
        .facts
        .mutations
        .iter()
        .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
        .map(|m| m.target.as_str())
        .collect();
    let unmet: Vec<String> = plan
        .expectations()
        .iter()
        .filter_map(|e| match e {
            Expectation::MustChange { target } if !changed.contains(&target.as_str()) => {
                Some(target.clone())
            }
            Expectation::MustChange { .. }
            | Expectation::Replacement { .. }
            | Expectation::ExactContent { .. } => None,
        })
        .collect();
    ctx.facts.unmet_targets = unmet;
    let model_answered = !ctx.trace.model_calls.is_empty();
    ctx.facts.tools_offered = ctx.trace.tool_surfaces.iter().any(|s| !s.tools.is_empty());
    ctx.facts.tool_calls = ctx.trace.tool_calls.len();
    for result in plan.requested_results() {
        if let RequestedResult::Read { target } = result
            && !ctx.read_paths.iter().any(|p| p == target)
            && plan.contract().task_type != TaskType::SmallTalk
        {
            ctx.trace.warnings.push(TraceWarning {
                code: "EVIDENCE_TARGET_NOT_READ".into(),
                message: format!("{target} was named by the request but not read this turn"),
            });
            let needs_reading = plan.evidence_obligation()
                == talos_core::plan::EvidenceObligation::ReadTargetRequired;
            if model_answered && needs_reading && !ctx.facts.mutation_requested {
                ctx.facts.evidence_missing.push(target.clone());
            }
        }
    }
    // The static checks take well under a millisecond, but an interaction check runs a headless
    // browser for up to 30 s: let the runtime move other tasks off this worker meanwhile.
    let diagnostics = match tokio::runtime::Handle::current().runtime_flavor() {
        tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| verify::static_web(&mut ctx, plan))
        }
        _ => verify::static_web(&mut ctx, plan),
    };
    let fine = outcome::classify(&ctx.facts);
    let mut answer = talos_core::guard::guard_answer(&model_answer, &ctx.facts);
    if answer.starts_with(talos_core::guard::CLEAN_VERDICT_CONTRADICTED) {
        ctx.trace.warnings.push(TraceWarning {
            code: "CLEAN_VERDICT_CONTRADICTED".into(),
            message: format!(
                "the answer said nothing was wrong; Talos's checks found {} problem(s)",
                ctx.facts.task_findings.len()
            ),
        });
    }
    let echoed: Vec<&String> = ctx
        .protected_lines
        .iter()
        .filter(|l| answer.contains(l.as_str()))
        .collect();
    if !echoed.is_empty() {
        for line in echoed {
            answer = answer.replace(line.as_str(), "[protected content withheld]");
        }
        answer = format!(
            "[Protected content check: lines of a protected file in the answer were withheld.]\n\n{answer}"
        );
        ctx.trace.warnings.push(TraceWarning {
            code: "PROTECTED_CONTENT_WITHHELD".into(),
            message: "the answer echoed lines of a protected file; they were withheld".into(),
        });
    }
    if let Some(diagnostics) = diagnostics {
        answer = format!("{answer}\n\n{diagnostics}")
            .trim_start()
            .to_string();
    }
    let status = to_proto::status(fine.status());
    let classification = to_proto::classification(fine);
    ctx.trace.outcome = TraceOutcome {
        status,
        classification,
        mutation_status: outcome::mutation_status(&ctx.facts).into(),
        approval_status: outcome::approval_status(&ctx.facts).into(),
        answer: to_proto::text_digest(&answer),
    };
    ctx.trace.finished_at_ms = now_ms();
    let trace_path = match crate::traces::write(&ctx.daemon.home.traces(), &ctx.trace) {
        Ok(path) => Some(path.display().to_string()),
        Err(e) => {
            tracing::error!(error = %e, "cannot write trace");
            None
        }
    };
    let outcome = proto::TurnOutcome {
        turn_id: ctx.turn_id.clone(),
        status,
        classification,
        final_answer: answer,
        trace_id: ctx.trace.trace_id.clone(),
        trace_path,
        files: std::mem::take(&mut ctx.files),
    };
    ctx.emit(TurnEvent::Outcome {
        outcome: outcome.clone(),
    })
    .await;
    tracing::info!(turn = %ctx.turn_id, ?status, ?classification, "turn finished");
    (outcome, std::mem::take(&mut ctx.facts.task_findings))
}

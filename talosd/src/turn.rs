//! One turn, in the order of docs/architecture.md: contract, posture, plan, surface, proposal,
//! checks, ladder, approval, checkpoint, write and verification, outcome and trace. Every
//! decision is made by talos-core's turn state machine (`talos_core::turn`); this module and its
//! children perform the effects it asks for and report their results.

mod calls;
mod command;
mod constraint;
mod context;
mod conversation;
mod effects;
mod model_loop;
mod pins;
mod read_tools;
mod retrieve;
mod verify;
mod viewer;

use std::sync::Arc;

use talos_core::history::PriorOutcome;
use talos_core::modes::SessionMode;
use talos_core::plan::{PlanSettings, TurnPlan};
use talos_core::posture;
use talos_core::turn::record::{CallingRecord, WarningCode};
use talos_core::turn::route::{self, PriorRecord, Route};
use talos_core::turn::{Turn, TurnSettings};
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::TraceOutcome;

use crate::connection::Peer;
use crate::server::Daemon;
use crate::sessions::SessionTurn;
use crate::to_proto;
use context::TurnCtx;
pub use context::now_ms;

/// What a client asked for.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub prompt: String,
    pub pins: Vec<String>,
    /// Made by the caller before the session was claimed, so a failed random source refuses
    /// the turn instead of running it under a guessable id.
    pub turn_id: crate::ids::TurnId,
    pub trace_id: crate::ids::TraceId,
}

/// Runs one turn to its outcome. The trace is written however the turn ends.
pub async fn run(
    daemon: Arc<Daemon>,
    mut session: SessionTurn,
    peer: Arc<Peer>,
    request: TurnRequest,
) -> proto::TurnOutcome {
    let turn_number = session.next_turn();
    let sessions = daemon.clone();
    let turn_id = request.turn_id.clone();
    let mode = to_proto::mode(session.mode);
    let resolved = talos_core::history::resolve_in_context(&session.history(), &request.prompt);
    let plan = plan(&daemon, &session, &request, mode, &resolved);
    let trace = to_proto::record::header(&to_proto::record::Header {
        session_id: session.id.as_str(),
        trace_id: request.trace_id.as_str(),
        turn_id: turn_id.as_str(),
        turn_number,
        started_at_ms: now_ms(),
        workspace: &session.workspace,
        mode: session.mode.as_str(),
        model_url: &daemon.engine.url,
        prompt: &request.prompt,
        plan: &plan,
    });
    let settings = TurnSettings {
        mode,
        strict_names: daemon.config.tools.strict_names,
        rules: daemon.rules.clone(),
        require_tool_call: daemon.config.tools.require_tool_call,
        allow_invisible_path_characters: daemon.config.permissions.allow_invisible_path_characters,
    };
    let core = Turn::new(plan, settings, session.grants());
    let prior = session.last_outcome().map(|o| to_proto::record::prior(&o));
    let mut ctx = TurnCtx::new(
        daemon,
        session.session(),
        peer,
        turn_id.clone(),
        trace,
        core,
        session.cancel_token(),
    );
    // The plan's steps go out before anything else the turn does.
    ctx.emit_notices().await;
    let contract = ctx.core.plan.contract();
    tracing::info!(turn = %turn_id, task = contract.task_type.as_str(), mode = mode.as_str(), "turn started");
    let answer = answer(&mut ctx, &request.prompt, prior).await;
    let (outcome, findings) = finish(ctx, answer, &request.prompt).await;
    session.turn_ended();
    if route::remembered(&resolved) {
        session.remember_outcome(&outcome);
        session.remember_findings(findings);
        session.remember_turn(
            request.prompt.clone(),
            talos_core::history::PriorTurn {
                contract: resolved,
                outcome: PriorOutcome::of(to_proto::fine(outcome.classification)),
            },
        );
    }
    persist(&sessions, &session);
    outcome
}

/// Writes the session's state after a turn, unless it was closed while the turn ran (a closed
/// session is not brought back by a new daemon).
fn persist(daemon: &Daemon, session: &SessionTurn) {
    if daemon.session(session.id.as_str()).is_none() {
        return;
    }
    let snapshot = session.snapshot();
    let store = crate::session_store::SessionStore::new(daemon.home.sessions());
    match crate::offload::blocking(|| store.save(&snapshot, now_ms())) {
        Ok(()) => session.set_persisted(true),
        Err(e) => tracing::error!(session = %session.id, error = %e, "cannot persist the session"),
    }
}

/// The turn plan: the contract under the mode's posture, with the follow-up's context.
fn plan(
    daemon: &Daemon,
    session: &SessionTurn,
    request: &TurnRequest,
    mode: SessionMode,
    resolved: &talos_core::contract::TaskContract,
) -> TurnPlan {
    let commands = command::workspace_commands(&daemon.home.state, &session.files);
    let with_commands = talos_core::contract::with_workspace(resolved.clone(), &commands);
    let reconciled = crate::webcheck::reconciled(&session.files, with_commands);
    let effective = posture::apply(mode.posture(), reconciled);
    let settings = PlanSettings {
        iteration_budget: daemon.config.turn.max_model_calls,
        pinned: request.pins.clone(),
        active_task_context: route::active_task_context(resolved, &session.last_findings()),
    };
    TurnPlan::compiled(effective, settings)
}

/// The static web checks, with the one repair round the core may decide after a failure: the
/// verifier's lines and the model's answer (the repair round's, when one ran and answered).
async fn web_checks(ctx: &mut TurnCtx, model_answer: String) -> (Option<String>, String) {
    // The static checks take well under a millisecond, but an interaction check runs a headless
    // browser for up to 30 s: let the runtime move other tasks off this worker meanwhile.
    let can_repair = ctx.conversation.is_some() && !ctx.client_gone() && !ctx.cancel.is_cancelled();
    if !can_repair {
        return (
            crate::offload::blocking(|| verify::static_web(ctx)),
            model_answer,
        );
    }
    let (diagnostics, repair) = crate::offload::blocking(|| verify::static_web_repairable(ctx));
    let Some(repair) = repair else {
        return (diagnostics, model_answer);
    };
    ctx.core.begin_repair(&repair);
    let answer = model_loop::repair(ctx, &repair.prompt).await;
    ctx.core.settle();
    let diagnostics = crate::offload::blocking(|| verify::static_web(ctx));
    match answer {
        Some(answer) if !answer.trim().is_empty() => (diagnostics, answer),
        _ => (diagnostics, model_answer),
    }
}

/// The answer before the guards: by the route the core chose.
async fn answer(ctx: &mut TurnCtx, prompt: &str, prior: Option<PriorRecord>) -> String {
    let route = route::route(
        ctx.core.settings.mode,
        &ctx.core.plan,
        prompt,
        prior.is_some(),
    );
    if route != Route::Model {
        ctx.core.record.tool_calling = CallingRecord::None;
    }
    match route {
        Route::Viewer(command) => viewer::answer(ctx, command).await,
        Route::StatusFromRecords => prior
            .as_ref()
            .map(route::status_from_records)
            .unwrap_or_default(),
        Route::Fixed(text) => text.to_string(),
        Route::UnreadableDocuments(documents) => {
            let message = format!("{} cannot be read by the text tools", documents.join(", "));
            ctx.core
                .record
                .warn(WarningCode::DocumentNotReadable, message);
            let answer = route::document_note(&documents);
            ctx.core.record.facts.unreadable_documents = documents;
            answer
        }
        Route::Model => model_loop::run(ctx).await,
    }
}

async fn finish(
    mut ctx: TurnCtx,
    model_answer: String,
    prompt: &str,
) -> (proto::TurnOutcome, Vec<String>) {
    if ctx.cancel.is_cancelled() {
        ctx.core.record.facts.cancelled = true;
    }
    ctx.core.settle();
    let (diagnostics, model_answer) = web_checks(&mut ctx, model_answer).await;
    let done = ctx.core.finish(&model_answer, diagnostics);
    let status = to_proto::status(done.fine.status());
    let classification = to_proto::classification(done.fine);
    to_proto::record::fill(&mut ctx.trace, &ctx.core.record);
    ctx.trace.outcome = TraceOutcome {
        status,
        classification,
        mutation_status: done.mutation_status.into(),
        approval_status: done.approval_status.into(),
        answer: to_proto::text_digest(&done.answer),
        obligation_retries: ctx.core.record.facts.obligation_retries,
    };
    ctx.trace.finished_at_ms = now_ms();
    let workspace = ctx.session.workspace.display().to_string();
    let turn_log = ctx
        .daemon
        .config
        .traces
        .turn_log
        .then_some(crate::traces::TurnText {
            request: prompt,
            answer: &done.answer,
            workspace: &workspace,
        });
    let written = crate::offload::blocking(|| {
        crate::traces::write(&ctx.daemon.home.traces(), &ctx.trace, turn_log.as_ref())
    });
    let trace_path = match written {
        Ok(path) => Some(path.display().to_string()),
        Err(e) => {
            tracing::error!(error = %e, "cannot write trace");
            None
        }
    };
    let record = &mut ctx.core.record;
    let outcome = proto::TurnOutcome {
        turn_id: ctx.turn_id.to_string(),
        status,
        classification,
        final_answer: done.answer,
        trace_id: ctx.trace.trace_id.clone(),
        trace_path,
        files: to_proto::record::files(std::mem::take(&mut record.files)),
    };
    let findings = std::mem::take(&mut record.facts.task_findings);
    if ctx.core.answer_held() && !outcome.final_answer.is_empty() {
        // The held answer, now that the guards have decided: one stream, then the outcome.
        let stream = "answer".to_string();
        ctx.emit(TurnEvent::StreamStart {
            stream: stream.clone(),
        })
        .await;
        ctx.emit(TurnEvent::StreamChunk {
            stream: stream.clone(),
            text: outcome.final_answer.clone(),
        })
        .await;
        ctx.emit(TurnEvent::StreamEnd { stream }).await;
    }
    ctx.emit(TurnEvent::Outcome {
        outcome: outcome.clone(),
    })
    .await;
    tracing::info!(turn = %ctx.turn_id, ?status, ?classification, "turn finished");
    (outcome, findings)
}

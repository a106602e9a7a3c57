//! One turn, in the order of docs/architecture.md: contract, posture, plan, surface, proposal,
//! checks, ladder, approval, checkpoint, write and verification, outcome and trace. Every
//! decision, and the order of the steps, is made by talos-core's turn state machine
//! (`talos_core::turn::Turn::step`); this module performs the effects it asks for, reports
//! their results, and writes down what the session keeps.

mod calls;
mod command;
mod context;
mod effects;
mod model;
mod pins;
mod retrieve;
mod verify;

use std::sync::Arc;

use talos_core::history::PriorOutcome;
use talos_core::modes::SessionMode;
use talos_core::plan::{PlanSettings, TurnPlan};
use talos_core::turn::finish::Final;
use talos_core::turn::machine::{Interrupt, ModelSettings, TurnEffect, TurnInput};
use talos_core::turn::route;
use talos_core::turn::{Turn, TurnSettings};
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::TraceOutcome;

use crate::clock::now_ms;
use crate::connection::Peer;
use crate::reading;
use crate::server::Daemon;
use crate::sessions::SessionTurn;
use crate::to_proto;
use context::TurnCtx;

/// What a client asked for.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    pub prompt: String,
    pub pins: Vec<String>,
    /// Made by the caller before the session was claimed, so a failed random source refuses
    /// the turn instead of running it under a guessable id.
    pub turn_id: crate::ids::TurnId,
    pub trace_id: crate::ids::TraceId,
    /// The session's workspace handle, opened again by the caller if it was released.
    pub files: Arc<crate::workspace::Workspace>,
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
    let (plan, asked) = plan(&daemon, &session, (&request, &peer), mode, &resolved).await;
    let model = daemon.models.lease(
        daemon
            .models
            .of_session(session.selected_model().as_deref(), session.id.as_str()),
    );
    let trace = to_proto::record::header(&to_proto::record::Header {
        session_id: session.id.as_str(),
        trace_id: request.trace_id.as_str(),
        turn_id: turn_id.as_str(),
        turn_number,
        started_at_ms: now_ms(),
        workspace: &session.workspace,
        mode: session.mode.as_str(),
        model_url: &model.entry.engine.url,
        model_name: &model.entry.name,
        prompt: &request.prompt,
        plan: &plan,
    });
    let core = core_turn(&daemon, &session, &request, plan, &model.entry.config).await;
    let mut ctx = TurnCtx::new(
        daemon,
        (session.session(), request.files.clone()),
        peer,
        turn_id.clone(),
        (trace, core),
        model,
        session.cancel_token(),
    );
    settled(&mut ctx, asked);
    let contract = ctx.core.plan.contract();
    tracing::info!(turn = %turn_id, task = contract.task_type.as_str(), mode = mode.as_str(), model = %ctx.model.entry.name, "turn started");
    let done = drive(&mut ctx).await;
    let (outcome, findings) = finish(&mut ctx, done, &request.prompt).await;
    session.turn_ended();
    session
        .session()
        .set_instructions(ctx.trace.instructions.clone());
    if route::remembered(&resolved) {
        session.remember_outcome(&outcome);
        session.remember_findings(findings);
        let changed = outcome
            .files
            .iter()
            .filter(|f| f.changed)
            .map(|f| f.path.clone())
            .collect();
        session.remember_turn(
            request.prompt.clone(),
            talos_core::history::PriorTurn {
                contract: resolved,
                outcome: PriorOutcome::of(to_proto::fine(outcome.classification)),
                changed,
            },
            outcome.final_answer.clone(),
        );
    }
    sessions.persist(&session);
    // One sync makes the trace, the turn log, the checkpoint's after-states and the session
    // durable before the outcome is reported (home.rs).
    let home = sessions.home.state_store();
    if let Err(e) = crate::offload::blocking(|| home.sync_filesystem()) {
        tracing::error!(error = %e, "cannot sync the Talos home after a turn");
    }
    announce(&mut ctx, &outcome).await;
    outcome
}

/// What the reading question left (`crate::reading`): the trace keeps it, and a cancel while
/// it waited stops the turn.
fn settled(ctx: &mut TurnCtx, asked: Option<reading::Settled>) {
    let Some(asked) = asked else {
        return;
    };
    if asked.source == proto::ChoiceSource::Cancelled {
        ctx.core.interrupt(Interrupt::Cancelled);
    }
    ctx.trace.task_contract.reading = asked.trace;
}

/// The core's turn: the plan under the settings, with what the session remembers and the
/// project's instruction files.
async fn core_turn(
    daemon: &Daemon,
    session: &SessionTurn,
    request: &TurnRequest,
    plan: TurnPlan,
    model: &crate::config::ModelConfig,
) -> Turn {
    let prior = session.last_outcome().map(|o| to_proto::record::prior(&o));
    let mode = to_proto::mode(session.mode);
    let scope = crate::mcp::Scope::of(session.id.as_str(), &session.workspace);
    let read_only = mode.posture().read_only();
    let (offer, problems) = daemon.mcp.offer(&scope, &request.prompt, read_only).await;
    let config = (
        &daemon.config.instructions,
        daemon.home.config_file.parent(),
    );
    let directory = session.session().directory();
    let (found, max) = crate::instructions::for_turn(config, &directory, &request.files);
    Turn::new(plan, settings(daemon, model, mode), session.grants())
        .with_external(offer, problems)
        .with_context(prior, session.conversation())
        .with_instructions(found, max)
}

/// The turn's settings from the daemon's configuration and the turn's model.
fn settings(
    daemon: &Daemon,
    model: &crate::config::ModelConfig,
    mode: SessionMode,
) -> TurnSettings {
    let config = &daemon.config;
    TurnSettings {
        mode,
        strict_names: config.tools.strict_names,
        rules: daemon.rules.clone(),
        require_tool_call: config.tools.require_tool_call,
        allow_invisible_path_characters: config.permissions.allow_invisible_path_characters,
        model: ModelSettings {
            native_calling: config.tools.native_calling,
            constrain: model.constrain_level(),
            preread_max_bytes: config.turn.preread_max_bytes,
            ctx_per_request: model.ctx_per_request(),
            reply_tokens: model.reply_tokens,
        },
        pre_call_hooks: config.hooks.pre_call.len(),
    }
}

/// Drives the core's turn machine: each effect performed, each result fed back, until the end.
async fn drive(ctx: &mut TurnCtx) -> Final {
    let mut input = TurnInput::Start;
    loop {
        // Remembered approvals are read as they stand now: a revoke from another connection
        // takes effect at the next call.
        ctx.core.grants = ctx.session.grants();
        let effect = ctx.core.step(input);
        ctx.emit_notices().await;
        input = match effect {
            TurnEffect::Finish(done) => return done,
            effect => perform(ctx, effect).await,
        };
        if ctx.cancel.is_cancelled() {
            ctx.core.interrupt(Interrupt::Cancelled);
        } else if ctx.client_gone() {
            ctx.core.interrupt(Interrupt::ClientGone);
        }
    }
}

async fn perform(ctx: &mut TurnCtx, effect: TurnEffect) -> TurnInput {
    match effect {
        TurnEffect::Probe => TurnInput::Server(model::probe(ctx).await),
        TurnEffect::Pin(paths) => TurnInput::Pinned(pins::read_all(ctx, &paths)),
        TurnEffect::Retrieve { query } => TurnInput::Retrieved(retrieve::search(ctx, query).await),
        TurnEffect::Inspect {
            paths,
            read,
            read_cap,
        } => {
            let workspace = ctx.files.clone();
            TurnInput::Named(crate::offload::blocking(|| {
                effects::inspect(&workspace, &paths, &read, read_cap)
            }))
        }
        TurnEffect::Count(items) => TurnInput::Counted(model::count(ctx, &items).await),
        TurnEffect::Request(request) => model::request(ctx, &request).await,
        TurnEffect::Call { call_id, effect } => {
            TurnInput::Call(calls::perform(ctx, &call_id, effect).await)
        }
        TurnEffect::WebCheck { focus } => {
            TurnInput::Web(crate::offload::blocking(|| verify::web_report(ctx, &focus)))
        }
        TurnEffect::Finish(_) => TurnInput::Start,
    }
}

/// The turn plan: the contract against the workspace's commands and files, under the mode's
/// posture, with the follow-up's context; an uncertain reading is asked first and the chosen
/// one planned, or, unanswered, left for the core to end before the model (`crate::reading`).
async fn plan(
    daemon: &Daemon,
    session: &SessionTurn,
    (request, peer): (&TurnRequest, &Peer),
    mode: SessionMode,
    resolved: &talos_core::contract::TaskContract,
) -> (TurnPlan, Option<reading::Settled>) {
    let commands = crate::commands::workspace_commands(&daemon.home.state, &request.files);
    // A repair follow-up works on what is left (the session keeps the full contract).
    let narrowed = talos_core::history::narrow_repair(
        resolved.clone(),
        &session.last_changed(),
        &session.last_findings(),
    );
    let with_commands = talos_core::contract::with_workspace(narrowed, &commands);
    let with_files =
        crate::offload::blocking(|| reading::with_workspace_files(&request.files, with_commands));
    let reconciled = crate::webcheck::reconciled(&request.files, with_files);
    let asking = reading::Asking {
        peer,
        cancel: &session.cancel_token(),
        timeout: std::time::Duration::from_secs(daemon.config.approval.timeout_secs),
        session_id: session.id.as_str(),
        turn_id: request.turn_id.as_str(),
    };
    let (effective, asked) = reading::settle(&asking, mode.posture(), reconciled).await;
    let settings = PlanSettings {
        iteration_budget: daemon.config.turn.max_model_calls,
        pinned: request.pins.clone(),
        active_task_context: route::active_task_context(resolved, &session.last_findings()),
    };
    (TurnPlan::compiled(effective, settings), asked)
}

/// The trace and the outcome, from the core's end of the turn (told by [`announce`] once
/// the home is synced).
async fn finish(ctx: &mut TurnCtx, done: Final, prompt: &str) -> (proto::TurnOutcome, Vec<String>) {
    let status = to_proto::status(done.fine.status());
    let classification = to_proto::classification(done.fine);
    to_proto::record::fill(&mut ctx.trace, ctx.core.record());
    ctx.trace.outcome = TraceOutcome {
        status,
        classification,
        mutation_status: done.mutation_status.into(),
        approval_status: done.approval_status.into(),
        answer: to_proto::text_digest(&done.answer),
        obligation_retries: ctx.core.record().facts.obligation_retries,
    };
    let mut outcome = proto::TurnOutcome {
        turn_id: ctx.turn_id.to_string(),
        status,
        classification,
        final_answer: done.answer,
        trace_id: ctx.trace.trace_id.clone(),
        trace_path: None,
        files: to_proto::record::files(ctx.core.take_files()),
    };
    let told =
        crate::hooks::told_outcome(ctx.session.id.as_str(), &ctx.session.workspace, &outcome);
    let during = (ctx.session.workspace.as_path(), &ctx.daemon.stopping);
    let post = crate::hooks::post_turn(&ctx.daemon.config.hooks, during, &told);
    ctx.trace
        .hooks
        .extend(post.await.iter().map(to_proto::record::hook));
    ctx.trace.finished_at_ms = now_ms();
    let traces = ctx.daemon.home.traces();
    outcome.trace_path = crate::traces::write_turn(
        (&traces, ctx.daemon.config.traces.turn_log),
        &ctx.trace,
        &ctx.session.workspace,
        (prompt, &outcome.final_answer),
    );
    tracing::info!(turn = %ctx.turn_id, ?status, ?classification, "turn finished");
    (outcome, ctx.core.take_findings())
}

/// The held answer (one stream, now that the guards have decided) and the outcome event.
async fn announce(ctx: &mut TurnCtx, outcome: &proto::TurnOutcome) {
    if ctx.core.answer_held() && !outcome.final_answer.is_empty() {
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
}

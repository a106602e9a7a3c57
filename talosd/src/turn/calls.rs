//! One proposed call, driven through talos-core's call state machine: the core decides (checks,
//! ladder, discipline, what is asked, when nothing is written) and returns one effect at a
//! time; this module performs it and reports the result back. No policy is decided here.

use talos_core::turn::call::{CallReport, Effect, Input, Proposal};

use super::context::TurnCtx;
use super::{command, effects, read_tools};

/// Runs one call to its report.
pub async fn dispatch(ctx: &mut TurnCtx, proposal: Proposal) -> CallReport {
    // Remembered approvals are read as they stand now: a revoke from another connection
    // takes effect at the next call.
    ctx.core.grants = ctx.session.grants();
    let mut call = ctx.core.propose(proposal);
    let mut input = Input::Start;
    // The checkpoint this call took, completed with the state its change left.
    let mut checkpoint: Option<String> = None;
    loop {
        let effect = call.step(&mut ctx.core, input);
        ctx.emit_notices().await;
        let changes = matches!(effect, Effect::Write { .. } | Effect::ApplyOps(_));
        input = match effect {
            Effect::Finish(report) => return report,
            effect => perform(ctx, &call.id, effect).await,
        };
        if let Input::Checkpointed(Ok(taken)) = &input {
            checkpoint = Some(taken.checkpoint_id.clone());
        }
        if changes && let Some(id) = checkpoint.take() {
            let job = effects::CheckpointJob::of(ctx, &call.id);
            off_worker(move || {
                effects::record_after(&job, &id);
                Input::Done
            })
            .await;
        }
    }
}

pub async fn perform(ctx: &mut TurnCtx, call_id: &str, effect: Effect) -> Input {
    let workspace = ctx.session.files.clone();
    match effect {
        Effect::Resolve(paths) => {
            off_worker(move || {
                Input::Resolved(
                    paths
                        .iter()
                        .map(|p| effects::resolve(&workspace, p))
                        .collect(),
                )
            })
            .await
        }
        Effect::Ask(ask) => match ctx.ask_for(call_id, ask).await {
            Ok((request_id, answer)) => Input::Answered { request_id, answer },
            Err(e) => Input::Failed(e.to_string()),
        },
        Effect::Read(args) => {
            let index_home = ctx.daemon.home.index();
            off_worker(move || {
                Input::Output(
                    crate::index::tool::call(&index_home, &workspace, &args)
                        .unwrap_or_else(|| read_tools::run(&workspace, &args)),
                )
            })
            .await
        }
        Effect::ReadCurrent { path } => {
            off_worker(move || Input::Current(effects::read_current(&workspace, &path))).await
        }
        Effect::Checkpoint { .. } if ctx.cancel.is_cancelled() => Input::Cancelled,
        Effect::Checkpoint {
            tool,
            paths,
            before,
        } => {
            let job = effects::CheckpointJob::of(ctx, call_id);
            off_worker(move || Input::Checkpointed(effects::checkpoint(&job, tool, &paths, before)))
                .await
        }
        Effect::Write {
            path,
            expected,
            bytes,
        } => {
            let index_home = ctx.daemon.home.index();
            off_worker(move || {
                let written = effects::write(&workspace, &path, expected.as_deref(), &bytes);
                // A file Talos wrote is reindexed at once (when the index holds it).
                if written.is_ok()
                    && let Ok(placed) = workspace.place(&path)
                    && let Err(e) =
                        crate::index::reindex_file(&index_home, &workspace, &placed.location)
                {
                    tracing::warn!(error = %e, "reindexing a written file failed");
                }
                Input::Written(written)
            })
            .await
        }
        Effect::CheckOps(ops) => {
            off_worker(move || Input::OpsChecked(effects::check_ops(&workspace, &ops))).await
        }
        Effect::ApplyOps(ops) => {
            off_worker(move || Input::OpsApplied(effects::apply_ops(&workspace, &ops))).await
        }
        Effect::PlanCommand(request) => {
            let state = ctx.daemon.home.state.clone();
            off_worker(move || Input::CommandPlanned(command::plan(&state, &workspace, &request)))
                .await
        }
        Effect::RunCommand { plan, .. } => {
            Input::CommandRan(command::run(ctx, call_id, &plan).await)
        }
        Effect::RememberWrites => {
            ctx.session.remember_writes();
            Input::Done
        }
        Effect::Finish(_) => Input::Done,
    }
}

/// Runs a filesystem effect on the blocking pool: a slow disk, or a special file that slipped
/// past the checks, holds one blocking thread, never an async worker that other connections
/// need (issue 11, defect 3).
async fn off_worker(effect: impl FnOnce() -> Input + Send + 'static) -> Input {
    tokio::task::spawn_blocking(effect)
        .await
        .unwrap_or_else(|e| Input::Failed(format!("internal: a file task failed ({e})")))
}

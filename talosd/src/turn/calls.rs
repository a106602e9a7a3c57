//! The effects of one proposed call, asked for by talos-core's call state machine (nested in
//! the turn machine): the core decides (checks, ladder, discipline, what is asked, when
//! nothing is written) and returns one effect at a time; this module performs it and reports
//! the result back. No policy is decided here.

use talos_core::turn::call::{Effect, Input};

use super::context::TurnCtx;
use super::{command, effects};
use crate::read_tools;

/// Performs one effect of a call (or of `auto`'s viewer) and returns its result. A change
/// completes the checkpoint the call took with the state it left.
pub async fn perform(ctx: &mut TurnCtx, call_id: &str, effect: Effect) -> Input {
    let changes = matches!(effect, Effect::Write { .. } | Effect::ApplyOps(_));
    let input = perform_effect(ctx, call_id, effect).await;
    if let Input::Checkpointed(Ok(taken)) = &input {
        ctx.checkpoint = Some(taken.checkpoint_id.clone());
    }
    if changes && let Some(id) = ctx.checkpoint.take() {
        let job = effects::checkpoint_job(ctx, call_id);
        off_worker(move || {
            crate::checkpoint::job::record_after(&job, &id);
            Input::Done
        })
        .await;
    }
    input
}

async fn perform_effect(ctx: &mut TurnCtx, call_id: &str, effect: Effect) -> Input {
    let workspace = ctx.files.clone();
    match effect {
        Effect::Resolve(paths) => {
            off_worker(move || Input::Resolved(effects::resolve_all(&workspace, &paths))).await
        }
        Effect::Ask(ask) => match ctx.ask_for(call_id, ask).await {
            Ok((request_id, answer)) => Input::Answered { request_id, answer },
            Err(e) => Input::Failed(e.to_string()),
        },
        Effect::Read(args) => {
            let index_home = ctx.daemon.home.index();
            let cancel = ctx.cancel.clone();
            off_worker(move || {
                Input::Output(
                    crate::index::tool::call(&index_home, &workspace, &args, &|| {
                        cancel.is_cancelled()
                    })
                    .unwrap_or_else(|| read_tools::run(&workspace, &args)),
                )
            })
            .await
        }
        Effect::ReadCurrent { path } => {
            off_worker(move || Input::Current(effects::read_current(&workspace, &path))).await
        }
        effect @ (Effect::Checkpoint { .. }
        | Effect::Write { .. }
        | Effect::CheckOps(_)
        | Effect::ApplyOps(_)) => change_effect(ctx, call_id, effect).await,
        Effect::PlanCommand(request) => {
            let state = ctx.daemon.home.state.clone();
            off_worker(move || {
                Input::CommandPlanned(crate::commands::plan(&state, &workspace, &request))
            })
            .await
        }
        Effect::RunCommand { plan, .. } => {
            Input::CommandRan(command::run(ctx, call_id, &plan).await)
        }
        effect @ (Effect::PreCall(_) | Effect::CallExternal { .. }) => {
            extension_effect(ctx, effect).await
        }
        Effect::RememberWrites => {
            ctx.session.remember_writes();
            Input::Done
        }
        Effect::Finish(_) => Input::Done,
    }
}

/// The effects of issue 28's extensions: the `pre_call` hooks, and a call to an MCP tool.
async fn extension_effect(ctx: &mut TurnCtx, effect: Effect) -> Input {
    let scope = crate::mcp::Scope::of(ctx.session.id.as_str(), &ctx.session.workspace);
    match effect {
        Effect::PreCall(told) => {
            let ids = (ctx.session.id.as_str(), ctx.turn_id.as_str());
            let hooks = &ctx.daemon.config.hooks;
            let (workspace, cancel) = (&ctx.session.workspace, &ctx.cancel);
            Input::Hooked(crate::hooks::pre_call(hooks, workspace, ids, told, cancel).await)
        }
        Effect::CallExternal {
            server,
            tool,
            arguments,
            unasked_paths,
        } => {
            let (hub, cancel) = (&ctx.daemon.mcp, ctx.cancel.clone());
            let files = (ctx.files.as_ref(), unasked_paths.as_slice());
            hub.call_for_turn(&scope, (&server, &tool), arguments, files, cancel)
                .await
        }
        other => Input::Failed(format!("internal: {other:?} is not an extension's")),
    }
}

/// The effects of a change: its checkpoint, its write, its workspace operations.
async fn change_effect(ctx: &mut TurnCtx, call_id: &str, effect: Effect) -> Input {
    let workspace = ctx.files.clone();
    match effect {
        Effect::Checkpoint { .. } if ctx.cancel.is_cancelled() => Input::Cancelled,
        Effect::Checkpoint {
            tool,
            paths,
            before,
        } => {
            let job = effects::checkpoint_job(ctx, call_id);
            off_worker(move || {
                Input::Checkpointed(crate::checkpoint::job::checkpoint(
                    &job, tool, &paths, before,
                ))
            })
            .await
        }
        Effect::Write {
            path,
            expected,
            bytes,
        } => {
            let index_home = ctx.daemon.home.index();
            off_worker(move || {
                Input::Written(effects::write_and_reindex(
                    &workspace,
                    &index_home,
                    &path,
                    expected.as_deref(),
                    &bytes,
                ))
            })
            .await
        }
        Effect::CheckOps(ops) => {
            off_worker(move || Input::OpsChecked(effects::check_ops(&workspace, &ops))).await
        }
        Effect::ApplyOps(ops) => {
            off_worker(move || Input::OpsApplied(effects::apply_ops(&workspace, &ops))).await
        }
        other => Input::Failed(format!("internal: {other:?} is not a change")),
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

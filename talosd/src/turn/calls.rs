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
    loop {
        let effect = call.step(&mut ctx.core, input);
        ctx.emit_notices().await;
        input = match effect {
            Effect::Finish(report) => return report,
            effect => perform(ctx, &call.id, effect).await,
        };
    }
}

pub async fn perform(ctx: &mut TurnCtx, call_id: &str, effect: Effect) -> Input {
    let workspace = ctx.session.files.clone();
    match effect {
        Effect::Resolve(paths) => Input::Resolved(
            paths
                .iter()
                .map(|p| effects::resolve(&workspace, p))
                .collect(),
        ),
        Effect::Ask(ask) => match ctx.ask_for(ask).await {
            Ok((request_id, answer)) => Input::Answered { request_id, answer },
            Err(e) => Input::Failed(e.to_string()),
        },
        Effect::Read(args) => Input::Output(read_tools::run(&workspace, &args)),
        Effect::ReadCurrent { path } => Input::Current(effects::read_current(&workspace, &path)),
        Effect::Checkpoint { .. } if ctx.cancel.is_cancelled() => Input::Cancelled,
        Effect::Checkpoint {
            tool,
            paths,
            before,
        } => Input::Checkpointed(effects::checkpoint(ctx, call_id, tool, &paths, before)),
        Effect::Write {
            path,
            expected,
            bytes,
        } => Input::Written(effects::write(
            &workspace,
            &path,
            expected.as_deref(),
            &bytes,
        )),
        Effect::CheckOps(ops) => Input::OpsChecked(effects::check_ops(&workspace, &ops)),
        Effect::ApplyOps(ops) => Input::OpsApplied(effects::apply_ops(&workspace, &ops)),
        Effect::PlanCommand(request) => Input::CommandPlanned(command::plan(ctx, &request)),
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

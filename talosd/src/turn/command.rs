//! `talos.run_command`'s run in a turn: the planned command located again (`crate::commands`)
//! and run through the runner with its output streamed as tool progress (redacted). What is
//! asked, what the model sees and how the call ends are decided by talos-core
//! (`talos_core::turn::call`).

use talos_core::command::{self, CommandPlan};
use talos_core::turn::call::CommandRun;
use talos_protocol::event::TurnEvent;

use super::context::TurnCtx;
use crate::commands::locate;
use crate::contain;
use crate::runner::{self, RunSpec, Stream};

/// Runs the plan, streaming its output (redacted) as tool progress.
pub async fn run(
    ctx: &mut TurnCtx,
    call_id: &str,
    plan: &CommandPlan,
) -> Result<CommandRun, String> {
    let workspace = ctx.files.clone();
    let (program, cwd) = locate(&workspace, plan)?;
    let wrapped = contain::wrap(&program, &plan.args, plan.isolation, workspace.root());
    let spec = RunSpec {
        program: wrapped.program.clone(),
        args: wrapped.args.clone(),
        cwd,
        timeout: std::time::Duration::from_millis(plan.timeout_ms),
        stdout_cap: plan.stdout_cap,
        stderr_cap: plan.stderr_cap,
    };
    let cancel = ctx.cancel.child_token();
    let on_disconnect = {
        let (peer_closed, cancel) = (ctx.peer.closed.clone(), cancel.clone());
        tokio::spawn(async move {
            peer_closed.cancelled().await;
            cancel.cancel();
        })
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Stream, String)>(256);
    let run = runner::run(&spec, &cancel, tx);
    tokio::pin!(run);
    let result = loop {
        tokio::select! {
            done = &mut run => break done,
            Some((stream, line)) = rx.recv() => progress(ctx, call_id, stream, &line).await,
        }
    };
    on_disconnect.abort();
    while let Ok((stream, line)) = rx.try_recv() {
        progress(ctx, call_id, stream, &line).await;
    }
    let result = result.map_err(|e| e.to_string())?;
    Ok(CommandRun {
        exit_code: result.exit_code,
        timed_out: result.timed_out,
        cancelled: result.cancelled,
        duration_ms: result.duration_ms,
        stdout: result.stdout,
        stderr: result.stderr,
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
    })
}

async fn progress(ctx: &mut TurnCtx, call_id: &str, stream: Stream, line: &str) {
    let prefix = match stream {
        Stream::Stdout => "",
        Stream::Stderr => "stderr: ",
    };
    ctx.emit(TurnEvent::ToolProgress {
        tool: "talos.run_command".into(),
        call_id: call_id.into(),
        message: format!("{prefix}{}", command::redact_secrets(line).text),
    })
    .await;
}

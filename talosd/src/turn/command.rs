//! `talos.run_command`: the plan is checked again against the workspace's current trust
//! state, resolved on disk (cwd inside the workspace, the wrapper present), wrapped for the
//! containment the kernel grants, always asked, run through the runner with its output
//! streamed as tool progress, and reported to the model only after redaction.

use std::path::PathBuf;

use talos_core::command::{self, CommandPlan, CommandRequest, Program};
use talos_core::discipline::CallEnd;
use talos_core::ladder::{Action, PermissionDecision};
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::{TraceApproval, TraceCommand};

use super::context::TurnCtx;
use super::mutate::MutationReply;
use crate::contain;
use crate::profiles::{PinStore, snapshot};
use crate::runner::{self, RunSpec, Stream};
use crate::to_proto;

fn refused(text: String) -> MutationReply {
    MutationReply {
        text,
        end: CallEnd::Failed,
        stop: false,
    }
}

/// Where the plan's program and cwd are on disk, or why they are refused.
fn locate(ctx: &TurnCtx, plan: &CommandPlan) -> Result<(PathBuf, PathBuf), String> {
    let root = &ctx.session.workspace;
    let cwd = crate::boundary::resolve(root, &plan.cwd);
    let Some(cwd_path) = cwd.absolute.filter(|p| !cwd.facts.escapes && p.is_dir()) else {
        return Err(command::refusal(&format!(
            "Command cwd escapes workspace or is not a directory: {}",
            plan.cwd
        )));
    };
    let program = match &plan.program {
        Program::Wrapper(name) => {
            let wrapper = cwd_path.join(name.trim_start_matches("./"));
            if !wrapper.is_file() {
                return Err(command::refusal(&format!(
                    "Gradle command profile requires selected wrapper `{name}` in the selected workspace/cwd."
                )));
            }
            wrapper
        }
        Program::OnPath(name) => PathBuf::from(name),
        Program::Path(path) if path.starts_with('/') => PathBuf::from(path),
        Program::Path(path) => {
            let resolved = crate::boundary::resolve(root, path);
            match resolved
                .absolute
                .filter(|p| !resolved.facts.escapes && p.is_file())
            {
                Some(p) => p,
                None => {
                    return Err(command::refusal(&format!(
                        "profile executable not found inside the workspace: {path}"
                    )));
                }
            }
        }
    };
    Ok((program, cwd_path))
}

pub async fn run(
    ctx: &mut TurnCtx,
    call_id: &str,
    request: &CommandRequest,
    decision: &PermissionDecision,
) -> MutationReply {
    let pins = PinStore::new(&ctx.daemon.home.state);
    let plan = match command::plan(request, &snapshot(&ctx.session.workspace, &pins).registry) {
        Ok(plan) => plan,
        Err(message) => return refused(message),
    };
    let (program, cwd) = match locate(ctx, &plan) {
        Ok(found) => found,
        Err(message) => return refused(message),
    };
    let wrapped = contain::wrap(&program, &plan.args, plan.isolation, &ctx.session.workspace);
    let mut details = plan.description.clone();
    if plan.isolation.network && !wrapped.network_isolated {
        details.push("network: NOT isolated - this machine cannot create a network namespace; approving runs the command with the host network".into());
    }
    if plan.isolation.writes && !wrapped.writes_confined {
        details.push("writes: NOT confined - the kernel does not enforce Landlock here; approving runs the command uncontained".into());
    }
    if decision.action == Action::Ask {
        let params = proto::ApprovalRequestParams {
            turn_id: ctx.turn_id.clone(),
            session_id: ctx.session.id.clone(),
            request_id: crate::ids::new_id("apr"),
            tool: "talos.run_command".into(),
            description: format!("run command profile: {}", plan.profile_id),
            target: Some(plan.cwd.clone()),
            details,
            diff: None,
            remember_eligible: false,
        };
        let request_id = params.request_id.clone();
        let (answer, source) = ctx.ask(params).await;
        ctx.trace.approvals.push(TraceApproval {
            request_id,
            call_id: call_id.into(),
            tool: "talos.run_command".into(),
            decision: answer,
            source,
            diff_added: 0,
            diff_removed: 0,
            diff_truncated: false,
        });
        if answer == proto::Decision::Deny {
            ctx.facts.command_denied = true;
            return MutationReply {
                text: format!(
                    "User did not approve running {}. No command was executed.",
                    plan.profile_id
                ),
                end: CallEnd::Denied,
                stop: true,
            };
        }
    }
    // Trust again, just before the process starts: a declaration changed since planning no
    // longer runs.
    if plan.profile_id.starts_with("ws:") {
        let now = snapshot(&ctx.session.workspace, &pins);
        if command::plan(request, &now.registry).as_ref() != Ok(&plan) {
            return refused(command::refusal(
                "the workspace declaration changed after approval; nothing was run.",
            ));
        }
    }
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
            Some((stream, line)) = rx.recv() => {
                let shown = command::redact_secrets(&line).text;
                let prefix = match stream { Stream::Stdout => "", Stream::Stderr => "stderr: " };
                ctx.emit(TurnEvent::ToolProgress { tool: "talos.run_command".into(), call_id: call_id.into(), message: format!("{prefix}{shown}") }).await;
            }
        }
    };
    on_disconnect.abort();
    while let Ok((stream, line)) = rx.try_recv() {
        let prefix = match stream {
            Stream::Stdout => "",
            Stream::Stderr => "stderr: ",
        };
        ctx.emit(TurnEvent::ToolProgress {
            tool: "talos.run_command".into(),
            call_id: call_id.into(),
            message: format!("{prefix}{}", command::redact_secrets(&line).text),
        })
        .await;
    }
    let result = match result {
        Ok(result) => result,
        Err(e) => {
            ctx.facts.command_failed = true;
            return MutationReply {
                text: format!(
                    "Command failed: {} could not run. Reason: {e}",
                    plan.profile_id
                ),
                end: CallEnd::Failed,
                stop: false,
            };
        }
    };
    let stdout = command::redact_secrets(&String::from_utf8_lossy(&result.stdout));
    let stderr = command::redact_secrets(&String::from_utf8_lossy(&result.stderr));
    let redaction_applied = stdout.applied || stderr.applied;
    let withheld = redaction_applied
        || command::high_entropy(&stdout.text)
        || command::high_entropy(&stderr.text);
    let headline = if result.timed_out {
        format!(
            "Command timed out: {} after {}ms (process tree killed).",
            plan.profile_id, result.duration_ms
        )
    } else if result.cancelled {
        format!(
            "Command cancelled: {} after {}ms (process tree killed).",
            plan.profile_id, result.duration_ms
        )
    } else {
        match result.exit_code {
            Some(0) => format!(
                "Command succeeded: {} exited with code 0 after {}ms.",
                plan.profile_id, result.duration_ms
            ),
            Some(code) => format!(
                "Command failed: {} exited with code {code} after {}ms.",
                plan.profile_id, result.duration_ms
            ),
            None => format!(
                "Command failed: {} was ended by a signal after {}ms.",
                plan.profile_id, result.duration_ms
            ),
        }
    };
    let succeeded = result.exit_code == Some(0) && !result.timed_out && !result.cancelled;
    if !succeeded {
        ctx.facts.command_failed = true;
    }
    ctx.trace.commands.push(TraceCommand {
        call_id: call_id.into(),
        profile: plan.profile_id.clone(),
        argv: std::iter::once(program_display(&plan))
            .chain(plan.args.iter().cloned())
            .collect(),
        cwd: plan.cwd.clone(),
        exit_code: result.exit_code,
        timed_out: result.timed_out,
        cancelled: result.cancelled,
        duration_ms: result.duration_ms,
        stdout: to_proto::text_digest(&stdout.text),
        stderr: to_proto::text_digest(&stderr.text),
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
        redaction_applied,
        withheld_from_model: withheld,
        network_isolated: wrapped.network_isolated,
        writes_confined: wrapped.writes_confined,
    });
    let body = if withheld {
        "output withheld from the model: it needed secret redaction or held high-entropy content (the person saw it as it streamed)".to_string()
    } else {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            or_empty(&stdout.text),
            or_empty(&stderr.text)
        )
    };
    let text = format!(
        "{headline}\nprofile: {}\ncwd: {}\nargv: {}\nexitCode: {}\ntimedOut: {}\nstdoutTruncated: {}\nstderrTruncated: {}\nredactionApplied: {redaction_applied}\nnetworkIsolated: {}\nwritesConfined: {}\n{body}",
        plan.profile_id,
        plan.cwd,
        plan.argv_line(),
        result.exit_code.map_or("none".into(), |c| c.to_string()),
        result.timed_out,
        result.stdout_truncated,
        result.stderr_truncated,
        wrapped.network_isolated,
        wrapped.writes_confined,
    );
    MutationReply {
        text,
        end: if succeeded {
            CallEnd::Succeeded
        } else {
            CallEnd::Failed
        },
        stop: result.cancelled,
    }
}

fn program_display(plan: &CommandPlan) -> String {
    match &plan.program {
        Program::Wrapper(name) => (*name).to_string(),
        Program::OnPath(name) | Program::Path(name) => name.clone(),
    }
}

fn or_empty(text: &str) -> &str {
    if text.is_empty() { "(empty)" } else { text }
}

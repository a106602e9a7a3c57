//! `talos.run_command`: the daemon plans the request against the workspace's current profiles
//! and locates it; the person approves the argv, cwd and containment; the plan is made again
//! just before the process starts and a workspace declaration that changed meanwhile does not
//! run; the output reaches the model only after redaction, and not at all when redaction
//! applied or it looks like a secret.

use super::{Accepted, ApprovalAsk, Call, Effect, Input, State, finish, unexpected};
use crate::planning::command::{self, CommandPlan, CommandRequest};
use crate::proposal::discipline::CallEnd;
use crate::proposal::ladder::Action;
use crate::text::digest::digest_text;
use crate::turn::Turn;
use crate::turn::record::{ApprovalRecord, CommandRecord, Decision};

/// A plan the daemon located on disk, with the containment the kernel grants for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCommand {
    pub plan: CommandPlan,
    pub network_isolated: bool,
    pub writes_confined: bool,
}

/// How a run ended, as the runner saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRun {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct CommandFlow {
    accepted: Accepted,
    request: CommandRequest,
    step: Step,
}

#[derive(Debug, Clone)]
enum Step {
    Planning,
    Asked(PlannedCommand),
    Replanning(PlannedCommand),
    Running(PlannedCommand),
}

impl CommandFlow {
    pub(crate) fn start(accepted: Accepted, request: CommandRequest) -> (State, Effect) {
        let effect = Effect::PlanCommand(request.clone());
        let flow = CommandFlow {
            accepted,
            request,
            step: Step::Planning,
        };
        (State::Command(flow), effect)
    }

    pub(crate) fn step(self, call: &Call, turn: &mut Turn, input: Input) -> (State, Effect) {
        match (self.step.clone(), input) {
            (Step::Planning, Input::CommandPlanned(Err(message))) => {
                self.end(call, turn, message, CallEnd::Failed, false)
            }
            (Step::Planning, Input::CommandPlanned(Ok(planned))) => self.planned(planned),
            (Step::Asked(planned), Input::Answered { request_id, answer }) => {
                turn.record.approvals.push(ApprovalRecord {
                    request_id,
                    call_id: call.id.clone(),
                    tool: self.accepted.tool,
                    answer,
                    diff_added: 0,
                    diff_removed: 0,
                    diff_truncated: false,
                });
                if answer.decision == Decision::Deny {
                    turn.record.facts.command_denied = true;
                    let text = format!(
                        "User did not approve running {}. No command was executed.",
                        planned.plan.profile_id
                    );
                    return self.end(call, turn, text, CallEnd::Denied, true);
                }
                self.replan(planned)
            }
            (Step::Replanning(planned), Input::CommandPlanned(now)) => {
                // Trust again, just before the process starts: a declaration changed since
                // planning no longer runs.
                if now.as_ref().map(|n| &n.plan) != Ok(&planned.plan) {
                    let text = command::refusal(
                        "the workspace declaration changed after approval; nothing was run.",
                    );
                    return self.end(call, turn, text, CallEnd::Failed, false);
                }
                self.run(planned)
            }
            (Step::Running(planned), Input::CommandRan(ran)) => self.ran(call, turn, &planned, ran),
            (_, other) => unexpected(&other),
        }
    }

    fn next(self, step: Step, effect: Effect) -> (State, Effect) {
        (State::Command(CommandFlow { step, ..self }), effect)
    }

    fn planned(self, planned: PlannedCommand) -> (State, Effect) {
        if self.accepted.decision.action != Action::Ask {
            return self.replan(planned);
        }
        let plan = &planned.plan;
        let mut details = plan.description.clone();
        if plan.isolation.network && !planned.network_isolated {
            details.push("network: NOT isolated - this machine cannot create a network namespace; approving runs the command with the host network".into());
        }
        if plan.isolation.writes && !planned.writes_confined {
            details.push("writes: NOT confined - the kernel does not enforce Landlock here; approving runs the command uncontained".into());
        }
        let ask = ApprovalAsk {
            tool: self.accepted.tool.name().into(),
            description: format!("run command profile: {}", plan.profile_id),
            target: Some(plan.cwd.clone()),
            details,
            diff: None,
            change: None,
            remember_eligible: false,
        };
        self.next(Step::Asked(planned), Effect::Ask(ask))
    }

    /// A workspace profile is planned again just before it runs (its declaration may have
    /// changed since the approval); a built-in one cannot change and runs as approved.
    fn replan(self, planned: PlannedCommand) -> (State, Effect) {
        if !planned.plan.profile_id.starts_with("ws:") {
            return self.run(planned);
        }
        let effect = Effect::PlanCommand(self.request.clone());
        self.next(Step::Replanning(planned), effect)
    }

    fn run(self, planned: PlannedCommand) -> (State, Effect) {
        let effect = Effect::RunCommand {
            request: self.request.clone(),
            plan: planned.plan.clone(),
        };
        self.next(Step::Running(planned), effect)
    }

    fn ran(
        self,
        call: &Call,
        turn: &mut Turn,
        planned: &PlannedCommand,
        ran: Result<CommandRun, String>,
    ) -> (State, Effect) {
        let plan = &planned.plan;
        let result = match ran {
            Ok(result) => result,
            Err(e) => {
                turn.record.facts.command_failed = true;
                let text = format!(
                    "Command failed: {} could not run. Reason: {e}",
                    plan.profile_id
                );
                return self.end(call, turn, text, CallEnd::Failed, false);
            }
        };
        let stdout = command::redact_secrets(&String::from_utf8_lossy(&result.stdout));
        let stderr = command::redact_secrets(&String::from_utf8_lossy(&result.stderr));
        let redaction_applied = stdout.applied || stderr.applied;
        let withheld = redaction_applied
            || command::high_entropy(&stdout.text)
            || command::high_entropy(&stderr.text);
        let succeeded = result.exit_code == Some(0) && !result.timed_out && !result.cancelled;
        if !succeeded {
            turn.record.facts.command_failed = true;
        }
        let facts = &mut turn.record.facts;
        crate::request::contract::after_change_run(
            turn.plan.contract(),
            &plan.profile_id,
            succeeded,
            result.exit_code,
            &facts.mutations,
            &mut facts.task_findings,
        );
        turn.record.commands.push(command_record(
            &call.id,
            planned,
            &result,
            (&stdout.text, &stderr.text),
            redaction_applied,
            withheld,
        ));
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
            "{}\nprofile: {}\ncwd: {}\nargv: {}\nexitCode: {}\ntimedOut: {}\nstdoutTruncated: {}\nstderrTruncated: {}\nredactionApplied: {redaction_applied}\nnetworkIsolated: {}\nwritesConfined: {}\n{body}",
            headline(plan, &result),
            plan.profile_id,
            plan.cwd,
            plan.argv_line(),
            result.exit_code.map_or("none".into(), |c| c.to_string()),
            result.timed_out,
            result.stdout_truncated,
            result.stderr_truncated,
            planned.network_isolated,
            planned.writes_confined,
        );
        let end = if succeeded {
            CallEnd::Succeeded
        } else {
            CallEnd::Failed
        };
        self.end(call, turn, text, end, result.cancelled)
    }

    /// Ends the call: the guard and the record learn how; a denial or a cancelled run stops
    /// the loop.
    fn end(
        self,
        call: &Call,
        turn: &mut Turn,
        text: String,
        end: CallEnd,
        stop: bool,
    ) -> (State, Effect) {
        call.ended(turn, &self.accepted, end, &text, None);
        let stop = match end {
            CallEnd::Denied => {
                Some("[Tool loop stopped because the command was not approved.]".to_string())
            }
            CallEnd::Succeeded | CallEnd::Failed if stop => {
                Some("[Tool loop stopped: the command was cancelled.]".to_string())
            }
            CallEnd::Succeeded | CallEnd::Failed => turn.guard.should_stop(),
        };
        finish(text, false, stop)
    }
}

fn headline(plan: &CommandPlan, result: &CommandRun) -> String {
    let (id, ms) = (&plan.profile_id, result.duration_ms);
    if result.timed_out {
        return format!("Command timed out: {id} after {ms}ms (process tree killed).");
    }
    if result.cancelled {
        return format!("Command cancelled: {id} after {ms}ms (process tree killed).");
    }
    match result.exit_code {
        Some(0) => format!("Command succeeded: {id} exited with code 0 after {ms}ms."),
        Some(code) => format!("Command failed: {id} exited with code {code} after {ms}ms."),
        None => format!("Command failed: {id} was ended by a signal after {ms}ms."),
    }
}

fn or_empty(text: &str) -> &str {
    if text.is_empty() { "(empty)" } else { text }
}

/// The record of one run: what ran, how it ended, and digests of its (redacted) output.
fn command_record(
    call_id: &str,
    planned: &PlannedCommand,
    result: &CommandRun,
    (stdout, stderr): (&str, &str),
    redaction_applied: bool,
    withheld: bool,
) -> CommandRecord {
    let plan = &planned.plan;
    CommandRecord {
        call_id: call_id.to_string(),
        profile: plan.profile_id.clone(),
        argv: std::iter::once(plan.program.as_str().to_string())
            .chain(plan.args.iter().cloned())
            .collect(),
        cwd: plan.cwd.clone(),
        exit_code: result.exit_code,
        timed_out: result.timed_out,
        cancelled: result.cancelled,
        duration_ms: result.duration_ms,
        stdout: digest_text(stdout),
        stderr: digest_text(stderr),
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
        redaction_applied,
        withheld_from_model: withheld,
        network_isolated: planned.network_isolated,
        writes_confined: planned.writes_confined,
    }
}

//! Talos's records as ACP shapes: pure functions from the daemon's turn events, approval
//! requests and outcomes to ACP's own types (`agent-client-protocol-schema`), so each rule is a
//! row in a table test. Nothing here reads or writes.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{
    Content, ContentBlock, Diff, PermissionOption, PermissionOptionKind, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, RequestPermissionOutcome, SessionMode, SessionModeState,
    StopReason, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use talos_protocol::{
    ApprovalRequestParams, CallStatus, Classification, CompletionStatus, ContractChooseParams,
    Decision, Mode, PlanStep, ReadingChoice, TurnOutcome,
};

/// The option ids `session/request_permission` offers.
pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_always";
pub const REJECT_ONCE: &str = "reject_once";

/// ACP's kind for a Talos tool (`talos.edit_file` → edit). Names the model wrote without the
/// `talos.` prefix map the same way; anything else is `other`.
pub fn tool_kind(tool: &str) -> ToolKind {
    match tool.strip_prefix("talos.").unwrap_or(tool) {
        "read_file" | "list_dir" => ToolKind::Read,
        "grep" | "search" => ToolKind::Search,
        "edit_file" | "write_file" | "mkdir" | "copy_path" | "apply_workspace_batch" => {
            ToolKind::Edit
        }
        "delete_path" => ToolKind::Delete,
        "move_path" | "rename_path" => ToolKind::Move,
        "run_command" => ToolKind::Execute,
        _ => ToolKind::Other,
    }
}

/// `talos.edit_file settings.py`, or the tool alone.
pub fn title(tool: &str, target: Option<&str>) -> String {
    match target {
        Some(target) if !target.is_empty() => format!("{tool} {target}"),
        _ => tool.to_string(),
    }
}

/// A workspace-relative path as the absolute path ACP asks for; protected names stay hidden.
fn location(workspace: &str, target: Option<&str>) -> Vec<ToolCallLocation> {
    match target {
        Some(t) if !t.is_empty() && !t.starts_with('<') => {
            vec![ToolCallLocation::new(Path::new(workspace).join(t))]
        }
        _ => Vec::new(),
    }
}

fn text(content: impl Into<String>) -> ToolCallContent {
    ToolCallContent::Content(Content::new(ContentBlock::from(content.into())))
}

fn acp_status(status: CallStatus) -> ToolCallStatus {
    match status {
        CallStatus::Running => ToolCallStatus::InProgress,
        CallStatus::Completed => ToolCallStatus::Completed,
        CallStatus::Failed | CallStatus::Rejected | CallStatus::Denied => ToolCallStatus::Failed,
    }
}

/// Why a call did not complete, as the editor shows it under the call.
fn ending(status: CallStatus, reason: Option<&str>) -> Option<String> {
    let what = match status {
        CallStatus::Running | CallStatus::Completed => return None,
        CallStatus::Failed => "failed",
        CallStatus::Rejected => "rejected by a check",
        CallStatus::Denied => "denied",
    };
    Some(match reason {
        Some(reason) if !reason.is_empty() => format!("{what}: {reason}"),
        _ => what.to_string(),
    })
}

/// One `call` event of the daemon.
pub struct CallEvent<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    pub status: CallStatus,
    pub target: Option<&'a str>,
    pub reason: Option<&'a str>,
}

/// The first ACP message for a call: a `tool_call` in its current state.
pub fn tool_call(workspace: &str, call: &CallEvent<'_>) -> ToolCall {
    let mut content = Vec::new();
    if let Some(ending) = ending(call.status, call.reason) {
        content.push(text(ending));
    }
    ToolCall::new(call.call_id.to_string(), title(call.tool, call.target))
        .kind(tool_kind(call.tool))
        .status(acp_status(call.status))
        .locations(location(workspace, call.target))
        .content(content)
}

/// The first ACP message for a call that waits for the person's approval: a `tool_call` with
/// status `pending` (ACP: not started, "awaiting approval from the user").
pub fn pending_tool_call(workspace: &str, call: &CallEvent<'_>) -> ToolCall {
    tool_call(workspace, call).status(ToolCallStatus::Pending)
}

/// An approved call starts: its `tool_call_update` to `in_progress`.
pub fn approved_call(call_id: &str) -> ToolCallUpdate {
    ToolCallUpdate::new(
        call_id.to_string(),
        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
    )
}

/// A later state of a call already shown: a `tool_call_update`.
pub fn tool_call_update(call: &CallEvent<'_>) -> ToolCallUpdate {
    let mut fields = ToolCallUpdateFields::new().status(acp_status(call.status));
    if let Some(ending) = ending(call.status, call.reason) {
        fields = fields.content(vec![text(ending)]);
    }
    ToolCallUpdate::new(call.call_id.to_string(), fields)
}

/// The call an approval asks about, as `session/request_permission`'s tool call: its title,
/// kind and location, the change as ACP `diff` content when the daemon sent the whole text
/// (else the capped unified diff as text), and the approval's detail lines (warnings among
/// them).
pub fn permission_call(workspace: &str, request: &ApprovalRequestParams) -> ToolCallUpdate {
    let mut content = Vec::new();
    match (&request.change, &request.diff) {
        (Some(change), _) => content.push(ToolCallContent::Diff(
            Diff::new(
                Path::new(workspace).join(&change.path),
                change.new_text.clone(),
            )
            .old_text(change.old_text.clone()),
        )),
        (None, Some(diff)) if !diff.text.is_empty() => {
            content.push(text(format!("```diff\n{}```", diff.text)))
        }
        _ => {}
    }
    if !request.details.is_empty() {
        content.push(text(request.details.join("\n")));
    }
    let id = request
        .call_id
        .clone()
        .unwrap_or_else(|| request.request_id.clone());
    let fields = ToolCallUpdateFields::new()
        .title(format!(
            "{}: {}",
            request.description,
            request.target.as_deref().unwrap_or("")
        ))
        .kind(tool_kind(&request.tool))
        .status(ToolCallStatus::Pending)
        .locations(location(workspace, request.target.as_deref()))
        .content(content);
    ToolCallUpdate::new(id, fields)
}

/// The answers offered: allow once, allow for the session only when Talos would remember it,
/// reject.
pub fn permission_options(remember_eligible: bool) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE.to_string(),
        "Allow",
        PermissionOptionKind::AllowOnce,
    )];
    if remember_eligible {
        options.push(PermissionOption::new(
            ALLOW_ALWAYS.to_string(),
            "Allow for this session",
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT_ONCE.to_string(),
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The editor's answer as Talos's decision: only an offered allow option allows; a cancelled
/// request, an unknown option or `allow_always` where it was not offered denies.
pub fn decision(outcome: &RequestPermissionOutcome, remember_eligible: bool) -> Decision {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            ALLOW_ONCE => Decision::Approve,
            ALLOW_ALWAYS if remember_eligible => Decision::ApproveForSession,
            _ => Decision::Deny,
        },
        _ => Decision::Deny,
    }
}

/// The option ids of the reading question (`contract/choose`).
pub const CHOOSE_CHANGE: &str = "change";
pub const CHOOSE_QUESTION: &str = "question";

/// The reading question as `session/request_permission`'s tool call: titled with the change
/// (`Change config.py?`), at the files it would change, the request in its content.
pub fn reading_call(workspace: &str, request: &ContractChooseParams) -> ToolCallUpdate {
    let locations = request
        .change
        .targets
        .iter()
        .flat_map(|t| location(workspace, Some(t)))
        .collect::<Vec<_>>();
    let fields = ToolCallUpdateFields::new()
        .title(request.change.description.clone())
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::Pending)
        .locations(locations)
        .content(vec![text(format!(
            "The request could mean a change or only a question: {}",
            request.request
        ))]);
    ToolCallUpdate::new(format!("reading-{}", request.turn_id), fields)
}

/// The two readings as options: "Change config.py" (allow) and "Only answer a question"
/// (reject: nothing is changed).
pub fn reading_options(request: &ContractChooseParams) -> Vec<PermissionOption> {
    let change = request.change.description.trim_end_matches('?').to_string();
    vec![
        PermissionOption::new(
            CHOOSE_CHANGE.to_string(),
            change,
            PermissionOptionKind::AllowOnce,
        ),
        PermissionOption::new(
            CHOOSE_QUESTION.to_string(),
            request.question.description.clone(),
            PermissionOptionKind::RejectOnce,
        ),
    ]
}

/// The editor's answer as the person's reading: only an offered option chooses; a cancelled
/// request or an unknown option is no choice (the turn ends CONTRACT_AMBIGUOUS).
pub fn reading_choice(outcome: &RequestPermissionOutcome) -> Option<ReadingChoice> {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            CHOOSE_CHANGE => Some(ReadingChoice::Change),
            CHOOSE_QUESTION => Some(ReadingChoice::Question),
            _ => None,
        },
        _ => None,
    }
}

/// Where each plan step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepState {
    Pending,
    InProgress,
    Completed,
    /// The step will not be done in this turn, and why ("denied", "cancelled"). ACP's plan
    /// has no status for it: it is shown `pending` (not done) with the reason after the step's
    /// text, never left `in_progress` (docs/decisions/0060-packages-and-acp-conformance.md).
    Ended(&'static str),
}

/// Where a call in `status` puts the step it works on.
pub fn step_state(status: CallStatus) -> StepState {
    match status {
        CallStatus::Running => StepState::InProgress,
        CallStatus::Completed => StepState::Completed,
        CallStatus::Denied => StepState::Ended("denied"),
        CallStatus::Rejected => StepState::Ended("refused by a check"),
        CallStatus::Failed => StepState::Ended("failed"),
    }
}

/// The plan's states once the turn has ended with `status`: a complete turn completes every
/// step; otherwise every step not completed and not already ended ends with the turn's reason.
pub fn ended_states(
    states: &[StepState],
    status: CompletionStatus,
    cancelled: bool,
) -> Vec<StepState> {
    let reason = match status {
        _ if cancelled => "cancelled",
        CompletionStatus::Complete => return vec![StepState::Completed; states.len()],
        CompletionStatus::Cancelled => "cancelled",
        CompletionStatus::Blocked => "blocked",
        CompletionStatus::Failed => "failed",
        CompletionStatus::Partial => "not done",
        CompletionStatus::AdvisoryOnly => "not done: advisory only",
    };
    states
        .iter()
        .map(|state| match state {
            StepState::Pending | StepState::InProgress => StepState::Ended(reason),
            StepState::Completed | StepState::Ended(_) => *state,
        })
        .collect()
}

/// The plan as ACP's `plan` update.
pub fn plan(steps: &[PlanStep], states: &[StepState]) -> Plan {
    Plan::new(
        steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let (status, content) = match states.get(i).copied().unwrap_or(StepState::Pending) {
                    StepState::Pending => (PlanEntryStatus::Pending, step.text.clone()),
                    StepState::InProgress => (PlanEntryStatus::InProgress, step.text.clone()),
                    StepState::Completed => (PlanEntryStatus::Completed, step.text.clone()),
                    StepState::Ended(why) => {
                        (PlanEntryStatus::Pending, format!("{} ({why})", step.text))
                    }
                };
                PlanEntry::new(content, PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

/// The step a call works on: a read tool on a `read` step's target, a changing tool on a
/// `change` step's target.
pub fn step_of(steps: &[PlanStep], tool: &str, target: Option<&str>) -> Option<usize> {
    let kind = match tool_kind(tool) {
        ToolKind::Read | ToolKind::Search => "read",
        ToolKind::Edit | ToolKind::Delete | ToolKind::Move => "change",
        _ => return None,
    };
    let target = target?;
    steps
        .iter()
        .position(|s| s.kind == kind && s.target.as_deref() == Some(target))
}

/// The stop reason for a finished turn: `cancelled` when the person cancelled it, `refusal`
/// when the policy blocked the task, `end_turn` otherwise (a denied approval, a failure and a
/// partial result end the turn normally; the final message says which).
pub fn stop_reason(outcome: &TurnOutcome, cancel_asked: bool) -> StopReason {
    if cancel_asked || outcome.status == CompletionStatus::Cancelled {
        return StopReason::Cancelled;
    }
    if outcome.classification == Classification::BlockedByPolicy {
        return StopReason::Refusal;
    }
    StopReason::EndTurn
}

/// The last message of a turn: the outcome's status and classification, the per-file
/// results, and the trace id.
pub fn outcome_message(outcome: &TurnOutcome) -> String {
    let mut text = format!(
        "\n\n---\n**{}** ({}) · trace `{}`",
        crate::spelling::status_name(outcome.status),
        crate::spelling::classification_name(outcome.classification),
        outcome.trace_id
    );
    for file in &outcome.files {
        text.push_str(&format!("\n- `{}`: {}", file.path, file.detail));
    }
    text.push('\n');
    text
}

/// The final answer when what was streamed is not it (nothing streamed, or the guards
/// replaced the model's text after it streamed).
pub fn answer_to_send(streamed: &str, final_answer: &str) -> Option<String> {
    if streamed.trim() == final_answer.trim() || final_answer.trim().is_empty() {
        return None;
    }
    if streamed.trim().is_empty() {
        return Some(final_answer.to_string());
    }
    Some(format!(
        "\n\n[Talos replaced the answer above, which the records did not support:]\n{final_answer}"
    ))
}

/// At most one `progress` thought per model call in this long: the daemon sends progress every
/// 250 ms, and an editor keeps every thought chunk.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// The thought sent while the model works on a held reply: `working… 37 tokens`.
pub fn progress_thought(tokens: u64, prompt_tokens: Option<u64>) -> String {
    if let (0, Some(n)) = (tokens, prompt_tokens) {
        return format!(
            "reading the prompt ({} tokens)\n",
            crate::render::thousands(n)
        );
    }
    match tokens {
        0 => "working…\n".to_string(),
        1 => "working… 1 token\n".to_string(),
        n => format!("working… {} tokens\n", crate::render::thousands(n)),
    }
}

/// Which `progress` events reach the editor: the first of each model call, then at most one
/// every [`PROGRESS_EVERY`] while that call lasts.
#[derive(Debug, Default)]
pub struct ProgressGate {
    /// The model call and the time of the last thought sent.
    last: Option<(usize, Instant)>,
}

impl ProgressGate {
    /// Whether a `progress` event of `model_call` arriving `now` is sent; if so, it counts.
    pub fn admit(&mut self, model_call: usize, now: Instant) -> bool {
        let admit = match self.last {
            Some((call, at)) if call == model_call => {
                now.saturating_duration_since(at) >= PROGRESS_EVERY
            }
            _ => true,
        };
        if admit {
            self.last = Some((model_call, now));
        }
        admit
    }
}

/// A `usage` event as ACP's `usage_update`: what the call left in the context (prompt and
/// reply) against the context one request may use.
pub fn usage_update(context: &crate::render::ContextUse) -> UsageUpdate {
    UsageUpdate::new(context.used, context.size)
}

/// The session's modes as ACP modes, `current` selected.
pub fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.as_str().to_string(),
        Mode::ALL
            .iter()
            .map(|m| {
                SessionMode::new(m.as_str().to_string(), mode_name(*m))
                    .description(mode_description(*m).to_string())
            })
            .collect(),
    )
}

/// A mode id from the editor, exactly as Talos names its modes.
pub fn mode_from_id(id: &str) -> Option<Mode> {
    Mode::ALL.into_iter().find(|m| m.as_str() == id)
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Agent => "Agent",
        Mode::Ask => "Ask",
        Mode::Plan => "Plan",
        Mode::Auto => "Auto",
        Mode::Private => "Private",
    }
}

fn mode_description(mode: Mode) -> &'static str {
    match mode {
        Mode::Agent => "May change files, each change approved by you",
        Mode::Ask => "Read-only: answers questions, never changes files",
        Mode::Plan => "Read-only: plans, never changes files",
        Mode::Auto => "Structural requests go to a deterministic viewer; others as agent",
        Mode::Private => "Agent, but an approved protected read is shown to you, not the model",
    }
}

#[cfg(test)]
mod tests;

//! `session/prompt`: one Talos turn. The prompt's text is the request; resources in it (links
//! and embedded context naming a workspace file) become pins, read by the daemon through the
//! same boundary and protection checks as `--pin` and framed as untrusted reference data. The
//! turn's events become `session/update` notifications (a held reply's `progress` as a thought at
//! most every two seconds, each `usage` as a `usage_update`) and its approvals
//! `session/request_permission` requests; the outcome ends the prompt with its stop reason.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol_schema::v1::{
    ContentBlock, EmbeddedResourceResource, PromptRequest, PromptResponse,
    RequestPermissionRequest, RequestPermissionResponse, SessionUpdate,
};
use serde_json::Value;
use talos_protocol::event::{TurnEvent, TurnEventParams};
use talos_protocol::{
    APPROVAL_REQUEST, ApprovalRequestParams, ApprovalResult, CONTRACT_CHOOSE, ContractChooseParams,
    Decision, Message, PlanStep, ReadingChoice, TURN_EVENT, TURN_START, TurnOutcome,
    TurnStartParams,
};

use super::map::{self, CallEvent, ProgressGate, StepState};
use super::session::chunk;
use super::wire::Reply;
use super::{Bridge, Refused};
use crate::client::{params, refuse_request};
use crate::failure::Failure;

/// The request text, the pins, and what could not be pinned.
#[derive(Debug, Default, PartialEq)]
pub struct Parts {
    pub text: String,
    pub pins: Vec<String>,
    pub not_pinned: Vec<String>,
}

/// Splits a prompt into the request, pins (workspace-relative paths of `file:` resources
/// inside the workspace) and resources left out (other URIs, files outside the workspace).
/// Images and audio are refused: `initialize` does not offer them.
pub fn parts(workspace: &str, blocks: &[ContentBlock]) -> Result<Parts, String> {
    let mut parts = Parts::default();
    let pin = |uri: &str, parts: &mut Parts| match relative(workspace, uri) {
        Some(path) if !parts.pins.contains(&path) => parts.pins.push(path),
        Some(_) => {}
        None => parts.not_pinned.push(uri.to_string()),
    };
    for block in blocks {
        match block {
            ContentBlock::Text(text) => {
                if !parts.text.is_empty() {
                    parts.text.push('\n');
                }
                parts.text.push_str(&text.text);
            }
            ContentBlock::ResourceLink(link) => pin(&link.uri, &mut parts),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(t) => pin(&t.uri, &mut parts),
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    parts.not_pinned.push(b.uri.clone())
                }
                _ => parts
                    .not_pinned
                    .push("(an embedded resource of an unknown kind)".into()),
            },
            ContentBlock::Image(_) => {
                return Err("images are not supported: Talos takes text".into());
            }
            ContentBlock::Audio(_) => return Err("audio is not supported: Talos takes text".into()),
            _ => return Err("a content block of a kind Talos does not know".into()),
        }
    }
    if parts.text.trim().is_empty() {
        return Err("the prompt has no text".into());
    }
    Ok(parts)
}

/// `file:///ws/src/a.rs` → `src/a.rs` when inside `workspace`; anything else → `None`.
fn relative(workspace: &str, uri: &str) -> Option<String> {
    let path = percent_decoded(uri.strip_prefix("file://")?)?;
    let rest = path.strip_prefix(workspace)?.strip_prefix('/')?;
    (!rest.is_empty()).then(|| rest.to_string())
}

fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What one prompt has shown the editor so far.
struct Turn<'b> {
    bridge: &'b Bridge,
    acp_id: String,
    workspace: String,
    cancel: Arc<AtomicBool>,
    steps: Vec<PlanStep>,
    states: Vec<StepState>,
    shown_calls: HashSet<String>,
    streamed: String,
    talos_id: String,
    /// Whether a cancel asked for before the turn had started was sent again once it had.
    cancel_resent: bool,
    /// Which `progress` events become thoughts.
    progress: ProgressGate,
    /// A call that has started but is not shown yet: the daemon's next message says whether it
    /// waits for an approval (then it is shown `pending`) or runs (`in_progress`).
    held: Option<HeldCall>,
}

/// A `call` event with status running, kept until the next message of the daemon.
struct HeldCall {
    call_id: String,
    tool: String,
    target: Option<String>,
}

impl Bridge {
    pub(super) fn prompt(&self, request: PromptRequest) -> Result<PromptResponse, Refused> {
        let acp_id = request.session_id.0.to_string();
        let session = self
            .session(&acp_id)
            .ok_or_else(|| Refused::session_not_found(&acp_id))?;
        let parts = parts(&session.workspace, &request.prompt).map_err(Refused::params)?;
        let cancel = Arc::new(AtomicBool::new(false));
        {
            let mut sessions = self.lock();
            let held = sessions
                .get_mut(&acp_id)
                .ok_or_else(|| Refused::session_not_found(&acp_id))?;
            if held.running.is_some() {
                return Err(Refused::params(
                    "a prompt is already running in this session",
                ));
            }
            held.running = Some(cancel.clone());
        }
        let mut turn = Turn {
            bridge: self,
            acp_id: acp_id.clone(),
            workspace: session.workspace.clone(),
            cancel,
            steps: Vec::new(),
            states: Vec::new(),
            shown_calls: HashSet::new(),
            streamed: String::new(),
            talos_id: session.talos_id.clone(),
            cancel_resent: false,
            progress: ProgressGate::default(),
            held: None,
        };
        let result = turn.run(parts);
        if let Some(held) = self.lock().get_mut(&acp_id) {
            held.running = None;
        }
        result
    }
}

impl Turn<'_> {
    fn run(&mut self, parts: Parts) -> Result<PromptResponse, Refused> {
        for uri in &parts.not_pinned {
            self.say(format!(
                "[Not pinned: {uri} is not a file in this workspace; Talos pins workspace files only.]\n\n"
            ));
        }
        let mut client = self.bridge.connect()?;
        if self.cancel.load(Ordering::SeqCst) {
            return Ok(PromptResponse::new(
                agent_client_protocol_schema::v1::StopReason::Cancelled,
            ));
        }
        let (prompt, note) = super::commands::request_of(&mut client, &self.talos_id, &parts.text)?;
        if let Some(note) = note {
            self.say(note);
        }
        let start = TurnStartParams {
            session_id: self.talos_id.clone(),
            prompt,
            pins: parts.pins,
        };
        let raw = client.call(
            TURN_START,
            params(serde_json::to_value(&start)),
            &mut |message| self.on_message(message),
        )?;
        self.show_held();
        let outcome: TurnOutcome = serde_json::from_value(raw)
            .map_err(|e| Refused::from(Failure::Connection(format!("invalid outcome: {e}"))))?;
        if let Some(answer) = map::answer_to_send(&self.streamed, &outcome.final_answer) {
            self.say(answer);
        }
        self.say(map::outcome_message(&outcome));
        let cancelled = self.cancel.load(Ordering::SeqCst);
        // The plan shows how the turn ended: nothing is left `in_progress`.
        let ended = map::ended_states(&self.states, outcome.status, cancelled);
        if !self.steps.is_empty() && ended != self.states {
            self.states = ended;
            self.show_plan();
        }
        Ok(PromptResponse::new(map::stop_reason(&outcome, cancelled)))
    }

    fn on_message(&mut self, message: Message) -> Result<Option<Message>, Failure> {
        // A cancel that came while the turn was being started may have reached the daemon
        // before the turn did: once the turn speaks, it is sent again (a second cancel of the
        // same turn is harmless).
        if self.cancel.load(Ordering::SeqCst) && !self.cancel_resent {
            self.cancel_resent = true;
            let (target, id) = (self.bridge.target.clone(), self.talos_id.clone());
            std::thread::spawn(move || crate::interrupt::cancel(&target, &id));
        }
        match (message.method.as_deref(), message.id.clone()) {
            (Some(TURN_EVENT), None) => {
                let event = message
                    .params
                    .and_then(|p| serde_json::from_value::<TurnEventParams>(p).ok());
                if let Some(event) = event {
                    // The daemon announces an approval just before it asks: the held call
                    // stays held until the request itself names it.
                    if !matches!(event.event, TurnEvent::ApprovalRequested { .. }) {
                        self.show_held();
                    }
                    self.on_event(event.event);
                }
                Ok(None)
            }
            (Some(APPROVAL_REQUEST), Some(id)) => {
                let decision = match message
                    .params
                    .and_then(|p| serde_json::from_value::<ApprovalRequestParams>(p).ok())
                {
                    Some(request) => {
                        let waiting = self.show_held_waiting(request.call_id.as_deref());
                        let decision = self.ask(&request);
                        if let (
                            Some(call_id),
                            Some(Decision::Approve | Decision::ApproveForSession),
                        ) = (waiting, decision)
                        {
                            self.bridge.update(
                                &self.acp_id,
                                SessionUpdate::ToolCallUpdate(map::approved_call(&call_id)),
                            );
                        }
                        decision
                    }
                    None => {
                        self.show_held();
                        Some(Decision::Deny)
                    }
                };
                // A cancelled turn's approval is left to the daemon, which ends it as
                // cancelled (`turn/cancel` went on a connection of its own): the bridge never
                // answers for a person who did not (issue 26, defect 8).
                Ok(decision.map(|decision| {
                    Message::response(
                        id,
                        params(serde_json::to_value(ApprovalResult { decision })),
                    )
                }))
            }
            (Some(CONTRACT_CHOOSE), Some(id)) => {
                let request = message
                    .params
                    .and_then(|p| serde_json::from_value::<ContractChooseParams>(p).ok());
                let chosen = match request {
                    Some(request) => self.choose(&request),
                    None => Some(None),
                };
                // As with approvals, a cancelled turn's question is left to the daemon.
                Ok(chosen.map(|choice| crate::choice::reply(id, choice)))
            }
            _ => Ok(refuse_request(&message)),
        }
    }

    fn on_event(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::StreamChunk { text, .. } => {
                self.streamed.push_str(&text);
                self.say(text);
            }
            TurnEvent::Plan { steps } => {
                self.states = vec![StepState::Pending; steps.len()];
                self.steps = steps;
                self.show_plan();
            }
            TurnEvent::Call {
                call_id,
                tool,
                status,
                target,
                reason,
            } => {
                let call = CallEvent {
                    call_id: &call_id,
                    tool: &tool,
                    status,
                    target: target.as_deref(),
                    reason: reason.as_deref(),
                };
                self.on_call(&call);
            }
            TurnEvent::Ok { text } | TurnEvent::Info { text } | TurnEvent::TrustedInfo { text } => {
                self.bridge.update(
                    &self.acp_id,
                    SessionUpdate::AgentThoughtChunk(chunk(format!("{text}\n"))),
                );
            }
            TurnEvent::Error { message } => self.say(format!("error: {message}\n")),
            TurnEvent::Instructions { files } => {
                if let Some(line) = crate::render::instructions_line(&files) {
                    self.bridge.update(
                        &self.acp_id,
                        SessionUpdate::AgentThoughtChunk(chunk(format!("{line}\n"))),
                    );
                }
            }
            TurnEvent::Progress {
                model_call,
                tokens,
                prompt_tokens,
            } => {
                if self.progress.admit(model_call, std::time::Instant::now()) {
                    let thought = map::progress_thought(tokens, prompt_tokens);
                    self.bridge.update(
                        &self.acp_id,
                        SessionUpdate::AgentThoughtChunk(chunk(thought)),
                    );
                }
            }
            TurnEvent::Usage { .. } => {
                if let Some(context) = crate::render::ContextUse::of(&event) {
                    self.bridge.update(
                        &self.acp_id,
                        SessionUpdate::UsageUpdate(map::usage_update(&context)),
                    );
                }
            }
            // The answer streams as chunks; approvals come as requests; the outcome is the
            // turn/start response; the calls' states come as `call` events.
            TurnEvent::StreamStart { .. }
            | TurnEvent::StreamEnd { .. }
            | TurnEvent::Streamed { .. }
            | TurnEvent::Table { .. }
            | TurnEvent::ToolProgress { .. }
            | TurnEvent::ApprovalRequested { .. }
            | TurnEvent::ApprovalResolved { .. }
            | TurnEvent::Outcome { .. } => {}
        }
    }

    /// A `call` event: a first `running` is held (its approval may still come, and ACP shows
    /// a call once); anything else is shown as the call or an update of it.
    fn on_call(&mut self, call: &CallEvent<'_>) {
        if call.status == talos_protocol::CallStatus::Running
            && !self.shown_calls.contains(call.call_id)
        {
            self.advance_plan(call);
            self.held = Some(HeldCall {
                call_id: call.call_id.to_string(),
                tool: call.tool.to_string(),
                target: call.target.map(str::to_string),
            });
            return;
        }
        let update = if self.shown_calls.insert(call.call_id.to_string()) {
            SessionUpdate::ToolCall(map::tool_call(&self.workspace, call))
        } else {
            SessionUpdate::ToolCallUpdate(map::tool_call_update(call))
        };
        self.bridge.update(&self.acp_id, update);
        self.advance_plan(call);
    }

    /// Shows the held call as running (`in_progress`), if there is one.
    fn show_held(&mut self) {
        if let Some(held) = self.held.take() {
            self.show_call(&held, false);
        }
    }

    /// Shows the held call as waiting for approval (`pending`) when the approval request is
    /// about it, and returns its id; any other held call is shown running first.
    fn show_held_waiting(&mut self, call_id: Option<&str>) -> Option<String> {
        match self.held.take() {
            Some(held) if Some(held.call_id.as_str()) == call_id => {
                self.show_call(&held, true);
                Some(held.call_id)
            }
            Some(held) => {
                self.show_call(&held, false);
                None
            }
            None => None,
        }
    }

    fn show_call(&mut self, held: &HeldCall, waiting: bool) {
        let call = CallEvent {
            call_id: &held.call_id,
            tool: &held.tool,
            status: talos_protocol::CallStatus::Running,
            target: held.target.as_deref(),
            reason: None,
        };
        self.shown_calls.insert(held.call_id.clone());
        let shown = if waiting {
            map::pending_tool_call(&self.workspace, &call)
        } else {
            map::tool_call(&self.workspace, &call)
        };
        self.bridge
            .update(&self.acp_id, SessionUpdate::ToolCall(shown));
    }

    /// A call that starts or ends moves its plan step; a completed step stays completed.
    fn advance_plan(&mut self, call: &CallEvent<'_>) {
        let Some(i) = map::step_of(&self.steps, call.tool, call.target) else {
            return;
        };
        let next = map::step_state(call.status);
        if self.states[i] != next && self.states[i] != StepState::Completed {
            self.states[i] = next;
            self.show_plan();
        }
    }

    fn show_plan(&self) {
        self.bridge.update(
            &self.acp_id,
            SessionUpdate::Plan(map::plan(&self.steps, &self.states)),
        );
    }

    fn say(&self, text: impl Into<String>) {
        self.bridge
            .update(&self.acp_id, SessionUpdate::AgentMessageChunk(chunk(text)));
    }

    /// Asks the editor. A request that failed and an answer that does not parse deny; `None`
    /// when the turn was cancelled, before or while asking (the daemon's cancel decides).
    fn ask(&self, request: &ApprovalRequestParams) -> Option<Decision> {
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        let ask = RequestPermissionRequest::new(
            self.acp_id.clone(),
            map::permission_call(&self.workspace, request),
            map::permission_options(request.remember_eligible),
        );
        let answer = self.bridge.wire.request(
            &self.acp_id,
            "session/request_permission",
            serde_json::to_value(ask).unwrap_or(Value::Null),
        );
        let decision = match answer.recv() {
            Ok(Reply::Result(result)) => {
                serde_json::from_value::<RequestPermissionResponse>(result)
                    .map_or(Decision::Deny, |r| {
                        map::decision(&r.outcome, request.remember_eligible)
                    })
            }
            Ok(Reply::Failed(reason)) => {
                eprintln!(
                    "talos acp: the permission request ended without an answer ({reason}): denied"
                );
                Decision::Deny
            }
            Err(_) => Decision::Deny,
        };
        (!self.cancel.load(Ordering::SeqCst)).then_some(decision)
    }
}

impl Turn<'_> {
    /// Asks the editor which reading the person means, as a permission with two options. A
    /// request that failed and an answer that is no option are no choice (`Some(None)`);
    /// `None` when the turn was cancelled (the daemon's cancel decides).
    fn choose(&self, request: &ContractChooseParams) -> Option<Option<ReadingChoice>> {
        if self.cancel.load(Ordering::SeqCst) {
            return None;
        }
        let ask = RequestPermissionRequest::new(
            self.acp_id.clone(),
            map::reading_call(&self.workspace, request),
            map::reading_options(request),
        );
        let answer = self.bridge.wire.request(
            &self.acp_id,
            "session/request_permission",
            serde_json::to_value(ask).unwrap_or(Value::Null),
        );
        let choice = match answer.recv() {
            Ok(Reply::Result(result)) => {
                serde_json::from_value::<RequestPermissionResponse>(result)
                    .ok()
                    .and_then(|r| map::reading_choice(&r.outcome))
            }
            Ok(Reply::Failed(reason)) => {
                eprintln!(
                    "talos acp: the reading question ended without an answer ({reason}): no choice"
                );
                None
            }
            Err(_) => None,
        };
        (!self.cancel.load(Ordering::SeqCst)).then_some(choice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks(value: Value) -> Vec<ContentBlock> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn resources_inside_the_workspace_become_pins_and_others_are_named() {
        let prompt = blocks(json!([
            {"type": "text", "text": "Explain this"},
            {"type": "resource_link", "name": "a", "uri": "file:///ws/src/a.rs"},
            {"type": "resource", "resource": {"uri": "file:///ws/my%20notes.md", "text": "x"}},
            {"type": "resource", "resource": {"uri": "file:///etc/passwd", "text": "root"}},
            {"type": "resource_link", "name": "w", "uri": "https://example.org/x"},
            {"type": "resource_link", "name": "esc", "uri": "file:///wsx/secret"},
            {"type": "resource_link", "name": "dup", "uri": "file:///ws/src/a.rs"},
            {"type": "text", "text": "please"}
        ]));
        assert_eq!(
            parts("/ws", &prompt).unwrap(),
            Parts {
                text: "Explain this\nplease".into(),
                pins: vec!["src/a.rs".into(), "my notes.md".into()],
                not_pinned: vec![
                    "file:///etc/passwd".into(),
                    "https://example.org/x".into(),
                    "file:///wsx/secret".into()
                ],
            }
        );
    }

    #[test]
    fn images_audio_and_empty_prompts_are_refused() {
        let rows = [
            json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}, {"type": "text", "text": "x"}]),
            json!([{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]),
            json!([{"type": "text", "text": "   "}]),
            json!([]),
        ];
        for row in rows {
            assert!(parts("/ws", &blocks(row.clone())).is_err(), "{row}");
        }
    }

    #[test]
    fn a_pin_path_never_leaves_the_workspace_by_its_uri() {
        for uri in [
            "file:///ws",
            "file:///ws/",
            "file:///ws2/a",
            "file://ws/a",
            "file:///ws/%ZZ",
        ] {
            assert_eq!(relative("/ws", uri), None, "{uri}");
        }
        // `..` stays in the path: the daemon resolves the pin beneath the root and refuses it.
        assert_eq!(
            relative("/ws", "file:///ws/../etc/passwd"),
            Some("../etc/passwd".into())
        );
    }
}

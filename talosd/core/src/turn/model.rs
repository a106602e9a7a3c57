//! The tool loop's decisions: the surface of each model call (never wider than the one the
//! turn began with), whether the request demands a tool call, what a reply proposes (native
//! `tool_calls`, or calls written as text), what a chat turn does with calls it was not
//! offered, when the phase moves from APPLY to VERIFY, and when the loop stops.

use crate::planning::plan::{ActionObligation, Phase};
use crate::planning::prompt::ToolCalling;
use crate::planning::surface::Surface;
use crate::text::textcall::{self, TextCalls};

use super::Turn;
use super::call::{CallReport, Proposal};
use super::record::{SurfaceRecord, WarningCode};
use crate::request::outcome::AnswerEnd;

/// What a chat turn says when the model said nothing usable.
pub const CHAT_FALLBACK: &str = "Hi, I am Talos, a local workspace assistant. I can inspect files in this workspace and apply changes you approve.";

/// A native tool call as the engine parsed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeCall {
    pub id: String,
    pub name: String,
    /// The arguments' JSON text.
    pub arguments: String,
}

/// What to do with a model reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyAction {
    /// The loop ends with this answer.
    Answer(String),
    /// Dispatch these calls in order. `broken_note`: a broken call was written beside them;
    /// the first result tells the model so.
    Dispatch {
        proposals: Vec<Proposal>,
        broken_note: bool,
    },
    /// The reply made no call while an obligation is unmet: send this re-prompt (as a user
    /// message, after the model's reply) and ask again. At most once per obligation.
    Retry(String),
}

impl Turn {
    /// The surface for model call `index`, recorded; `None` when it would widen the turn's
    /// captured authority (the loop stops).
    pub fn begin_model_call(&mut self, index: usize) -> Option<Surface> {
        let surface = self.surface();
        if let Err(refusal) = self.guard.admit(&surface) {
            self.record
                .warn(WarningCode::SurfaceEscalationRefused, refusal.to_string());
            return None;
        }
        self.record.tool_surfaces.push(SurfaceRecord {
            model_call: index,
            phase: self.phase,
            tools: surface.tools().to_vec(),
            reason: surface.reason().into(),
        });
        Some(surface)
    }

    /// Whether this request must ask for a tool call (`tool_choice: required`): the first
    /// native request of a turn whose obligation only a tool can meet.
    pub fn requires_tool_call(
        &self,
        index: usize,
        calling: ToolCalling,
        surface: &Surface,
    ) -> bool {
        let needs_tool = match self.plan.obligation() {
            ActionObligation::MutatingToolRequired
            | ActionObligation::InspectRequired
            | ActionObligation::ListDirOnly
            | ActionObligation::VerifyFromEvidence => true,
            ActionObligation::DirectAnswerOnly
            | ActionObligation::None
            | ActionObligation::Unknown => false,
        };
        calling == ToolCalling::Native
            && index == 0
            && self.settings.require_tool_call
            && !surface.tools().is_empty()
            && needs_tool
    }

    /// Decides what the reply to model call `index` leads to.
    pub fn reply(
        &mut self,
        index: usize,
        surface: &Surface,
        native: &[NativeCall],
        finish_reason: &str,
        text: TextCalls,
    ) -> ReplyAction {
        let proposals = proposals(native, finish_reason, &text);
        if surface.tools().is_empty() {
            // A chat turn: no workspace tools, whatever the model emits.
            if !proposals.is_empty() {
                self.record.warn(
                    WarningCode::ToolCallIgnoredOnChatTurn,
                    format!(
                        "{} tool call(s) ignored: this turn exposes no tools",
                        proposals.len()
                    ),
                );
            }
            let answer = if text.prose.is_empty() {
                CHAT_FALLBACK.to_string()
            } else {
                text.prose
            };
            return ReplyAction::Answer(answer);
        }
        if proposals.is_empty() {
            self.record.facts.malformed_tool_call |= text.malformed;
            // A retry needs a model call left in the budget to answer it.
            if index + 1 < self.plan.iteration_budget()
                && let Some(prompt) = self.obligation_retry(surface)
            {
                return ReplyAction::Retry(prompt);
            }
            return ReplyAction::Answer(text.prose);
        }
        let broken_note = text.malformed && native.is_empty();
        if broken_note {
            let reason = text
                .malformed_reason
                .clone()
                .unwrap_or_else(|| "an invalid tool-call block was ignored".into());
            self.record.warn(WarningCode::MalformedCallIgnored, reason);
        }
        ReplyAction::Dispatch {
            proposals,
            broken_note,
        }
    }

    /// After the calls of one reply that changed a file: the phase moves from APPLY to VERIFY
    /// once every named target changed (a request that named none stays in APPLY; the loop's other limits still
    /// apply). Every call of a reply is judged in the phase the reply was made in (issue 27): a
    /// second edit in the same reply is not refused because the first one finished the targets.
    pub fn reply_done(&mut self) {
        if !(self.phase == Phase::Apply && self.every_target_changed()) {
            return;
        }
        self.record.phase_transitions.push((
            Phase::Apply,
            Phase::Verify,
            "every expected target changed".into(),
        ));
        self.phase = Phase::Verify;
    }

    /// On a read-only turn whose every named file is a document whose text could not be
    /// extracted, the document note: there is nothing more for the model to work from, and
    /// other files nobody named are not read in their place (issue 27).
    pub(crate) fn only_unseen_documents(&mut self) -> Option<String> {
        let contract = self.plan.contract();
        let unseen = self.record.facts.unreadable_documents.clone();
        let named: Vec<&String> = contract
            .expected_targets
            .iter()
            .chain(&contract.source_evidence_targets)
            .collect();
        let all_unseen = !contract.mutation_requested
            && !named.is_empty()
            && named.iter().all(|n| unseen.iter().any(|u| u == *n));
        if !all_unseen {
            return None;
        }
        let message = format!("{} could not be extracted", unseen.join(", "));
        self.record.warn(WarningCode::DocumentNotReadable, message);
        Some(crate::ending::guard::correct_document_claims("", &unseen))
    }

    /// Every named target's last write succeeded and held the request's own check: a write
    /// the check refused ("TIMEOUT is still 30", a rename's second line) keeps the turn in
    /// APPLY, so the model, told why, can finish the change.
    fn every_target_changed(&self) -> bool {
        use crate::request::outcome::MutationResult;
        let targets = &self.plan.contract().expected_targets;
        !targets.is_empty()
            && targets.iter().all(|t| {
                self.record
                    .facts
                    .mutations
                    .iter()
                    .filter(|m| &m.target == t)
                    .filter_map(|m| match m.result {
                        MutationResult::Succeeded { verified } => Some(verified),
                        _ => None,
                    })
                    .next_back()
                    == Some(true)
            })
    }

    /// After the calls of model call `index`: the answer when the loop ends here (a call
    /// asked to stop, discipline says so, or the iteration budget is spent).
    pub fn after_calls(&mut self, stop: Option<String>, index: usize) -> Option<String> {
        if stop.is_none()
            && let Some(summary) = self.work_done_summary()
        {
            // Every expected target changed and was verified: no model call is needed to say so.
            self.record.phase_transitions.push((
                self.phase,
                crate::planning::plan::Phase::Verify,
                "work done: the runtime writes the summary".into(),
            ));
            return Some(summary);
        }
        if stop.is_none()
            && let Some(note) = self.only_unseen_documents()
        {
            return Some(note);
        }
        // The loop's note is the answer: the model gave none.
        if let Some(reason) = stop.or_else(|| self.guard.should_stop()) {
            self.record
                .warn(WarningCode::ToolLoopStopped, reason.clone());
            self.record.facts.answer_end = AnswerEnd::LoopStopped;
            return Some(reason);
        }
        let budget = self.plan.iteration_budget();
        if index + 1 == budget {
            let reason = format!(
                "[Tool loop stopped: the iteration limit of {budget} model calls was reached.]"
            );
            self.record
                .warn(WarningCode::IterationLimit, reason.clone());
            self.record.facts.answer_end = AnswerEnd::LoopStopped;
            return Some(reason);
        }
        None
    }
}

/// A call's result as the model reads it.
pub fn tool_result_message(name: &str, report: &CallReport, broken_note: bool) -> String {
    wrap_result(name, &report.text, broken_note)
}

/// A tool's output as the model reads it.
pub fn wrap_result(name: &str, text: &str, broken_note: bool) -> String {
    let mut wrapped = format!("[tool_result: {name}]\n{text}\n[/tool_result]");
    if broken_note {
        wrapped.push_str("\n[note] Another tool-call block in your reply was not valid JSON and was ignored; nothing ran for it.");
    }
    wrapped
}

/// Native calls when the reply has them; otherwise calls written as text.
pub fn proposals(native: &[NativeCall], finish_reason: &str, text: &TextCalls) -> Vec<Proposal> {
    if !native.is_empty() {
        return native
            .iter()
            .map(|call| {
                let args = textcall::args_from_json(&call.arguments).map_err(|e| {
                    if finish_reason == "length" {
                        format!("{e} (the reply was cut off at the token limit)")
                    } else {
                        e.to_string()
                    }
                });
                Proposal {
                    native_id: call.id.clone(),
                    name: call.name.clone(),
                    args,
                    source: "native",
                }
            })
            .collect();
    }
    text.calls
        .iter()
        .map(|call| Proposal {
            native_id: String::new(),
            name: call.name.clone(),
            args: Ok(call.args.clone()),
            source: "text",
        })
        .collect()
}

//! What a reply leads to, and the end of the turn: the answer, a retry, or the calls it
//! proposed, each run through the nested call machine with its result added to the
//! conversation; when the loop ends, the static web check and its one repair round; then the
//! outcome and the final answer.

use crate::planning::budget::Kind;
use crate::proposal::constrain;
use crate::request::outcome::AnswerEnd;
use crate::text::textcall;

use super::super::Notice;
use super::super::Turn;
use super::super::call::{self, Effect, Proposal};
use super::super::conversation::{Entry, Message, Role};
use super::super::model::ReplyAction;
use super::preread::output_entry;
use super::{Active, ModelReply, Stage, TurnEffect};

/// At most this many model calls in the one web repair round (an edit, maybe a second, an
/// answer).
pub const REPAIR_CALLS: usize = 3;

impl Turn {
    pub(super) fn replied(&mut self, reply: ModelReply) -> TurnEffect {
        let index = self.machine.round.index;
        self.record_call(index, Some(&reply), None);
        let request = self.machine.round.request.as_ref();
        self.notify(Notice::Usage {
            model_call: index,
            prompt_tokens: reply
                .prompt_tokens
                .or(request.map(|r| r.prompt_tokens))
                .unwrap_or(0),
            cached_tokens: reply.cached_tokens,
            completion_tokens: reply.completion_tokens,
            context_tokens: self.limits().context,
        });
        // A constrained answer is prose in JSON; one cut at the reply limit is salvaged, so
        // the person never sees the constraint's JSON.
        let content = match constrain::unwrap_answer(&reply.content) {
            Some(answer) if self.machine.constrained => answer,
            _ if self.machine.constrained => {
                constrain::salvage_answer(&reply.content).unwrap_or_else(|| reply.content.clone())
            }
            _ => reply.content.clone(),
        };
        let cut = reply.finish_reason == "length";
        let answer_end = match (cut, content.trim().is_empty()) {
            (false, _) => AnswerEnd::Whole,
            (true, false) => AnswerEnd::Cut,
            (true, true) => AnswerEnd::CutEmpty,
        };
        let text = textcall::parse(&content);
        let surface = self.round_surface();
        let action = self.reply(
            index,
            &surface,
            &reply.tool_calls,
            &reply.finish_reason,
            text,
        );
        match action {
            ReplyAction::Answer(answer) => {
                self.record.facts.answer_end = answer_end;
                self.loop_over(answer)
            }
            ReplyAction::Retry(prompt) => {
                self.add_turn_message(Message::new(Role::Assistant, content));
                self.add_turn_message(Message::new(Role::User, prompt));
                self.next_request()
            }
            ReplyAction::Dispatch {
                proposals,
                broken_note,
            } => {
                let mut message = Message::new(Role::Assistant, content);
                message.tool_calls = reply.tool_calls.clone();
                self.add_turn_message(message);
                self.machine.round.native = !reply.tool_calls.is_empty();
                self.machine.round.broken_note = broken_note;
                self.machine.queue = proposals.into();
                self.next_call()
            }
        }
    }

    /// A message of this turn the budget never cuts (its note is itself).
    fn add_turn_message(&mut self, message: Message) {
        let note = message.content.clone();
        if let Some(conversation) = self.machine.conversation.as_mut() {
            conversation
                .turn
                .push(Entry::new(Kind::Turn, vec![message], Some(note)));
        }
    }

    fn next_call(&mut self) -> TurnEffect {
        if self.machine.round.stop.is_some() || self.machine.interrupt.is_some() {
            return self.round_over();
        }
        let Some(proposal) = self.machine.queue.pop_front() else {
            return self.round_over();
        };
        let key = (proposal.name.clone(), proposal.args.clone());
        if self.machine.round.ran.contains(&key) {
            // Every call of a reply is judged in the reply's phase; the same call twice in
            // one reply is one call: the copy is answered and not run (or recorded) again.
            let entry = self.result_entry(
                &proposal,
                "[Talos: this call repeats an earlier call of the same reply; it was not run again.]"
                    .into(),
                false,
            );
            if let Some(conversation) = self.machine.conversation.as_mut() {
                conversation.turn.push(entry);
            }
            return self.next_call();
        }
        self.machine.round.ran.push(key);
        let call = self.propose(proposal);
        self.machine.active = Active::Call(Box::new(call), None);
        self.call_step(call::Input::Start)
    }

    pub(super) fn call_step(&mut self, input: call::Input) -> TurnEffect {
        let Active::Call(mut call, _) = std::mem::take(&mut self.machine.active) else {
            return self.round_over();
        };
        match call.step(self, input) {
            Effect::Finish(report) => {
                self.machine.round.mutated |= report.mutated;
                let broken = std::mem::take(&mut self.machine.round.broken_note);
                let entry = self.result_entry(call.proposal(), report.text, broken);
                if let Some(conversation) = self.machine.conversation.as_mut() {
                    conversation.turn.push(entry);
                }
                if report.stop.is_some() {
                    self.machine.round.stop = report.stop;
                    return self.round_over();
                }
                self.next_call()
            }
            effect => {
                let call_id = call.id.clone();
                self.machine.active = Active::Call(call, None);
                self.machine.stage = Stage::Calling;
                TurnEffect::Call { call_id, effect }
            }
        }
    }

    /// A call's result as the model reads it: a tool message answering a native call, a user
    /// message otherwise.
    fn result_entry(&self, proposal: &Proposal, text: String, broken: bool) -> Entry {
        let label = proposal
            .args
            .as_ref()
            .ok()
            .and_then(|args| args.get("path").cloned())
            .unwrap_or_else(|| proposal.name.clone());
        let (role, id) = if self.machine.round.native {
            (Role::Tool, Some(proposal.native_id.clone()))
        } else {
            (Role::User, None)
        };
        output_entry(
            String::new(),
            &proposal.name,
            &label,
            text,
            role,
            id,
            broken,
        )
    }

    /// After the calls of one reply: the loop ends (a call asked to stop, the turn was
    /// interrupted, discipline, the budget) or the next request goes out.
    fn round_over(&mut self) -> TurnEffect {
        self.machine.queue.clear();
        if self.machine.round.mutated {
            self.reply_done();
        }
        if self.machine.interrupt.is_some() {
            return self.loop_over(String::new());
        }
        let stop = self.machine.round.stop.take();
        match self.after_calls(stop, self.machine.round.index) {
            Some(answer) => self.loop_over(answer),
            None => self.next_request(),
        }
    }

    /// The model loop ended with `answer` (a repair round's answer stands only when it says
    /// something).
    pub(super) fn loop_over(&mut self, answer: String) -> TurnEffect {
        if self.machine.repairing {
            if !answer.trim().is_empty() {
                self.machine.answer = answer;
            }
            self.machine.diagnostics = None;
            self.settle();
            return self.web_or_finish(false);
        }
        self.end(answer)
    }

    /// The turn's work is over with `answer`: the records are settled, then the web check
    /// (repairable when the model can still be asked) or the end.
    pub(super) fn end(&mut self, answer: String) -> TurnEffect {
        self.machine.answer = answer;
        self.settle();
        let repairable = self.machine.conversation.is_some() && self.machine.interrupt.is_none();
        self.web_or_finish(repairable)
    }

    fn web_or_finish(&mut self, repairable: bool) -> TurnEffect {
        if !self.web_check_due() {
            return self.conclude();
        }
        self.machine.stage = Stage::Checking { repairable };
        TurnEffect::WebCheck {
            focus: self.web_focus(),
        }
    }

    pub(super) fn web_checked(
        &mut self,
        repairable: bool,
        report: Option<super::super::web::WebReport>,
    ) -> TurnEffect {
        let Some(report) = report else {
            return self.conclude();
        };
        self.machine.diagnostics = self.record_web(&report);
        let repair = if repairable {
            self.web_repair_due(&report)
        } else {
            None
        };
        let Some(repair) = repair else {
            return self.conclude();
        };
        self.begin_repair(&repair);
        self.add_turn_message(Message::new(Role::User, repair.prompt));
        self.machine.repairing = true;
        self.machine.end = self.machine.next + REPAIR_CALLS;
        self.next_request()
    }

    fn conclude(&mut self) -> TurnEffect {
        let answer = self.machine.answer.clone();
        let diagnostics = self.machine.diagnostics.take();
        let done = self.finish(&answer, diagnostics);
        self.machine.finished = Some(done.clone());
        self.machine.stage = Stage::Done;
        TurnEffect::Finish(done)
    }
}

//! Each model request, assembled within the context budget: the surface of the call, the
//! system text, the count of every part the daemon has not counted yet, the window of a long
//! tool result, what goes in whole and what is cut ([`crate::planning::budget`]), and the decoding
//! constraint. A context-exceeded answer from the server is taken as its own numbers: the
//! request is cut again to fit and sent once more; only a request that cannot fit even the
//! system text and the request ends the turn, with both sizes named.

use crate::planning::budget::{self, Fit, Kind, Limits, Part};
use crate::planning::prompt::{self, ToolCalling};
use crate::planning::surface::Surface;
use crate::proposal::change_rule;
use crate::proposal::constrain::{self, Step};
use crate::text::digest::digest_text;

use super::super::Turn;
use super::super::conversation::{Message, Role};
use super::super::record::{ModelCallRecord, WarningCode};
use super::{CountSlot, Countable, ModelFailure, ModelRequest, Round, Stage, TurnEffect};

/// Tokens one native tool definition is taken to cost when the server has no tokenizer.
pub const TOOL_ESTIMATE: u64 = 160;

impl Turn {
    /// The next model call, or the end of the loop.
    pub(super) fn next_request(&mut self) -> TurnEffect {
        if self.machine.interrupt.is_some() || self.machine.next >= self.machine.end {
            return self.loop_over(String::new());
        }
        let index = self.machine.next;
        self.machine.next += 1;
        let Some(surface) = self.begin_model_call(index) else {
            return self.loop_over(String::new());
        };
        self.machine.round = Round {
            index,
            surface: Some(surface),
            ..Round::default()
        };
        self.assemble()
    }

    /// The surface the current model call began with (recorded by `begin_model_call`).
    pub(super) fn round_surface(&self) -> crate::planning::surface::Surface {
        self.machine
            .round
            .surface
            .clone()
            .unwrap_or_else(|| self.surface())
    }

    /// Counts what is not counted, windows what is too long, and sends what fits.
    pub(super) fn assemble(&mut self) -> TurnEffect {
        let surface = self.round_surface();
        let calling = self.machine.calling.unwrap_or(ToolCalling::Text);
        let mut system = prompt::system_prompt(&self.plan, &surface, self.phase, calling);
        if calling == ToolCalling::Text {
            system.push_str(&crate::proposal::mcp::prompt_section(&self.external));
        }
        let tools = match calling {
            ToolCalling::Native => surface.tools().to_vec(),
            ToolCalling::Text => Vec::new(),
        };
        if let Some(count) = self.uncounted(&system, &tools) {
            return count;
        }
        let fixed = self.counted_fixed(&tools);
        if self.window_instructions(fixed) || self.window_outputs(fixed) {
            return self.assemble();
        }
        let limits = self.limits();
        let mut parts = vec![Part {
            kind: Kind::System,
            tokens: fixed,
            note_tokens: 0,
            age: 0,
        }];
        let scale = self.machine.scale;
        let conversation = self.machine.conversation.clone().unwrap_or_default();
        parts.extend(conversation.parts(|n| scaled(n, scale)));
        match budget::assemble(limits, &parts) {
            Fit::TooSmall { needed, available } => self.too_small(needed, available),
            Fit::Fits { placements, tokens } => {
                let (messages, cut) = conversation.placed(&placements[1..]);
                let mut all = vec![Message::new(Role::System, system)];
                all.extend(messages);
                self.send(all, tools, &surface, tokens, cut)
            }
        }
    }

    fn send(
        &mut self,
        messages: Vec<Message>,
        tools: Vec<crate::planning::tools::ToolId>,
        surface: &Surface,
        tokens: u64,
        cut: Vec<String>,
    ) -> TurnEffect {
        let index = self.machine.round.index;
        let calling = self.machine.calling.unwrap_or(ToolCalling::Text);
        let schema = self.schema_for(surface);
        let hold = self.hold_reply(schema.is_some());
        let external_tools = match calling {
            ToolCalling::Native => self.external.iter().map(|t| t.native_spec()).collect(),
            ToolCalling::Text => Vec::new(),
        };
        let request = ModelRequest {
            index,
            messages,
            tools,
            external_tools,
            tool_choice_required: self.requires_tool_call(index, calling, surface),
            schema,
            hold,
            context_tokens: self.limits().context,
            prompt_tokens: tokens,
        };
        self.machine.round.cut = cut;
        self.machine.round.request = Some(request.clone());
        self.machine.stage = Stage::Requesting;
        TurnEffect::Request(request)
    }

    /// The count effect for what has no count yet, or `None` when everything is counted.
    fn uncounted(
        &mut self,
        system: &str,
        tools: &[crate::planning::tools::ToolId],
    ) -> Option<TurnEffect> {
        let mut items = Vec::new();
        let mut slots = Vec::new();
        if self.machine.counted_system.as_ref().map(|c| c.0.as_str()) != Some(system) {
            items.push(Countable::Text(system.to_string()));
            slots.push((
                CountSlot::System(system.to_string()),
                budget::estimate(system),
            ));
        }
        if !tools.is_empty()
            && self.machine.counted_tools.as_ref().map(|c| c.0.as_slice()) != Some(tools)
        {
            items.push(Countable::Tools(tools.to_vec()));
            let estimate = TOOL_ESTIMATE * tools.len() as u64;
            slots.push((CountSlot::Tools(tools.to_vec()), estimate));
        }
        let conversation = self.machine.conversation.as_ref()?;
        for (i, entry) in conversation.entries().iter().enumerate() {
            if entry.tokens.is_none() {
                let text = entry.text();
                slots.push((CountSlot::Entry(i), budget::estimate(&text)));
                items.push(Countable::Text(text));
            }
        }
        if items.is_empty() {
            return None;
        }
        self.machine.counting = slots;
        self.machine.stage = Stage::Counting;
        Some(TurnEffect::Count(items))
    }

    /// The counts the daemon made (the estimates when it could not), then the request.
    pub(super) fn counted(&mut self, counts: Option<Vec<u64>>) -> TurnEffect {
        let slots = std::mem::take(&mut self.machine.counting);
        let counts = counts.filter(|c| c.len() == slots.len());
        for (i, (slot, estimate)) in slots.into_iter().enumerate() {
            let tokens = counts.as_ref().map_or(estimate, |c| c[i]);
            match slot {
                CountSlot::System(text) => self.machine.counted_system = Some((text, tokens)),
                CountSlot::Tools(tools) => self.machine.counted_tools = Some((tools, tokens)),
                CountSlot::Entry(position) => {
                    if let Some(conversation) = self.machine.conversation.as_mut()
                        && let Some(entry) = conversation.entries_mut().into_iter().nth(position)
                    {
                        entry.tokens = Some(tokens);
                    }
                }
            }
        }
        self.assemble()
    }

    /// The system text's and the tools' tokens, scaled.
    fn counted_fixed(&self, tools: &[crate::planning::tools::ToolId]) -> u64 {
        let system = self.machine.counted_system.as_ref().map_or(0, |c| c.1);
        let tools = if tools.is_empty() {
            0
        } else {
            self.machine.counted_tools.as_ref().map_or(0, |c| c.1)
        };
        // MCP tools' definitions are estimated (they are the servers', and few).
        let external: u64 = self
            .external
            .iter()
            .map(|t| budget::estimate(&t.native_spec().to_string()))
            .sum();
        scaled(system + tools, self.machine.scale) + external
    }

    pub(super) fn limits(&self) -> Limits {
        self.machine.limits.unwrap_or(Limits {
            context: self.settings.model.ctx_per_request,
            reply: self.settings.model.reply_tokens,
        })
    }

    /// Cuts the project's instructions when they do not fit whole: the lines from the start
    /// that fit in half of what the system text and the request leave (the rest of the room
    /// is the turn's), with a note saying so to the model; the person is told once. Returns
    /// whether they were cut (they are counted again). A block already cut is not cut again
    /// until an overflow restores it ([`Turn::shrink_to`]).
    fn window_instructions(&mut self, fixed: u64) -> bool {
        let limits = self.limits();
        let scale = self.machine.scale;
        let Some(whole) = self.instructions.clone() else {
            return false;
        };
        let Some(conversation) = self.machine.conversation.as_mut() else {
            return false;
        };
        let request = conversation
            .request
            .as_ref()
            .map_or(0, |e| scaled(e.tokens.unwrap_or(0), scale));
        let Some(entry) = conversation.instructions.as_mut() else {
            return false;
        };
        let Some(message) = entry.messages.first_mut().filter(|m| m.content == whole) else {
            return false;
        };
        let room = limits
            .prompt()
            .saturating_sub(fixed + request + 2 * budget::MESSAGE_OVERHEAD);
        let tokens = scaled(entry.tokens.unwrap_or(0), scale);
        let label = "the project's instructions";
        let Some(window) = budget::window(&whole, tokens, room / 2, label) else {
            return false;
        };
        let all = whole.lines().count();
        let kept = window.text.lines().count().saturating_sub(1);
        let mut text = whole.lines().take(kept).collect::<Vec<_>>().join("\n");
        text.push_str(&format!(
            "\n[Cut here: the project's instructions do not fit the model's context whole; the first {kept} of their {all} lines are sent.]"
        ));
        message.content = text;
        entry.tokens = None;
        if !self.machine.instructions_cut_told {
            self.machine.instructions_cut_told = true;
            let files: Vec<String> = self
                .record
                .instructions
                .iter()
                .map(|u| u.path.clone())
                .collect();
            self.notify(super::super::Notice::Error(format!(
                "instructions {} cut to fit the model's context: the first {kept} of {all} lines are sent (the rest is left out; raise model.ctx or shorten the file)",
                files.join(", ")
            )));
        }
        true
    }

    /// Windows each tool result that has not been and is longer than its room: the newest
    /// gets what the other parts of the turn leave, and at least half of what the system
    /// text and the request leave. Returns whether one was windowed (it is counted again).
    fn window_outputs(&mut self, fixed: u64) -> bool {
        let limits = self.limits();
        let scale = self.machine.scale;
        let Some(conversation) = self.machine.conversation.as_mut() else {
            return false;
        };
        let request = conversation
            .request
            .as_ref()
            .map_or(0, |e| scaled(e.tokens.unwrap_or(0), scale));
        let room = limits
            .prompt()
            .saturating_sub(fixed + request + 2 * budget::MESSAGE_OVERHEAD);
        let mut entries = conversation.entries_mut();
        let turn_total: u64 = entries
            .iter()
            .filter(|e| e.kind == Kind::Turn)
            .map(|e| scaled(e.tokens.unwrap_or(0), scale) + budget::MESSAGE_OVERHEAD)
            .sum();
        let mut changed = false;
        for entry in entries.iter_mut().rev() {
            let tokens = scaled(entry.tokens.unwrap_or(0), scale);
            let Some(output) = entry.output.as_mut().filter(|o| !o.windowed) else {
                continue;
            };
            let others = turn_total.saturating_sub(tokens + budget::MESSAGE_OVERHEAD);
            let allowance = room.saturating_sub(others).max(room / 2);
            let prefix = budget::estimate(&output.prefix) + 16;
            output.windowed = true;
            if let Some(window) = budget::window(
                &output.text,
                tokens.saturating_sub(prefix),
                allowance.saturating_sub(prefix),
                &output.label,
            ) {
                output.text = window.text;
                if let Some(message) = entry.messages.first_mut() {
                    message.content = output.content();
                }
                entry.tokens = None;
                changed = true;
            }
        }
        changed
    }

    fn schema_for(&mut self, surface: &Surface) -> Option<serde_json::Value> {
        // The constraint knows Talos's own tools only: with MCP tools offered, calls are
        // checked after the reply, as on `off`.
        if !self.external.is_empty() {
            return None;
        }
        let known = self.known_files();
        let rules = change_rule::rules(&self.plan);
        let contract = self.plan.contract();
        let level = self.machine.level;
        let step = Step {
            tools: surface.tools(),
            phase: self.phase,
            mutation_allowed: contract.mutation_allowed,
            expected: &contract.expected_targets,
            forbidden: &contract.forbidden_targets,
            readable: &self.machine.readable,
            read_texts: &self.machine.read_texts,
            known: &known,
            rules: &rules,
            answer_allowed: self.answer_allowed(),
        };
        let schema = constrain::compile(level, &step);
        let pinned: Vec<&String> = contract
            .expected_targets
            .iter()
            .filter(|t| constrain::pins_new_text(level, &step, t))
            .collect();
        let already = self
            .record
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::ConstraintChoseNewText);
        if schema.is_some() && !pinned.is_empty() && !already {
            let message = format!(
                "the constraint admitted only the lines of {} holding the old value, each with the requested replacement made: the model chose the line, not the new text",
                pinned
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            self.record
                .warn(WarningCode::ConstraintChoseNewText, message);
        }
        self.machine.constrained = schema.is_some();
        schema
    }

    /// Named files whose content this turn knows and that did not change since: read (on a
    /// change turn, not as a window the budget or the read tool cut) or written by this turn.
    fn known_files(&self) -> Vec<String> {
        let contract = self.plan.contract();
        let mut named: Vec<&String> = self.machine.readable.iter().collect();
        named.extend(contract.expected_targets.iter());
        let partial = |path: &str| {
            self.machine.conversation.as_ref().is_some_and(|c| {
                c.entries().iter().any(|e| {
                    e.output.as_ref().is_some_and(|o| {
                        o.label == path && (o.text != o.whole || o.whole.contains(" more lines"))
                    })
                })
            })
        };
        // On a question, a file read once, even as a window, is not offered again: the same
        // read would be refused as a repeat, and the loop would end with no answer at all.
        let question = !contract.mutation_allowed;
        let mut known: Vec<String> = Vec::new();
        for path in named {
            if self.guard.was_read(path) && (question || !partial(path)) && !known.contains(path) {
                known.push(path.clone());
            }
        }
        known
    }

    fn too_small(&mut self, needed: u64, available: u64) -> TurnEffect {
        // The MCP tools are the first thing to go, the last offered first (those the request
        // names come first), only as many as the excess: the turn goes on with the rest.
        if !self.external.is_empty() {
            self.leave_out_external(needed, available);
            return self.assemble();
        }
        let limits = self.limits();
        let message = format!(
            "the request does not fit the model's context: the system text, the tools and the request take {needed} tokens, and {available} of the {}-token context are left for them once {} are kept for the reply; raise model.ctx (or model.ctx_per_request), or lower model.reply_tokens",
            limits.context, limits.reply
        );
        self.record.facts.model_failed = true;
        self.record
            .warn(WarningCode::ContextTooSmall, message.clone());
        self.notify(super::super::Notice::Error(message.clone()));
        self.loop_over(format!("The model was not asked: {message}."))
    }

    /// Leaves out the last offered MCP tools until their definitions free what the request is
    /// over by, and says which and why.
    fn leave_out_external(&mut self, needed: u64, available: u64) {
        let excess = needed.saturating_sub(available);
        let mut freed = 0;
        let mut left_out = Vec::new();
        while freed < excess
            && let Some(tool) = self.external.pop()
        {
            freed += budget::estimate(&tool.native_spec().to_string());
            left_out.push(tool.qualified());
        }
        left_out.reverse();
        self.record
            .external_offered
            .retain(|name| !left_out.contains(name));
        let kept = if self.external.is_empty() {
            "none is offered".to_string()
        } else {
            format!("still offered: {}", self.record.external_offered.join(", "))
        };
        let message = format!(
            "the MCP tools {} were left out: with their definitions the request does not fit the model's context ({needed} tokens, {available} left); {kept}. Name the tool you want in the request (it is offered first), or raise model.ctx",
            left_out.join(", ")
        );
        self.record
            .warn(WarningCode::ContextTooSmall, message.clone());
        self.notify(super::super::Notice::Info(message));
    }

    /// A failed request: a context overflow is retried once with the server's own numbers;
    /// anything else ends the loop.
    pub(super) fn failed(&mut self, failure: ModelFailure) -> TurnEffect {
        let index = self.machine.round.index;
        let message = match &failure {
            ModelFailure::ContextExceeded { message, .. } | ModelFailure::Other(message) => {
                message.clone()
            }
        };
        self.record_call(index, None, Some(message.clone()));
        if let ModelFailure::ContextExceeded {
            prompt_tokens,
            n_ctx,
            ..
        } = failure
            && self.machine.overflow_retried != Some(index)
        {
            self.machine.overflow_retried = Some(index);
            self.shrink_to(prompt_tokens, n_ctx);
            self.record.warn(
                WarningCode::ContextExceeded,
                format!("{message}; the request was cut to the server's numbers and sent again"),
            );
            return self.assemble();
        }
        self.record.facts.model_failed = true;
        self.notify(super::super::Notice::Error(message.clone()));
        let advice = match failure {
            ModelFailure::ContextExceeded { .. } => {
                " Talos had cut the request to fit and it still did not; raise model.ctx (or model.ctx_per_request)."
            }
            ModelFailure::Other(_) => "",
        };
        self.loop_over(format!("The model call failed: {message}{advice}"))
    }

    /// The budget after an overflow: the server's context, and our counts scaled to its count
    /// of the prompt; every tool result is windowed again from its whole text.
    fn shrink_to(&mut self, prompt_tokens: Option<u64>, n_ctx: Option<u64>) {
        let counted = self
            .machine
            .round
            .request
            .as_ref()
            .map_or(0, |r| r.prompt_tokens);
        if let Some(limits) = self.machine.limits.as_mut() {
            limits.context = n_ctx.map_or(limits.context, |n| n.min(limits.context));
        }
        let (num, den) = self.machine.scale;
        // Our count was `counted` (already scaled); the server's was larger: scale further.
        if let Some(server) = prompt_tokens
            && counted > 0
            && server > counted
        {
            let (num, den) = (num * server, den * counted);
            let divisor = gcd(num, den).max(1);
            self.machine.scale = (num / divisor, den / divisor);
        }
        if let Some(conversation) = self.machine.conversation.as_mut() {
            // The instructions are cut again from their whole text too.
            if let (Some(entry), Some(whole)) = (
                conversation.instructions.as_mut(),
                self.instructions.as_ref(),
            ) && let Some(message) = entry.messages.first_mut()
            {
                message.content = whole.clone();
                entry.tokens = None;
            }
            for entry in conversation.entries_mut() {
                if let Some(output) = entry.output.as_mut() {
                    output.text = output.whole.clone();
                    output.windowed = false;
                    if let Some(message) = entry.messages.first_mut() {
                        message.content = output.content();
                    }
                    entry.tokens = None;
                }
            }
        }
    }

    /// Records model call `index`: its reply, or why it failed.
    pub(super) fn record_call(
        &mut self,
        index: usize,
        reply: Option<&super::ModelReply>,
        error: Option<String>,
    ) {
        let request = self.machine.round.request.as_ref();
        self.record.model_calls.push(ModelCallRecord {
            index,
            finish_reason: reply.map(|r| r.finish_reason.clone()).unwrap_or_default(),
            content: reply.map(|r| digest_text(&r.content)).unwrap_or_default(),
            tool_calls: reply.map_or(0, |r| r.tool_calls.len()),
            prompt_tokens: reply.and_then(|r| r.prompt_tokens),
            completion_tokens: reply.and_then(|r| r.completion_tokens),
            cached_tokens: reply.and_then(|r| r.cached_tokens),
            context_tokens: request.map(|r| r.context_tokens),
            budgeted_tokens: request.map(|r| r.prompt_tokens),
            cut: self.machine.round.cut.clone(),
            error,
        });
    }
}

/// `n` times the scale, rounded up.
fn scaled(n: u64, (num, den): (u64, u64)) -> u64 {
    if den == 0 {
        return n;
    }
    (n * num).div_ceil(den)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn scaling_rounds_up() {
        assert_eq!(super::scaled(10, (3, 2)), 15);
        assert_eq!(super::scaled(3, (4, 3)), 4);
        assert_eq!(super::scaled(7, (1, 1)), 7);
    }
}

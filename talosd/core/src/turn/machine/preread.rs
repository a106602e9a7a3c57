//! The named files and the runtime's own reads before the first model call (issue 15): which
//! named files exist (the decoding constraint offers only those), and, on a change turn at
//! the strict level, each small unprotected expected target read through the same call
//! machine as `talos.read_file` (checks, protection, the ladder, the trace, read-before-write).
//! Whether a read succeeded is taken from the call's records, not from its text.

use std::collections::BTreeMap;

use crate::budget::Kind;
use crate::constrain::Level;
use crate::plan::ActionObligation;
use crate::protected::protected_kind;
use crate::tools::ToolId;

use super::super::Turn;
use super::super::call::{self, Proposal};
use super::super::conversation::{Entry, Message, Role, ToolOutput, cut_note};
use super::{Active, NamedFile, Stage, TurnEffect};

impl Turn {
    /// The expected targets the runtime reads itself: on a change turn at the strict level
    /// (its text is what strict offers as `old_string`), never a protected one.
    pub(crate) fn preread_candidates(&self) -> Vec<String> {
        let contract = self.plan.contract();
        let change_turn = contract.mutation_allowed
            && self.plan.obligation() == ActionObligation::MutatingToolRequired
            && self.surface().allows(ToolId::ReadFile);
        if !change_turn
            || self.settings.model.preread_max_bytes == 0
            || self.settings.model.constrain != Level::Strict
        {
            return Vec::new();
        }
        contract
            .expected_targets
            .iter()
            .filter(|p| protected_kind(p).is_none())
            .cloned()
            .collect()
    }

    pub(super) fn inspected(&mut self, files: Vec<NamedFile>) -> TurnEffect {
        let candidates = self.preread_candidates();
        let mut queue = Vec::new();
        for file in files {
            if !file.file {
                continue;
            }
            if !self.machine.readable.contains(&file.path) {
                self.machine.readable.push(file.path.clone());
            }
            if candidates.contains(&file.path)
                && let Some(text) = file.small_text
            {
                queue.push((file.path, text));
            }
        }
        queue.reverse();
        self.next_preread(queue)
    }

    fn next_preread(&mut self, mut queue: Vec<(String, String)>) -> TurnEffect {
        let Some((path, text)) = queue.pop() else {
            return self.next_request();
        };
        let mut args = BTreeMap::new();
        args.insert("path".to_string(), path.clone());
        let call = self.propose(Proposal {
            native_id: String::new(),
            name: ToolId::ReadFile.name().into(),
            args: Ok(args),
            source: "runtime",
        });
        self.machine.active = Active::Call(Box::new(call), Some((path, text)));
        self.preread_step(queue, call::Input::Start)
    }

    pub(super) fn preread_step(
        &mut self,
        queue: Vec<(String, String)>,
        input: call::Input,
    ) -> TurnEffect {
        let Active::Call(mut call, read) = std::mem::take(&mut self.machine.active) else {
            return self.next_preread(queue);
        };
        match call.step(self, input) {
            call::Effect::Finish(report) => {
                if let Some((path, text)) = read
                    && self.read_succeeded(&call.id, &path)
                {
                    self.machine.read_texts.push((path.clone(), text));
                    let entry = output_entry(
                        format!("Talos read {path} for you before your first reply:\n"),
                        ToolId::ReadFile.name(),
                        &path,
                        report.text,
                        Role::User,
                        None,
                        false,
                    );
                    if let Some(conversation) = self.machine.conversation.as_mut() {
                        conversation.prereads.push(entry);
                    }
                }
                self.next_preread(queue)
            }
            effect => {
                let call_id = call.id.clone();
                self.machine.active = Active::Call(call, read);
                self.machine.stage = Stage::PreReading(queue);
                TurnEffect::Call { call_id, effect }
            }
        }
    }

    /// Whether call `call_id` read `path`, by the records.
    fn read_succeeded(&self, call_id: &str, path: &str) -> bool {
        self.record.read_paths.iter().any(|p| p == path)
            && self
                .record
                .executions
                .iter()
                .any(|e| e.call_id == call_id && e.success)
    }
}

/// A tool result as a conversation entry that the budget can window or cut.
pub(crate) fn output_entry(
    prefix: String,
    name: &str,
    label: &str,
    text: String,
    role: Role,
    tool_call_id: Option<String>,
    broken_note: bool,
) -> Entry {
    let output = ToolOutput {
        prefix,
        name: name.to_string(),
        label: label.to_string(),
        whole: text.clone(),
        text,
        broken_note,
        windowed: false,
    };
    let mut message = Message::new(role, output.content());
    message.tool_call_id = tool_call_id;
    let mut entry = Entry::new(Kind::Turn, vec![message], Some(cut_note(name, label)));
    entry.output = Some(output);
    entry
}

//! The named files and the runtime's own reads before the first model call (issues 15, 24): which
//! named files exist (the decoding constraint offers only those), and, at every constraint
//! level, each small unprotected named file (a change's expected targets, a question's files)
//! read through the same call machine as `talos.read_file` (checks, protection, the ladder, the
//! trace, read-before-write).
//! Whether a read succeeded is taken from the call's records, not from its text.

use std::collections::BTreeMap;

use crate::planning::budget::Kind;
use crate::planning::plan::{ActionObligation, EvidenceObligation};
use crate::planning::tools::ToolId;
use crate::text::protected::protected_kind;

use super::super::Turn;
use super::super::call::{self, Proposal};
use super::super::conversation::{Entry, Message, Role, ToolOutput, cut_note};
use super::{Active, NamedFile, Stage, TurnEffect};

impl Turn {
    /// The named files the runtime reads itself before the first model call, at every
    /// constraint level (issue 24): on a change turn its expected targets, on a question the
    /// files it names; never a protected one.
    pub(crate) fn preread_candidates(&self) -> Vec<String> {
        let contract = self.plan.contract();
        if self.settings.model.preread_max_bytes == 0 || !self.surface().allows(ToolId::ReadFile) {
            return Vec::new();
        }
        let change_turn = contract.mutation_allowed
            && self.plan.obligation() == ActionObligation::MutatingToolRequired;
        let question = !contract.mutation_requested
            && matches!(
                self.plan.evidence_obligation(),
                EvidenceObligation::ReadTargetRequired
                    | EvidenceObligation::WorkspaceInspectionRequired
            );
        let named: Vec<&String> = if change_turn {
            contract.expected_targets.iter().collect()
        } else if question {
            contract
                .expected_targets
                .iter()
                .chain(contract.source_evidence_targets.iter())
                .collect()
        } else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for path in named {
            if protected_kind(path).is_none() && !out.contains(path) {
                out.push(path.clone());
            }
        }
        out
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
            if let Some(note) = self.only_unseen_documents() {
                return self.loop_over(note);
            }
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

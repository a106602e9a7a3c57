//! The end of a turn, decided from its records: the targets that had to change and did not,
//! the evidence the answer had to rest on and was not read, the task verifier's findings, the
//! classification, and the answer the person sees after the guards (a claimed change that did
//! not happen, a clean verdict the checks contradict, protected lines echoed back).

use crate::planning::plan::{EvidenceObligation, Expectation, RequestedResult};
use crate::request::contract::TaskType;
use crate::request::outcome::{self, Fine, MutationResult};

use super::Turn;
use super::record::WarningCode;

mod checked;
mod empty;
mod quoted;
mod unanswered;
pub use checked::NOTHING_CHECKABLE;
pub use unanswered::{CUT_ANSWER, CUT_BEFORE_ANY_ANSWER, LOOP_STOPPED_UNANSWERED};

/// The turn's final answer and outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Final {
    pub answer: String,
    pub fine: Fine,
    pub mutation_status: &'static str,
    pub approval_status: &'static str,
}

/// What replaces a protected line the answer echoed.
const WITHHELD: &str = "[protected content withheld]";

/// How an answer starts when lines of a protected file read this turn were withheld from it.
pub const PROTECTED_WITHHELD: &str = "[Protected content check: lines of a protected file in the answer were withheld. The file's contents are withheld from answers; `--mode private` shows it on your screen only.]";

/// What follows a refusal on a turn that read a protected file with approval: why its content
/// is not shown (issue 27).
pub const PROTECTED_NOT_SHOWN: &str = "[Protected content: the protected file was read with your approval, but its contents are withheld from answers. `--mode private` shows an approved protected read on your screen, never to the model.]";

/// How the contract read the request, as the answer says it: "a question about config.py".
fn reading(contract: &crate::request::contract::TaskContract) -> String {
    let what = match contract.task_type {
        TaskType::ReadOnlyQa => "a question",
        TaskType::WorkspaceExplain => "a request to explain the workspace",
        TaskType::DiagnoseOnly => "a request for a diagnosis",
        TaskType::VerifyOnly => "a request to check",
        TaskType::DirectoryListing => "a request for a listing",
        TaskType::SmallTalk => "conversation",
        TaskType::FileEdit => "a change",
        TaskType::FileCreate => "a request to create files",
        TaskType::CheckpointRestore => "a request to restore a checkpoint",
        TaskType::Unknown => "a request Talos could not classify",
    };
    let mut files: Vec<&str> = Vec::new();
    for file in contract
        .expected_targets
        .iter()
        .chain(&contract.source_evidence_targets)
    {
        if !files.contains(&file.as_str()) {
            files.push(file);
        }
    }
    if files.is_empty() {
        what.to_string()
    } else {
        format!("{what} about {}", files.join(", "))
    }
}

impl Turn {
    /// Settles what the records say once the loop is over: unmet targets, counts, and the
    /// evidence the request named that was not read.
    pub fn settle(&mut self) {
        let facts = &mut self.record.facts;
        let changed: Vec<&str> = facts
            .mutations
            .iter()
            .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
            .map(|m| m.target.as_str())
            .collect();
        let unmet: Vec<String> = self
            .plan
            .expectations()
            .iter()
            .filter_map(|e| match e {
                Expectation::MustChange { target } if !changed.contains(&target.as_str()) => {
                    Some(target.clone())
                }
                Expectation::MustChange { .. }
                | Expectation::Change { .. }
                | Expectation::ExactContent { .. } => None,
            })
            .collect();
        facts.unmet_targets = unmet;
        facts.expected_targets = self
            .plan
            .expectations()
            .iter()
            .filter_map(|e| match e {
                Expectation::MustChange { target } => Some(target.clone()),
                Expectation::Change { .. } | Expectation::ExactContent { .. } => None,
            })
            .collect();
        facts.reading = reading(self.plan.contract());
        facts.tools_offered = self
            .record
            .tool_surfaces
            .iter()
            .any(|s| !s.tools.is_empty());
        facts.tool_calls = self.record.tool_calls.len();
        self.evidence();
        if !self.record.model_calls.is_empty() {
            self.settle_obligations();
        }
    }

    fn evidence(&mut self) {
        let model_answered = !self.record.model_calls.is_empty();
        let needs_reading =
            self.plan.evidence_obligation() == EvidenceObligation::ReadTargetRequired;
        let small_talk = self.plan.contract().task_type == TaskType::SmallTalk;
        for result in self.plan.requested_results() {
            let RequestedResult::Read { target } = result else {
                continue;
            };
            if small_talk || self.record.read_paths.iter().any(|p| p == target) {
                continue;
            }
            // Settling again after a repair round must not record it twice.
            let message = format!("{target} was named by the request but not read this turn");
            if self.record.warnings.iter().any(|w| w.message == message) {
                continue;
            }
            self.record
                .warn(WarningCode::EvidenceTargetNotRead, message);
            if model_answered && needs_reading && !self.record.facts.mutation_requested {
                self.record.facts.evidence_missing.push(target.clone());
            }
        }
    }

    /// The outcome and the answer the person sees. `diagnostics` are the verifier's lines.
    pub fn finish(&mut self, model_answer: &str, diagnostics: Option<String>) -> Final {
        self.settle_checks();
        let facts = &self.record.facts;
        let fine = outcome::classify(facts);
        // The guards judge the model's words; an answer the runtime wrote before any model call
        // (a status from the records, the reading question) names changes it did not claim.
        let mut answer = if facts.contract_ambiguous || facts.runtime_answer {
            model_answer.to_string()
        } else {
            crate::ending::guard::guard_answer(model_answer, facts)
        };
        if fine == Fine::CompletedUnverified && facts.nothing_checkable {
            answer = format!("{answer}\n\n[Not verified: {NOTHING_CHECKABLE}.]")
                .trim_start()
                .to_string();
        }
        answer = unanswered::unanswered(facts, fine, answer);
        // An answer cut at the reply limit is a question's answer too: the record is quoted
        // beside what the model managed.
        if matches!(fine, Fine::ReadOnlyAnswered | Fine::Partial)
            && !facts.mutation_requested
            && !facts.runtime_answer
            && let Some(note) = quoted::quoted_facts(
                self.plan.original_request(),
                &self.machine.read_texts,
                &answer,
            )
        {
            answer = format!("{answer}\n\n{note}").trim_start().to_string();
        }
        // Claims that a document whose text was not seen is empty do not stand (issue 27).
        answer =
            crate::ending::guard::correct_document_claims(&answer, &facts.unreadable_documents);
        if let Some(listed) = self.answer_from_listing(&answer) {
            answer = listed;
        }
        if answer.starts_with(crate::ending::guard::CLEAN_VERDICT_CONTRADICTED) {
            let message = format!(
                "the answer said nothing was wrong; Talos's checks found {} problem(s)",
                facts.task_findings.len()
            );
            self.record
                .warn(WarningCode::CleanVerdictContradicted, message);
        }
        answer = self.withhold_protected(answer);
        if let Some(repeat) = self
            .record
            .warnings
            .iter()
            .find(|w| w.code == WarningCode::RepeatedRead)
            && !answer.contains(&repeat.message)
        {
            answer = format!(
                "{answer}\n\n[Talos: {}; it was not sent twice.]",
                repeat.message
            )
            .trim_start()
            .to_string();
        }
        // Last of the answer's own text: no statement before it says no file changed.
        answer = crate::ending::external::account(&answer, &self.record.facts.external_ran);
        if let Some(diagnostics) = diagnostics {
            answer = format!("{answer}\n\n{diagnostics}")
                .trim_start()
                .to_string();
        }
        // Diagnostics alone are an answer; only a turn left with no words at all is filled.
        let answer = empty::filled(&self.record.facts, fine, answer);
        Final {
            answer,
            fine,
            mutation_status: outcome::mutation_status(&self.record.facts),
            approval_status: outcome::approval_status(&self.record.facts),
        }
    }

    /// Lines of protected files read this turn, and the values they assign, never reach the
    /// person through the answer (nor, since the answer is what history keeps, the session
    /// file or a later request); the note says why and where the person can see them.
    fn withhold_protected(&mut self, answer: String) -> String {
        let mut echoed: Vec<&String> = self
            .record
            .protected_lines
            .iter()
            .filter(|l| answer.contains(l.as_str()))
            .collect();
        // Longest first: a whole line goes before the value inside it.
        echoed.sort_by_key(|l| std::cmp::Reverse(l.len()));
        if echoed.is_empty() {
            // The records show an approved protected read; a refusal to show it gets the why.
            let refused = crate::ending::guard::sentences_refuse(&answer);
            if !self.record.protected_lines.is_empty() && refused {
                return format!("{answer}\n\n{PROTECTED_NOT_SHOWN}");
            }
            return answer;
        }
        let mut answer = answer;
        for line in echoed {
            answer = answer.replace(line.as_str(), WITHHELD);
        }
        self.record.warn(
            WarningCode::ProtectedContentWithheld,
            "the answer echoed lines of a protected file; they were withheld",
        );
        format!("{PROTECTED_WITHHELD}\n\n{answer}")
    }
}

//! Which way a turn goes before any model call: the deterministic viewer (`auto` mode's `ls`,
//! `show FILE`), a status question answered from the session's records, a fixed runtime
//! answer (no command profile named, a checkpoint restore asked in words), a capability note
//! for documents the text tools cannot read, or the model. Also the context a follow-up
//! carries and whether the turn becomes the one a later "try again" continues.

use crate::contract::{Reason, TaskContract, TaskType};
use crate::modes::{SessionMode, Structural, structural_command};
use crate::outcome::Fine;
use crate::plan::TurnPlan;
use crate::targets::is_unreadable_document;

use super::record::FileResult;

/// The fixed answer to a checkpoint restore asked in words.
pub const RESTORE_ANSWER: &str = "Checkpoint restore is available through Talos's local checkpoint store.\nI did not restore files from this natural-language turn.\nCheckpoint restore commands arrive in a later release; the checkpoints of every change are kept under the Talos home.";

/// The fixed answer to a command check that names no profile.
pub const UNSUPPORTED_COMMAND_ANSWER: &str = "I can't run that command check because no approved command profile was specified. Talos runs commands only through bounded, approved command profiles: the built-in cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check and gradle_* profiles, and workspace profiles you pinned with talos profiles trust. Name one (for example: run the cargo_test command profile).";

/// How the turn is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `auto` mode's deterministic viewer.
    Viewer(Structural),
    /// "Did you make the changes?": from the previous turn's records.
    StatusFromRecords,
    /// A runtime answer with no model call.
    Fixed(&'static str),
    /// Named documents the text tools cannot read: a capability note, no reads.
    UnreadableDocuments(Vec<String>),
    /// The tool loop with the model.
    Model,
}

/// The previous turn's outcome, as the session keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorRecord {
    pub trace_id: String,
    pub classification: Fine,
    pub files: Vec<FileResult>,
}

/// Decides the route. `has_prior` says whether the session holds a previous outcome.
pub fn route(mode: SessionMode, plan: &TurnPlan, request: &str, has_prior: bool) -> Route {
    if mode.routes_structural()
        && let Some(command) = structural_command(request)
    {
        return Route::Viewer(command);
    }
    let contract = plan.contract();
    match contract.reason {
        Reason::PriorChangeStatusQuestion if has_prior => return Route::StatusFromRecords,
        Reason::UnsupportedCommand => return Route::Fixed(UNSUPPORTED_COMMAND_ANSWER),
        _ => {}
    }
    if let Some(documents) = unreadable_documents(contract) {
        return Route::UnreadableDocuments(documents);
    }
    if contract.task_type == TaskType::CheckpointRestore {
        return Route::Fixed(RESTORE_ANSWER);
    }
    Route::Model
}

/// Named documents the text tools cannot read, on a turn that only needs to read them.
fn unreadable_documents(contract: &TaskContract) -> Option<Vec<String>> {
    if contract.mutation_requested {
        return None;
    }
    let mut documents: Vec<String> = Vec::new();
    for target in contract
        .expected_targets
        .iter()
        .chain(&contract.source_evidence_targets)
    {
        if is_unreadable_document(target) && !documents.contains(target) {
            documents.push(target.clone());
        }
    }
    (!documents.is_empty()).then_some(documents)
}

/// The honest capability note for documents the text tools cannot read.
pub fn document_note(documents: &[String]) -> String {
    format!(
        "[Capability note: Talos's file tools read text files; they cannot extract the text of {} (PDF, Word, Excel and other binary document formats are not supported yet).]\nNo file was read in this turn, and Talos did not guess at the document's contents from other files. Export it to text (for example with pdftotext, or by saving it as .txt or .md), name that file, and Talos can work from it.",
        documents.join(", ")
    )
}

/// "Did you make the changes?", answered from the session's records, not by the model.
pub fn status_from_records(last: &PriorRecord) -> String {
    let mut out = format!(
        "From Talos's records of the previous turn (trace {}): {}.",
        last.trace_id,
        last.classification.as_str()
    );
    let listed = |changed: bool| -> Vec<String> {
        last.files
            .iter()
            .filter(|f| f.changed == changed)
            .map(|f| format!("- {}: {}", f.path, f.detail))
            .collect()
    };
    let (changed, unchanged) = (listed(true), listed(false));
    if changed.is_empty() {
        out.push_str("\nNo file was changed.");
    } else {
        out.push_str(&format!("\nChanged:\n{}", changed.join("\n")));
    }
    if !unchanged.is_empty() {
        out.push_str(&format!("\nNot changed:\n{}", unchanged.join("\n")));
    }
    out
}

/// The context a follow-up carries into the plan: which earlier contract it continues, and
/// what the last verification found.
pub fn active_task_context(resolved: &TaskContract, findings: &[String]) -> Option<String> {
    if !resolved.is_inherited() {
        return None;
    }
    let context = format!(
        "continues the previous turn's contract ({})",
        resolved.classification_reason()
    );
    if findings.is_empty() {
        Some(context)
    } else {
        Some(format!(
            "{context}; the last verification found: {}",
            findings.join("; ")
        ))
    }
}

/// A status question is answered from the records; it does not become the turn a later
/// "try again" continues.
pub fn remembered(resolved: &TaskContract) -> bool {
    resolved.reason != Reason::PriorChangeStatusQuestion
}

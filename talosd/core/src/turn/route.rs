//! Which way a turn goes before any model call: the deterministic viewer (`auto` mode's `ls`,
//! `show FILE`), a status question answered from the session's records, a fixed runtime
//! answer (no command profile named, a checkpoint restore asked in words, who Talos is and what
//! it can do), a capability note
//! for documents the text tools cannot read, or the model. Also the context a follow-up
//! carries and whether the turn becomes the one a later "try again" continues.

mod records;

pub use records::changes_from_records;

use crate::planning::modes::{SessionMode, Structural, structural_command};
use crate::planning::plan::TurnPlan;
use crate::request::contract::{CommandAsk, Reason, TaskContract, TaskType, asks_about_talos};
use crate::request::history::{ChangeScope, changes_scope};
use crate::request::outcome::Fine;
use crate::request::targets::is_unreadable_document;

use super::record::FileResult;

/// The fixed answer to a checkpoint restore asked in words.
pub const RESTORE_ANSWER: &str = "I did not restore or change any file from this natural-language turn: a restore is always your explicit command, with its own approval.\nTo undo the last turn that changed files: `talos undo` (or `/undo` in an interactive session).\nTo see every checkpoint: `talos checkpoints`, then `talos checkpoint show ID` and `talos restore ID`.";

/// The fixed answer to "change it back" when the session's records hold no change to undo.
pub const NOTHING_TO_REVERT_ANSWER: &str = "I changed nothing: Talos's records of this session show no change to undo, and I will not guess which file or value you mean.\nTo change a value, name it and its file (for example: In settings.py, change TIMEOUT from 60 to 30).\nTo undo a change made in an earlier session: `talos checkpoints`, then `talos restore ID`.";

/// The fixed answer to a command check that names no profile.
pub const UNSUPPORTED_COMMAND_ANSWER: &str = "I can't run that command check because no approved command profile was specified. Talos runs commands only through bounded, approved command profiles: the built-in cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check and gradle_* profiles, and workspace profiles you pinned with talos profiles trust. Name one (for example: run the cargo_test command profile).";

/// The fixed answer to "Who are you?" and "What can you do?": what Talos is, from the runtime,
/// never from the model (which would name itself).
pub const ABOUT_TALOS_ANSWER: &str = "I'm Talos, a coding assistant that runs locally on this machine. A local model (served by llama.cpp) proposes each step; the Talos runtime decides what a turn may do, asks you before changes and commands where your session's mode requires it, and keeps a trace of every turn.\n\nIn this workspace I can:\n- list, read and search files, and explain or diagnose code from what I read;\n- create and edit files, showing you a preview first and taking a checkpoint before every change;\n- run approved command profiles (cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check, the gradle_* tasks, and workspace profiles you trusted with talos profiles trust), each only after you approve it;\n- check static web pages (HTML, CSS, JavaScript) after a change to them.\n\nI cannot:\n- run arbitrary shell commands, or touch files outside this workspace;\n- browse the internet;\n- read PDF, Word, Excel or other binary documents (export them to text first);\n- claim a change or a check that my records do not show.";

/// How the turn is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `auto` mode's deterministic viewer.
    Viewer(Structural),
    /// "Did you make the changes?": from the previous turn's records.
    StatusFromRecords,
    /// "What did you change in the last two turns / so far?": from the records of the turns
    /// named.
    ChangesFromRecords(ChangeScope),
    /// A runtime answer with no model call.
    Fixed(String),
    /// Named documents the text tools cannot read: a capability note, no reads.
    UnreadableDocuments(Vec<String>),
    /// The request could mean a change or only a question and the person did not choose
    /// (`contract::readings`): both readings named, no model call, never a guess.
    Ambiguous(String),
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
    if let Some(readings) = crate::request::contract::readings(contract) {
        return Route::Ambiguous(readings.ambiguous);
    }
    match contract.reason {
        Reason::PriorChangeStatusQuestion => match changes_scope(request) {
            ChangeScope::LastTurns(1) if has_prior => return Route::StatusFromRecords,
            // With no outcome on record the model answers, under the guards, as before.
            ChangeScope::LastTurns(1) => {}
            scope => return Route::ChangesFromRecords(scope),
        },
        Reason::NothingToRevert => return Route::Fixed(NOTHING_TO_REVERT_ANSWER.into()),
        Reason::UnsupportedCommand => {
            return Route::Fixed(unsupported_command_answer(&contract.command));
        }
        _ => {}
    }
    if let Some(documents) = unreadable_documents(contract) {
        return Route::UnreadableDocuments(documents);
    }
    if contract.task_type == TaskType::CheckpointRestore {
        return Route::Fixed(RESTORE_ANSWER.into());
    }
    if contract.task_type == TaskType::SmallTalk && asks_about_talos(&contract.original_request) {
        return Route::Fixed(ABOUT_TALOS_ANSWER.into());
    }
    Route::Model
}

/// The fixed answer to a command no profile covers, with the profiles this workspace has when
/// the daemon told the contract (`contract::with_workspace`).
pub fn unsupported_command_answer(command: &CommandAsk) -> String {
    match command {
        CommandAsk::Unavailable(profiles) if profiles.is_empty() => format!(
            "{UNSUPPORTED_COMMAND_ANSWER}\nNo profile applies to this workspace: it has no Cargo.toml or gradlew at its root and no trusted workspace profile."
        ),
        CommandAsk::Unavailable(profiles) => format!(
            "{UNSUPPORTED_COMMAND_ANSWER}\nProfiles available in this workspace: {}.",
            profiles.join(", ")
        ),
        CommandAsk::None | CommandAsk::Run(_) | CommandAsk::AfterChange(_) => {
            UNSUPPORTED_COMMAND_ANSWER.to_string()
        }
    }
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
        // pdf, docx, xlsx, ods, odt and pptx are extracted (issue 16): the model reads them.
        let extracted = crate::planning::retrieval::DocumentKind::of(target).is_some();
        if is_unreadable_document(target) && !extracted && !documents.contains(target) {
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
    // What is left, from the same records (issue 27): the files that did not end changed, on a
    // turn that did not finish.
    let finished = matches!(
        last.classification,
        Fine::CompletedVerified | Fine::CompletedUnverified | Fine::ReadOnlyAnswered
    );
    let left: Vec<&str> = last
        .files
        .iter()
        .filter(|f| !f.changed)
        .map(|f| f.path.as_str())
        .collect();
    if !finished && !left.is_empty() {
        out.push_str(&format!(
            "\nLeft to do: {}. Say \"do it\" to try the change again.",
            left.join(", ")
        ));
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

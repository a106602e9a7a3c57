//! The contract against the workspace's files, which the daemon looks up for the names the
//! request uses ([`names_to_find`]):
//!
//! - a file named only by its basename ("config.py" where the workspace has only
//!   `src/config.py`) is that file, when exactly one file has the name;
//! - a request that holds a change verb, names a file that exists, and that the resolver read
//!   as a plain question by default (no question shape decided it, and it does not open as a
//!   question for information) is not downgraded in silence: its reading is uncertain, and the
//!   person is asked ([`Reading`], [`choose`]).

use super::{Reason, TaskContract, TaskType};
use crate::request::intent::{TargetRef, TargetRole, TargetSource};
use crate::text::lexical::{self, Lex};

/// How sure the resolver is of a contract's kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Reading {
    /// The words decide it.
    #[default]
    Settled,
    /// The words hold a change verb and name existing files, yet read as a question: a
    /// change of `targets`, or only an answer. The person chooses before the model is called.
    Uncertain { targets: Vec<String> },
}

/// The person's choice between the two readings of an uncertain request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Change,
    Question,
}

/// The names the daemon should look up in the workspace: every target the contract names, as
/// written.
pub fn names_to_find(contract: &TaskContract) -> Vec<String> {
    contract
        .roleful_targets
        .iter()
        .map(|t| t.path.clone())
        .collect()
}

/// The contract with its targets resolved against `files` (the workspace paths the daemon
/// found for [`names_to_find`]: each name that exists as written, and each file whose
/// basename is a name written without a folder) and its reading decided.
pub fn with_files(contract: TaskContract, files: &[String]) -> TaskContract {
    let mut moved = false;
    let roleful: Vec<TargetRef> = contract
        .roleful_targets
        .iter()
        .map(
            |t| match unique_basename(&t.path, files).filter(|_| !creates(&contract, t)) {
                Some(path) => {
                    moved = true;
                    TargetRef {
                        path,
                        role: t.role,
                        source: TargetSource::WorkspaceEvidence,
                        reason: "the only workspace file with the name the request used",
                    }
                }
                None => t.clone(),
            },
        )
        .collect();
    let mut out = if moved {
        recompiled(
            &contract,
            contract.task_type,
            contract.mutation_requested,
            roleful,
        )
    } else {
        contract
    };
    if let Some(targets) = uncertain(&out, files) {
        out.reading = Reading::Uncertain { targets };
    }
    out
}

/// The contract as the person chose to read it.
pub fn choose(contract: TaskContract, choice: Choice) -> TaskContract {
    let Reading::Uncertain { targets } = contract.reading.clone() else {
        return contract;
    };
    match choice {
        Choice::Question => TaskContract {
            reading: Reading::Settled,
            ..contract
        },
        Choice::Change => {
            let roleful = contract
                .roleful_targets
                .iter()
                .map(|t| {
                    if targets.contains(&t.path) && t.role != TargetRole::Forbidden {
                        TargetRef {
                            role: TargetRole::MustMutate,
                            reason: "the person chose to change it",
                            ..t.clone()
                        }
                    } else {
                        t.clone()
                    }
                })
                .collect();
            let mut out = recompiled(&contract, TaskType::FileEdit, true, roleful);
            out.reason = Reason::RequestPattern;
            out
        }
    }
}

fn recompiled(
    contract: &TaskContract,
    task_type: TaskType,
    requested: bool,
    roleful: Vec<TargetRef>,
) -> TaskContract {
    let mut out = TaskContract::compiled(
        task_type,
        requested,
        contract.original_request.clone(),
        contract.reason,
        contract.static_web.required_visible_facts.clone(),
        roleful,
    );
    out.command = contract.command.clone();
    out.read_only_posture = contract.read_only_posture;
    out
}

/// Whether `target` is a file the request creates: a new `notes.txt` is not the existing
/// `docs/notes.txt`.
fn creates(contract: &TaskContract, target: &TargetRef) -> bool {
    contract.task_type == TaskType::FileCreate && target.role == TargetRole::MustMutate
}

/// The one file of `files` whose basename is `name`, when `name` has no folder, does not
/// exist as written, and exactly one file has it.
fn unique_basename(name: &str, files: &[String]) -> Option<String> {
    if name.contains('/') || files.iter().any(|f| f == name) {
        return None;
    }
    let mut found = files.iter().filter(|f| f.rsplit('/').next() == Some(name));
    let first = found.next()?;
    found.next().is_none().then(|| first.clone())
}

/// The existing targets a change reading would change, when the request holds a change verb
/// and was read as a question only by default.
fn uncertain(contract: &TaskContract, files: &[String]) -> Option<Vec<String>> {
    let by_default = !contract.mutation_requested
        && contract.reason == Reason::NonMutating
        && matches!(
            contract.task_type,
            TaskType::ReadOnlyQa | TaskType::SmallTalk | TaskType::DiagnoseOnly
        );
    if !by_default || contract.read_only_posture {
        return None;
    }
    let existing: Vec<String> = contract
        .roleful_targets
        .iter()
        .filter(|t| t.role != TargetRole::Forbidden && files.contains(&t.path))
        .map(|t| t.path.clone())
        .collect();
    let text = lexical::normalise(&contract.original_request);
    let lower = lexical::blank_quotes(&text.to_ascii_lowercase());
    let lex = Lex::new(&text, &lower);
    let uncertain = !existing.is_empty()
        && super::mutation::has_change_verb(&lex)
        && !asks_for_information(&lex);
    uncertain.then_some(existing)
}

/// Whether the request opens as a question for information ("What does settings.py set?",
/// "Why change DEBUG?", "Does config.py enable DEBUG?"): its change verb is what it asks about,
/// not what it asks for. "Could you", "can you" and "would you" are requests, and stay out.
fn asks_for_information(lex: &Lex<'_>) -> bool {
    const OPENERS: &[&str] = &[
        "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "does", "do",
        "did", "is", "are", "was", "were", "has", "have", "had",
    ];
    OPENERS.contains(&lex.word(0))
}

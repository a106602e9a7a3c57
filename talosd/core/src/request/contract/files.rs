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
    // Adding to a file that exists ("add a footer to index.html") edits it.
    let exists = |t: &String| files.contains(t);
    let edits_existing = contract.task_type == TaskType::FileCreate
        && contract.mutation_allowed
        && roleful.iter().any(|t| t.role == TargetRole::MustMutate)
        && roleful
            .iter()
            .filter(|t| t.role == TargetRole::MustMutate)
            .all(|t| exists(&t.path));
    let task_type = if edits_existing {
        TaskType::FileEdit
    } else {
        contract.task_type
    };
    let mut out = if moved || edits_existing {
        recompiled(&contract, task_type, contract.mutation_requested, roleful)
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
    contract.task_type == TaskType::FileCreate
        && target.role == TargetRole::MustMutate
        && target.path.contains('.')
}

/// The one file of `files` that `name` names, when `name` has no folder and does not exist as
/// written: the only file with that basename; else the only one with it in another case
/// ("makefile"); else the only one whose stem it is ("readme" for `README.md`, "gitignore"
/// for `.gitignore`).
fn unique_basename(name: &str, files: &[String]) -> Option<String> {
    if name.contains('/') || files.iter().any(|f| f == name) {
        return None;
    }
    let basename = |f: &String| f.rsplit('/').next().unwrap_or(f).to_string();
    let stem = |f: &String| {
        let base = basename(f);
        let base = base.strip_prefix('.').unwrap_or(&base).to_string();
        match base.rsplit_once('.') {
            Some((stem, _)) if !stem.is_empty() => stem.to_string(),
            _ => base,
        }
    };
    let rules: [&dyn Fn(&String) -> bool; 3] = [
        &|f| basename(f) == name,
        &|f| basename(f).eq_ignore_ascii_case(name),
        &|f| stem(f).eq_ignore_ascii_case(name),
    ];
    let mut found = rules.iter().map(|rule| {
        files
            .iter()
            .filter(|f| rule(f))
            .cloned()
            .collect::<Vec<_>>()
    });
    // The strictest rule that matches decides: two files of that name are no choice to guess.
    let mut found = found.find(|found| !found.is_empty())?;
    (found.len() == 1).then(|| found.remove(0))
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
    let uncertain =
        !existing.is_empty() && super::mutation::has_change_verb(&lex) && !question_shape(&lex);
    uncertain.then_some(existing)
}

/// Words that open a question, or a request to read and tell: a clause opened by one of them
/// decides the reading ("What does the update function do?", "Read config.py and tell me …").
#[rustfmt::skip]
const QUESTION_OPENERS: &[&str] = &[
    "what", "what's", "whats", "which", "where", "where's", "when", "why", "how", "how's", "who",
    "whose", "is", "are", "am", "was", "were", "do", "does", "did", "can", "could", "should",
    "would", "will", "has", "have", "tell", "explain", "show", "describe", "summarize",
    "summarise", "list", "read", "compare", "check", "find", "look",
];

/// A question decides the reading: it ends with a question mark, or one of its clauses opens
/// with a question word or a verb that asks to be told.
fn question_shape(lex: &Lex<'_>) -> bool {
    lex.lower.trim_end().ends_with('?')
        || lex.clause_starts().into_iter().any(|s| {
            let j = super::words::after_prefix(lex, s);
            QUESTION_OPENERS.contains(&lex.word(j))
        })
}

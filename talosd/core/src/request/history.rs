//! Multi-turn context: follow-ups that inherit the previous turn's contract.
//! A status question stays what it is. "yes", "go ahead", "do it" after an unfinished or
//! read-only mutation turn confirm that turn's contract; "nothing changed, try again", "fix
//! it", "still broken" after an unfinished or unverified one repair it; "but there is no css"
//! corrects it; "this folder" after a workspace question points at it again. Inherited targets
//! keep their roles and come from MESSAGE_HISTORY; what the new request forbids still wins.
//! "Change it back" and "undo that" are resolved from the records of the turns before
//! (`history/revert.rs`); "what did you change in the last two turns" names the turns it asks
//! about (`history/scope.rs`).

mod repair;
mod revert;
mod scope;

pub use repair::narrow_repair;

use crate::request::contract::{
    Reason, TaskContract, TaskType, exact_literal, replacement, resolve,
};
use crate::request::intent::{TargetRef, TargetRole, TargetSource, merge};
pub use scope::{ChangeScope, changes_scope};

/// How a prior turn ended, as the daemon recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorOutcome {
    /// Changes applied and verified.
    Verified,
    /// Changes applied, verification missing or failed.
    Unverified,
    /// Some expected targets were not changed.
    Incomplete,
    /// The person denied the approval.
    Denied,
    /// Policy blocked the change before approval.
    Blocked,
    /// The turn failed (model or tool failure).
    Failed,
    /// The turn ran under a read-only posture (or asked nothing to change).
    ReadOnly,
}

impl PriorOutcome {
    /// How a finished turn is remembered, from its classification.
    pub fn of(fine: crate::request::outcome::Fine) -> PriorOutcome {
        use crate::request::outcome::Fine;
        match fine {
            Fine::CompletedVerified => PriorOutcome::Verified,
            Fine::CompletedUnverified => PriorOutcome::Unverified,
            // Nothing was asked to change, and nothing changed.
            Fine::ReadOnlyAnswered | Fine::ContractAmbiguous => PriorOutcome::ReadOnly,
            Fine::Partial | Fine::AdvisoryOnly | Fine::Cancelled => PriorOutcome::Incomplete,
            Fine::BlockedByApproval => PriorOutcome::Denied,
            Fine::BlockedByPolicy => PriorOutcome::Blocked,
            Fine::Failed => PriorOutcome::Failed,
        }
    }

    /// Every outcome, for parsers and tables.
    pub const ALL: [PriorOutcome; 7] = [
        PriorOutcome::Verified,
        PriorOutcome::Unverified,
        PriorOutcome::Incomplete,
        PriorOutcome::Denied,
        PriorOutcome::Blocked,
        PriorOutcome::Failed,
        PriorOutcome::ReadOnly,
    ];

    /// The outcome [`PriorOutcome::as_str`] wrote, or `None` for any other text.
    pub fn parse(text: &str) -> Option<PriorOutcome> {
        PriorOutcome::ALL.into_iter().find(|o| o.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PriorOutcome::Verified => "VERIFIED",
            PriorOutcome::Unverified => "UNVERIFIED",
            PriorOutcome::Incomplete => "INCOMPLETE",
            PriorOutcome::Denied => "DENIED",
            PriorOutcome::Blocked => "BLOCKED",
            PriorOutcome::Failed => "FAILED",
            PriorOutcome::ReadOnly => "READ_ONLY",
        }
    }

    /// A confirmation can take up this turn's change: it did not happen yet.
    fn awaits_confirmation(self) -> bool {
        match self {
            PriorOutcome::Incomplete
            | PriorOutcome::Denied
            | PriorOutcome::Blocked
            | PriorOutcome::Failed
            | PriorOutcome::ReadOnly => true,
            PriorOutcome::Verified | PriorOutcome::Unverified => false,
        }
    }

    /// A repair can take up this turn's change: it did not finish, or was not verified.
    fn awaits_repair(self) -> bool {
        match self {
            PriorOutcome::Incomplete
            | PriorOutcome::Denied
            | PriorOutcome::Blocked
            | PriorOutcome::Failed
            | PriorOutcome::Unverified => true,
            PriorOutcome::Verified | PriorOutcome::ReadOnly => false,
        }
    }
}

/// A prior turn of the session: its contract, how it ended, and the files it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorTurn {
    pub contract: TaskContract,
    pub outcome: PriorOutcome,
    /// The files the turn changed, as its records say.
    pub changed: Vec<String>,
}

/// A remembered turn as the session keeps it: the request as typed, how the turn ended, and
/// the files it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    pub request: String,
    pub outcome: PriorOutcome,
    pub changed: Vec<String>,
}

/// A replacement a turn's records show it made: on `target`, `from` became `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedChange {
    pub target: String,
    pub from: String,
    pub to: String,
}

/// Rebuilds a session's history from its remembered requests, oldest first, with how each
/// turn ended and what it changed: each request is resolved in the context of the ones before
/// it, as the live session resolved it, so a persisted session needs only these records. A
/// request resolved with a predecessor that is no longer in the list (the window is bounded) is
/// resolved without it.
pub fn replay(remembered: &[Remembered]) -> Vec<PriorTurn> {
    let mut history: Vec<PriorTurn> = Vec::with_capacity(remembered.len());
    for turn in remembered {
        let contract = resolve_in_context(&history, &turn.request);
        history.push(PriorTurn {
            contract,
            outcome: turn.outcome,
            changed: turn.changed.clone(),
        });
    }
    history
}

/// The replacement a turn made, where its records hold it: its contract asked one file for
/// "from A to B" (the plan's pin, no exact literal), the file is among those it changed, and
/// the turn ended verified, so the verifier saw A replaced by B.
pub fn replacement_made(turn: &PriorTurn) -> Option<RecordedChange> {
    let contract = &turn.contract;
    if turn.outcome != PriorOutcome::Verified || !contract.mutation_allowed {
        return None;
    }
    let [target] = contract.expected_targets.as_slice() else {
        return None;
    };
    if !turn.changed.contains(target) || exact_literal(&contract.original_request).is_some() {
        return None;
    }
    let (from, to) = replacement(&contract.original_request)?;
    Some(RecordedChange {
        target: target.clone(),
        from,
        to,
    })
}

const CONFIRMATIONS: &[&str] = &[
    "yes",
    "yes proceed",
    "yes proceed please",
    "yes please",
    "yes go ahead",
    "yes do it",
    "proceed",
    "proceed please",
    "please proceed",
    "go ahead",
    "go ahead please",
    "please go ahead",
    "do it",
    "do it please",
    "please do it",
    "continue",
    "continue please",
    "please continue",
    "go for it",
];

const REPAIRS: &[&str] = &[
    "nothing changed",
    "nothing happened",
    "no changes happened",
    "try again",
    "try one more time",
    "try once more",
    "fix the remaining",
    "fix any obvious issue",
    "remaining static verification problems",
    "static verification problems",
    "complete it",
    "finish it",
    "make it work",
    "fix it",
    "fix this",
    "repair it",
    "repair this",
    "final pass",
    "inspect and repair",
    "repair anything remaining",
    "fix what remains",
    "best verified state",
    "still does not work",
    "still doesn't work",
    "it does not work",
    "it doesn't work",
    "not working",
    "didn't work",
    "did not work",
    "still broken",
    "still wrong",
    "incomplete",
];

const DEICTIC: &[&str] = &[
    "this here",
    "this folder",
    "this directory",
    "this one",
    "yes this",
    "yes check it",
    "here",
    "this",
];

/// Resolves the latest request in the light of the session's prior turns (oldest first).
pub fn resolve_in_context(history: &[PriorTurn], request: &str) -> TaskContract {
    let current = resolve(request);
    let status = current.reason == Reason::PriorChangeStatusQuestion;
    if current.task_type == TaskType::VerifyOnly || status {
        return current;
    }
    if let Some(revert) = revert::resolve(history, request, &current) {
        return revert;
    }
    let Some(prior) = history.last() else {
        return current;
    };
    let said = normalised(request);
    let prior_change = prior.contract.mutation_requested && prior.contract.task_type.mutates();
    if prior_change
        && !current.mutation_requested
        && prior.outcome.awaits_confirmation()
        && CONFIRMATIONS.contains(&said.as_str())
    {
        return inherit(
            prior,
            &current,
            Reason::ConfirmationInherited,
            "Confirmation",
        );
    }
    if prior_change && prior.outcome.awaits_repair() && REPAIRS.iter().any(|r| said.contains(r)) {
        if current.mutation_requested && !current.expected_targets.is_empty() {
            return current;
        }
        return inherit(prior, &current, Reason::RepairInherited, "Repair");
    }
    if prior_change && !current.mutation_requested && is_correction(&said) {
        return inherit(prior, &current, Reason::CorrectionInherited, "Correction");
    }
    let prior_inspection = matches!(
        prior.contract.task_type,
        TaskType::WorkspaceExplain | TaskType::DiagnoseOnly | TaskType::VerifyOnly
    ) && !prior.contract.mutation_requested;
    if prior_inspection && !current.mutation_requested && DEICTIC.contains(&said.as_str()) {
        return TaskContract::compiled(
            prior.contract.task_type,
            false,
            current.original_request.clone(),
            Reason::DeicticInherited,
            Vec::new(),
            Vec::new(),
        );
    }
    current
}

/// Lowercase, commas dropped, whitespace collapsed, trailing `.!?` dropped.
fn normalised(request: &str) -> String {
    let collapsed = request
        .replace(',', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .replace('\u{2019}', "'");
    collapsed
        .trim_end_matches(['.', '!', '?'])
        .trim()
        .to_string()
}

/// "But there is no css", "no, you just changed the index", "missing styling".
fn is_correction(said: &str) -> bool {
    let correction = said.starts_with("but ")
        || said.starts_with("no,")
        || said.starts_with("no ")
        || [
            "you just ",
            "you only ",
            "you never ",
            "it still ",
            "there is no ",
            "there isn't ",
            "missing ",
        ]
        .iter()
        .any(|m| said.contains(m));
    correction
        && [
            "no styling",
            "no style",
            "no css",
            "without styling",
            "without style",
            "without css",
            "missing styling",
            "missing style",
            "missing css",
            "never put any style",
            "never added style",
            "never added css",
            "reduced it",
            "changed the index",
        ]
        .iter()
        .any(|m| said.contains(m))
}

/// The prior mutation contract under the new request: its type and targets (from
/// MESSAGE_HISTORY), plus what the new request forbids.
/// The original request reads "<prior request>\n\n<kind> follow-up: <new request>", so the
/// plan still finds the prior request's expectations ("change X from A to B").
fn inherit(prior: &PriorTurn, current: &TaskContract, reason: Reason, kind: &str) -> TaskContract {
    let inherited = prior.contract.roleful_targets.iter().map(|t| TargetRef {
        path: t.path.clone(),
        role: t.role,
        source: TargetSource::MessageHistory,
        reason: "active-contract-projection",
    });
    let forbidden_now = current
        .roleful_targets
        .iter()
        .filter(|t| t.role == TargetRole::Forbidden)
        .cloned();
    let targets = merge(inherited.chain(forbidden_now));
    let mut facts = prior.contract.static_web.required_visible_facts.clone();
    for fact in &current.static_web.required_visible_facts {
        if !facts.contains(fact) {
            facts.push(fact.clone());
        }
    }
    let original = format!(
        "{}\n\n{kind} follow-up: {}",
        prior.contract.original_request.trim(),
        current.original_request.trim()
    );
    TaskContract::compiled(
        prior.contract.task_type,
        true,
        original,
        reason,
        facts,
        targets,
    )
}

//! The contract against the workspace, and the person's choice of reading (issue 34, items 2
//! and 6): the names the contract uses are looked up in the session's workspace, through the
//! `Workspace` handle only, for `talos_core::contract::with_files`; when the core finds the
//! reading uncertain, the connection that started the turn is asked which reading the person
//! means (`contract/choose`) before the model is called, and the core plans the chosen one.
//! Nothing is decided here: the core resolves the names, finds the reading uncertain, words
//! both readings and ends a turn nobody chose for; this module looks up and asks.

use std::cell::Cell;
use std::time::Duration;

use talos_core::contract::{self, Choice, TaskContract};
use talos_core::posture::{self, EffectiveTurn, Posture};
use talos_protocol as proto;
use talos_protocol::trace::TraceReading;
use talos_protocol::{ChoiceSource, ReadingChoice};
use tokio_util::sync::CancellationToken;

use crate::connection::Peer;
use crate::workspace::{EntryKind, Workspace};

/// The most entries the basename walk looks at. The walk runs only when a name written
/// without a folder is not a file as written, and a turn must not wait on a huge tree: past
/// this many entries the files found so far are all there is, so a basename is looked for
/// among the first 20,000 entries only (and a second file with the name beyond them is not
/// seen; the person is shown the file in the approval before anything is written).
pub const MAX_WALK_ENTRIES: usize = 20_000;

/// How the question ended: the reading chosen, or none and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    pub choice: Option<ReadingChoice>,
    pub source: ChoiceSource,
}

/// Who the question goes to, and how long it may wait.
pub struct Asking<'a> {
    pub peer: &'a Peer,
    pub cancel: &'a CancellationToken,
    pub timeout: Duration,
    pub session_id: &'a str,
    pub turn_id: &'a str,
}

/// What the person was asked about an uncertain reading, and how it ended.
#[derive(Debug, Clone)]
pub struct Settled {
    pub source: ChoiceSource,
    /// What the trace keeps (`taskContract.reading`).
    pub trace: Option<TraceReading>,
}

/// The contract under the mode's posture. When the reading is still uncertain there, the
/// person is asked first, and the chosen reading is put under the posture instead; with no
/// choice it stays uncertain, for the core to end the turn before the model.
pub async fn settle(
    to: &Asking<'_>,
    posture: Posture,
    contract: TaskContract,
) -> (EffectiveTurn, Option<Settled>) {
    let effective = posture::apply(posture, contract.clone());
    if contract::readings(&effective.contract).is_none() {
        return (effective, None);
    }
    let answer = ask(to, &effective.contract).await;
    let settled = Settled {
        source: answer.source,
        trace: traced(&effective.contract, answer),
    };
    match answer.choice {
        Some(chosen) => (
            posture::apply(posture, contract::choose(contract, choice(chosen))),
            Some(settled),
        ),
        None => (effective, Some(settled)),
    }
}

/// The contract with the names it uses looked up in the workspace
/// ([`talos_core::contract::with_files`]).
pub fn with_workspace_files(workspace: &Workspace, contract: TaskContract) -> TaskContract {
    let names = contract::names_to_find(&contract);
    if names.is_empty() {
        return contract;
    }
    let files = files_for(workspace, &names);
    contract::with_files(contract, &files)
}

/// The workspace paths for `names`: each name that is a regular file as written (symlinks
/// inside the workspace followed), and, for a name without a folder that is not, every file
/// with that basename that the index's walk lists (its ignore rules, `SKIP_DIRS`, no hidden
/// files), within [`MAX_WALK_ENTRIES`].
pub fn files_for(workspace: &Workspace, names: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut unfound = Vec::new();
    for name in names {
        let location = workspace.resolve(name).location;
        let is_file =
            location.is_some_and(|l| matches!(workspace.kind(&l), Ok(Some(EntryKind::File))));
        if is_file {
            found.push(name.clone());
        } else if !name.contains('/') {
            unfound.push(name.as_str());
        }
    }
    if unfound.is_empty() {
        return found;
    }
    // The index's own walk, stopped once it has looked at the cap's worth of entries (its
    // `stop` is asked before each entry and each folder).
    let seen = Cell::new(0usize);
    let stop = || {
        seen.set(seen.get() + 1);
        seen.get() > MAX_WALK_ENTRIES
    };
    let listing = crate::index::list(workspace, &stop);
    for file in listing.files {
        let basename = file.path.rsplit('/').next().unwrap_or(&file.path);
        if unfound.contains(&basename) && !found.contains(&file.path) {
            found.push(file.path);
        }
    }
    found
}

/// Asks the turn's own connection which reading the person means. A client that declined the
/// request at `initialize`, an error or unreadable answer, a disconnect, a timeout and a
/// cancel are no choice.
pub async fn ask(to: &Asking<'_>, contract: &TaskContract) -> Asked {
    let none = |source| Asked {
        choice: None,
        source,
    };
    let Some(readings) = contract::readings(contract) else {
        return none(ChoiceSource::Declined);
    };
    if to.peer.declines(proto::CONTRACT_CHOOSE) {
        return none(ChoiceSource::Declined);
    }
    let params = proto::ContractChooseParams {
        turn_id: to.turn_id.to_string(),
        session_id: to.session_id.to_string(),
        request: contract.original_request.clone(),
        change: proto::ChangeReading {
            targets: readings.targets,
            description: readings.change,
        },
        question: proto::QuestionReading {
            description: readings.question,
        },
    };
    let Ok(value) = serde_json::to_value(&params) else {
        return none(ChoiceSource::Declined);
    };
    let request = to.peer.request(proto::CONTRACT_CHOOSE, value, None);
    tokio::select! {
        answer = tokio::time::timeout(to.timeout, request) => match answer {
            // An answer that comes once the turn is cancelled is the cancel's.
            Ok(_) if to.cancel.is_cancelled() => none(ChoiceSource::Cancelled),
            Ok(Ok(message)) => match message
                .result
                .and_then(|r| serde_json::from_value::<proto::ContractChooseResult>(r).ok())
            {
                Some(result) => Asked {
                    choice: Some(result.choice),
                    source: ChoiceSource::Client,
                },
                None => none(ChoiceSource::Declined),
            },
            Ok(Err(_closed)) => none(ChoiceSource::Disconnect),
            Err(_elapsed) => none(ChoiceSource::Timeout),
        },
        () = to.cancel.cancelled() => none(ChoiceSource::Cancelled),
    }
}

/// The core's choice for the wire's.
fn choice(chosen: ReadingChoice) -> Choice {
    match chosen {
        ReadingChoice::Change => Choice::Change,
        ReadingChoice::Question => Choice::Question,
    }
}

/// What the trace keeps of the question.
fn traced(contract: &TaskContract, asked: Asked) -> Option<TraceReading> {
    contract::readings(contract).map(|readings| TraceReading {
        targets: readings.targets,
        choice: asked.choice,
        source: asked.source,
    })
}

//! Sessions: one workspace, one mode, a turn counter and what the session remembers.
//!
//! What a session's turns read and write (the turn counter, the earlier turns, the last outcome
//! and the verifier's last findings) sits behind one lock, and a turn holds that lock from its
//! start to its end: [`Session::claim`] is a try-lock, so "busy" is not a flag kept beside the
//! state but the fact that someone holds it. A second `turn/start` while one runs is refused.
//! The remembered approvals have a lock of their own, because `grants/revoke` from another
//! connection must take effect in the middle of a running turn (decision 0003).

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use talos_core::history::PriorTurn;
use talos_core::ladder::Grants;
use talos_protocol::{Mode, SessionInfo, TurnOutcome};
use tokio::sync::OwnedMutexGuard;

/// How many earlier turns a session remembers for follow-ups.
pub const HISTORY_TURNS: usize = 16;

use crate::ids::SessionId;
use crate::workspace::Workspace;

#[derive(Debug)]
pub struct Session {
    pub id: SessionId,
    /// Canonical (symlinks resolved) workspace root.
    pub workspace: PathBuf,
    /// The capability every access to the workspace's files goes through, opened once when
    /// the session starts.
    pub files: Arc<Workspace>,
    pub mode: Mode,
    /// The llama.cpp slot this session's requests use, so its prompt cache is reused.
    pub slot: u32,
    /// Everything the session's turns read and write; held by the running turn for the whole
    /// turn, so its try-lock is the busy flag.
    state: Arc<tokio::sync::Mutex<SessionState>>,
    /// Remembered approvals: readable and revocable while a turn runs.
    grants: Mutex<Grants>,
    /// The number of turns started, published for `session/list` (which answers while a turn
    /// holds the state); written only by the holder of the state, in [`SessionTurn::next_turn`].
    turns_started: AtomicU64,
}

/// What a session remembers between its turns.
#[derive(Debug, Default)]
struct SessionState {
    turns: u64,
    /// The contracts and outcomes of earlier turns, oldest first (at most [`HISTORY_TURNS`]).
    history: Vec<PriorTurn>,
    /// The outcome of the last turn that was not a status question: what "did you make the
    /// changes?" is answered from.
    last_outcome: Option<TurnOutcome>,
    /// What the task verifier found after the last turn: a "fix the remaining problems"
    /// follow-up is planned from these.
    last_findings: Vec<String>,
}

/// A session claimed for one turn: holding it is being busy, and it is the only way to the
/// session's state. Dropping it, however the turn ends, frees the session.
#[derive(Debug)]
pub struct SessionTurn {
    session: Arc<Session>,
    state: OwnedMutexGuard<SessionState>,
}

impl Session {
    pub fn new(id: SessionId, workspace: Workspace, mode: Mode, slot: u32) -> Session {
        Session {
            id,
            workspace: workspace.root().to_path_buf(),
            files: Arc::new(workspace),
            mode,
            slot,
            state: Arc::new(tokio::sync::Mutex::new(SessionState::default())),
            grants: Mutex::new(Grants::default()),
            turns_started: AtomicU64::new(0),
        }
    }

    /// Claims the session for one turn, or `None` when a turn already runs.
    pub fn claim(self: &Arc<Self>) -> Option<SessionTurn> {
        let state = self.state.clone().try_lock_owned().ok()?;
        Some(SessionTurn {
            session: self.clone(),
            state,
        })
    }

    /// Whether a turn holds the session.
    pub fn busy(&self) -> bool {
        self.state.try_lock().is_err()
    }

    pub fn grants(&self) -> Grants {
        self.grants.lock().map(|g| *g).unwrap_or_default()
    }

    /// Remembers in-workspace file writes for the rest of the session.
    pub fn remember_writes(&self) {
        if let Ok(mut g) = self.grants.lock() {
            g.remember_writes = true;
        }
    }

    /// Forgets every remembered approval; returns how many there were.
    pub fn revoke_grants(&self) -> usize {
        match self.grants.lock() {
            Ok(mut g) => {
                let had = usize::from(g.remember_writes);
                *g = Grants::default();
                had
            }
            Err(_) => 0,
        }
    }

    pub fn info(&self) -> SessionInfo {
        SessionInfo {
            session_id: self.id.to_string(),
            workspace: self.workspace.display().to_string(),
            mode: self.mode,
            turns: self.turns_started.load(Ordering::Acquire),
            busy: self.busy(),
        }
    }
}

impl SessionTurn {
    /// The session itself, for code that outlives a borrow of the claim.
    pub fn session(&self) -> Arc<Session> {
        self.session.clone()
    }

    /// Counts a new turn and returns its 1-based number.
    pub fn next_turn(&mut self) -> u64 {
        self.state.turns += 1;
        self.session
            .turns_started
            .store(self.state.turns, Ordering::Release);
        self.state.turns
    }

    pub fn history(&self) -> Vec<PriorTurn> {
        self.state.history.clone()
    }

    pub fn last_outcome(&self) -> Option<TurnOutcome> {
        self.state.last_outcome.clone()
    }

    pub fn last_findings(&self) -> Vec<String> {
        self.state.last_findings.clone()
    }

    pub fn remember_findings(&mut self, findings: Vec<String>) {
        self.state.last_findings = findings;
    }

    pub fn remember_outcome(&mut self, outcome: &TurnOutcome) {
        self.state.last_outcome = Some(outcome.clone());
    }

    pub fn remember_turn(&mut self, turn: PriorTurn) {
        let history = &mut self.state.history;
        history.push(turn);
        let excess = history.len().saturating_sub(HISTORY_TURNS);
        history.drain(..excess);
    }
}

impl Deref for SessionTurn {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per claim sequence: whether each claim succeeds while the earlier ones are held.
    fn check(held_claims: usize, expected: &[bool]) {
        let root = std::env::temp_dir();
        let workspace = Workspace::open(&root).expect("the temp dir opens as a workspace");
        let session = Arc::new(Session::new(
            SessionId::new().expect("random ids"),
            workspace,
            Mode::Agent,
            0,
        ));
        let mut held = Vec::new();
        let mut got = Vec::new();
        for _ in 0..held_claims {
            let claim = session.claim();
            got.push(claim.is_some());
            held.push(claim);
            assert_eq!(session.info().busy, got.iter().any(|g| *g));
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn a_claimed_session_is_busy_until_the_claim_is_dropped() {
        check(1, &[true]);
        check(2, &[true, false]);
        check(3, &[true, false, false]);
    }

    #[test]
    fn the_state_outlives_each_claim_and_the_count_is_published() {
        let root = std::env::temp_dir();
        let workspace = Workspace::open(&root).expect("the temp dir opens as a workspace");
        let session = Arc::new(Session::new(
            SessionId::new().expect("random ids"),
            workspace,
            Mode::Agent,
            0,
        ));
        for expected in 1..=3 {
            let Some(mut turn) = session.claim() else {
                panic!("the session should be free");
            };
            assert_eq!(turn.next_turn(), expected);
            turn.remember_findings(vec![format!("finding {expected}")]);
            assert!(session.info().busy);
            assert_eq!(session.info().turns, expected);
        }
        assert!(!session.info().busy);
        let Some(turn) = session.claim() else {
            panic!("the session should be free");
        };
        assert_eq!(turn.last_findings(), vec!["finding 3".to_string()]);
    }
}

//! Sessions: one workspace, one mode, a turn counter and what the session remembers.
//! A session runs one turn at a time; a second `turn/start` while one runs is refused.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use talos_core::history::PriorTurn;
use talos_core::ladder::Grants;
use talos_protocol::{Mode, SessionInfo};

use crate::workspace::Workspace;

#[derive(Debug)]
pub struct Session {
    pub id: String,
    /// Canonical (symlinks resolved) workspace root.
    pub workspace: PathBuf,
    /// The capability every access to the workspace's files goes through, opened once when
    /// the session starts.
    pub files: Arc<Workspace>,
    pub mode: Mode,
    /// The llama.cpp slot this session's requests use, so its prompt cache is reused.
    pub slot: u32,
    turns: AtomicU64,
    grants: Mutex<Grants>,
    /// The contracts and outcomes of earlier turns, oldest first (at most [`HISTORY_TURNS`]).
    history: Mutex<Vec<PriorTurn>>,
    /// The outcome of the last turn that was not a status question: what "did you make the
    /// changes?" is answered from.
    last_outcome: Mutex<Option<talos_protocol::TurnOutcome>>,
    /// What the task verifier found after the last turn: a "fix the remaining problems"
    /// follow-up is planned from these.
    last_findings: Mutex<Vec<String>>,
    busy: AtomicBool,
}

/// How many earlier turns a session remembers for follow-ups.
pub const HISTORY_TURNS: usize = 16;

/// Marks the session busy for as long as it lives.
#[derive(Debug)]
pub struct BusyGuard<'a>(&'a Session);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
    }
}

impl Session {
    pub fn new(id: String, workspace: Workspace, mode: Mode, slot: u32) -> Session {
        Session {
            id,
            workspace: workspace.root().to_path_buf(),
            files: Arc::new(workspace),
            mode,
            slot,
            turns: AtomicU64::new(0),
            grants: Mutex::new(Grants::default()),
            history: Mutex::new(Vec::new()),
            last_outcome: Mutex::new(None),
            last_findings: Mutex::new(Vec::new()),
            busy: AtomicBool::new(false),
        }
    }

    /// Claims the session for one turn, or `None` when a turn already runs.
    pub fn claim(&self) -> Option<BusyGuard<'_>> {
        self.busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| BusyGuard(self))
    }

    /// Counts a new turn and returns its 1-based number.
    pub fn next_turn(&self) -> u64 {
        self.turns.fetch_add(1, Ordering::AcqRel) + 1
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

    pub fn history(&self) -> Vec<PriorTurn> {
        self.history.lock().map(|h| h.clone()).unwrap_or_default()
    }

    pub fn last_outcome(&self) -> Option<talos_protocol::TurnOutcome> {
        self.last_outcome.lock().ok().and_then(|o| o.clone())
    }

    pub fn last_findings(&self) -> Vec<String> {
        self.last_findings
            .lock()
            .map(|f| f.clone())
            .unwrap_or_default()
    }

    pub fn remember_findings(&self, findings: Vec<String>) {
        if let Ok(mut last) = self.last_findings.lock() {
            *last = findings;
        }
    }

    pub fn remember_outcome(&self, outcome: &talos_protocol::TurnOutcome) {
        if let Ok(mut last) = self.last_outcome.lock() {
            *last = Some(outcome.clone());
        }
    }

    pub fn remember_turn(&self, turn: PriorTurn) {
        if let Ok(mut h) = self.history.lock() {
            h.push(turn);
            let excess = h.len().saturating_sub(HISTORY_TURNS);
            h.drain(..excess);
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
            session_id: self.id.clone(),
            workspace: self.workspace.display().to_string(),
            mode: self.mode,
            turns: self.turns.load(Ordering::Acquire),
            busy: self.busy.load(Ordering::Acquire),
        }
    }
}

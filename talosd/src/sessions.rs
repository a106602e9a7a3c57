//! Sessions: one workspace, one mode, a turn counter and what the session remembers.
//!
//! What a session's turns read and write (the turn counter, the earlier turns, the last outcome
//! and the verifier's last findings) sits behind one lock, and a turn holds that lock from its
//! start to its end: [`Session::claim`] is a try-lock, so "busy" is not a flag kept beside the
//! state but the fact that someone holds it. A second `turn/start` while one runs is refused.
//! The remembered approvals have a lock of their own, because `grants/revoke` from another
//! connection must take effect in the middle of a running turn (decision 0003).
//!
//! A claim also makes the running turn's cancellation token, a child of the daemon's, and
//! leaves it with the session until the claim is dropped, so `turn/cancel` from any connection
//! reaches the turn. [`SessionTurn::snapshot`] is what `session_store` persists after a turn;
//! [`Session::restore`] rebuilds a session from it (grants are never part of it).

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use talos_core::history::{PriorOutcome, PriorTurn};
use talos_core::ladder::Grants;
use talos_protocol::{Mode, SessionInfo, TurnOutcome};
use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;

/// How many earlier turns a session remembers for follow-ups.
pub const HISTORY_TURNS: usize = 16;

/// A session unused this long releases its workspace handle (reopened on its next use).
pub const IDLE_RELEASE_MS: u64 = 10 * 60 * 1000;

use crate::clock::now_ms;

use crate::ids::SessionId;
use crate::workspace::Workspace;

#[derive(Debug)]
pub struct Session {
    pub id: SessionId,
    /// Canonical (symlinks resolved) workspace root.
    pub workspace: PathBuf,
    /// The capability every access to the workspace's files goes through: opened when the
    /// session starts, released while the session is idle (issue 26) and opened again, on the
    /// same folder only, by its next use ([`Session::files`]).
    handle: Mutex<Option<Arc<Workspace>>>,
    /// The root folder's device and inode, and the write log, for reopening the handle.
    identity: Option<(u64, u64)>,
    pending: Option<crate::workspace::PendingLog>,
    /// When the session was last used (ms since the epoch), for releasing idle handles.
    last_used_ms: AtomicU64,
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
    /// The running turn's cancellation token, while a claim is held.
    running: Mutex<Option<CancellationToken>>,
    /// Whether the session's state is on disk (written after a turn, or restored from it).
    persisted: AtomicBool,
    /// The model chosen with `model/select`; `None` follows `model.default`.
    model: Mutex<Option<String>>,
    /// The folder it works from, workspace-relative (`""`: the root).
    directory: Mutex<String>,
    /// The instruction files its last turn used.
    instructions: Mutex<Vec<talos_protocol::InstructionFile>>,
}

/// What a session's turns leave for the next ones, as `session_store` writes it down and a new
/// daemon reads it back. Grants are deliberately not part of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub id: SessionId,
    pub workspace: PathBuf,
    pub mode: Mode,
    pub turns: u64,
    /// The remembered requests with how each turn ended, oldest first; the contracts are
    /// rebuilt from them by `talos_core::history::replay`.
    pub requests: Vec<(String, PriorOutcome)>,
    /// Each remembered turn's committed answer and the files it changed, in the same order
    /// (what the conversation carries into later requests; issue 23).
    pub answers: Vec<(String, Vec<String>)>,
    pub last_outcome: Option<TurnOutcome>,
    pub last_findings: Vec<String>,
    /// The model chosen with `model/select`, if one was.
    pub model: Option<String>,
    /// The folder it works from, workspace-relative (`""`: the root).
    pub directory: String,
}

/// One remembered turn: the request as typed, and its contract, outcome and changed files.
#[derive(Debug, Clone)]
struct Remembered {
    request: String,
    turn: PriorTurn,
    /// The committed final answer (after the guards).
    answer: String,
}

/// What a session remembers between its turns.
#[derive(Debug, Default)]
struct SessionState {
    turns: u64,
    /// The contracts and outcomes of earlier turns, oldest first (at most [`HISTORY_TURNS`]).
    history: Vec<Remembered>,
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
    cancel: CancellationToken,
}

impl Session {
    pub fn new(id: SessionId, workspace: Workspace, mode: Mode, slot: u32) -> Session {
        Session::with_state(id, workspace, mode, slot, SessionState::default())
    }

    /// A session rebuilt from what a previous daemon persisted: its turn count, history and
    /// last records, with no grants (a new daemon asks again).
    pub fn restore(snapshot: Snapshot, workspace: Workspace, slot: u32) -> Session {
        let records: Vec<talos_core::history::Remembered> = snapshot
            .requests
            .iter()
            .enumerate()
            .map(|(i, (request, outcome))| talos_core::history::Remembered {
                request: request.clone(),
                outcome: *outcome,
                changed: snapshot
                    .answers
                    .get(i)
                    .map(|(_, changed)| changed.clone())
                    .unwrap_or_default(),
            })
            .collect();
        let history = talos_core::history::replay(&records)
            .into_iter()
            .zip(snapshot.requests)
            .enumerate()
            .map(|(i, (turn, (request, _)))| Remembered {
                request,
                turn,
                answer: snapshot
                    .answers
                    .get(i)
                    .map(|(answer, _)| answer.clone())
                    .unwrap_or_default(),
            })
            .collect();
        let state = SessionState {
            turns: snapshot.turns,
            history,
            last_outcome: snapshot.last_outcome,
            last_findings: snapshot.last_findings,
        };
        let session = Session::with_state(snapshot.id, workspace, snapshot.mode, slot, state);
        session.select_model(snapshot.model);
        session.set_directory(snapshot.directory);
        session
            .turns_started
            .store(snapshot.turns, Ordering::Release);
        session.persisted.store(true, Ordering::Release);
        session
    }

    fn with_state(
        id: SessionId,
        workspace: Workspace,
        mode: Mode,
        slot: u32,
        state: SessionState,
    ) -> Session {
        Session {
            id,
            workspace: workspace.root().to_path_buf(),
            identity: workspace.identity(),
            pending: workspace.pending(),
            handle: Mutex::new(Some(Arc::new(workspace))),
            last_used_ms: AtomicU64::new(now_ms()),
            mode,
            slot,
            state: Arc::new(tokio::sync::Mutex::new(state)),
            grants: Mutex::new(Grants::default()),
            turns_started: AtomicU64::new(0),
            running: Mutex::new(None),
            persisted: AtomicBool::new(false),
            model: Mutex::new(None),
            directory: Mutex::new(String::new()),
            instructions: Mutex::new(Vec::new()),
        }
    }

    /// A new session that starts with what `from` remembers (history, last outcome and
    /// findings; its turn count starts at 0 and it has no grants), or `None` while `from` runs
    /// a turn.
    pub fn continuing(
        id: SessionId,
        workspace: Workspace,
        mode: Mode,
        slot: u32,
        from: &Session,
    ) -> Option<Session> {
        let inherited = from.state.try_lock().ok()?;
        let state = SessionState {
            turns: 0,
            history: inherited.history.clone(),
            last_outcome: inherited.last_outcome.clone(),
            last_findings: inherited.last_findings.clone(),
        };
        drop(inherited);
        let session = Session::with_state(id, workspace, mode, slot, state);
        session.select_model(from.selected_model());
        session.set_directory(from.directory());
        Some(session)
    }

    /// Claims the session for one turn, or `None` when a turn already runs. The turn's
    /// cancellation token is a child of `parent` (the daemon's `stopping`).
    pub fn claim(self: &Arc<Self>, parent: &CancellationToken) -> Option<SessionTurn> {
        let state = self.state.clone().try_lock_owned().ok()?;
        self.last_used_ms.store(now_ms(), Ordering::Relaxed);
        let cancel = parent.child_token();
        if let Ok(mut running) = self.running.lock() {
            *running = Some(cancel.clone());
        }
        Some(SessionTurn {
            session: self.clone(),
            state,
            cancel,
        })
    }

    /// Cancels the running turn; `false` when none runs (it ended, or never started).
    pub fn cancel_turn(&self) -> bool {
        let running = self.running.lock().ok().and_then(|r| r.clone());
        match running {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The workspace handle, opened again if it was released while the session was idle; an
    /// error when the folder is gone or is no longer the one the session opened.
    pub fn files(&self) -> Result<Arc<Workspace>, crate::workspace::WorkspaceError> {
        self.last_used_ms.store(now_ms(), Ordering::Relaxed);
        let mut handle = self
            .handle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(files) = handle.as_ref() {
            return Ok(files.clone());
        }
        let files = Arc::new(Workspace::reopened(
            &self.workspace,
            self.identity,
            self.pending.clone(),
        )?);
        tracing::debug!(session = %self.id, "workspace handle reopened");
        *handle = Some(files.clone());
        Ok(files)
    }

    /// Releases the workspace handle when no turn runs and the session was last used longer
    /// ago than `idle_ms`; whether it did.
    pub fn release_if_idle(&self, now: u64, idle_ms: u64) -> bool {
        if self.busy() || now.saturating_sub(self.last_used_ms.load(Ordering::Relaxed)) < idle_ms {
            return false;
        }
        let mut handle = self
            .handle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        handle.take().is_some()
    }

    /// Whether the workspace handle is open now.
    pub fn holds_handle(&self) -> bool {
        self.handle.lock().is_ok_and(|h| h.is_some())
    }

    /// Whether the session's state is on disk.
    pub fn is_persisted(&self) -> bool {
        self.persisted.load(Ordering::Acquire)
    }

    /// Records that the session's state is (or is no longer) on disk.
    pub fn set_persisted(&self, persisted: bool) {
        self.persisted.store(persisted, Ordering::Release);
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

    /// The model chosen with `model/select`; `None` follows `model.default`.
    pub fn selected_model(&self) -> Option<String> {
        self.model.lock().ok().and_then(|m| m.clone())
    }

    /// The folder the session works from, workspace-relative (`""`: the root).
    pub fn directory(&self) -> String {
        self.directory.lock().map(|d| d.clone()).unwrap_or_default()
    }

    pub fn set_directory(&self, directory: String) {
        if let Ok(mut d) = self.directory.lock() {
            *d = directory;
        }
    }

    /// Records the instruction files a turn used, for `session/list`.
    pub fn set_instructions(&self, files: Vec<talos_protocol::InstructionFile>) {
        if let Ok(mut i) = self.instructions.lock() {
            *i = files;
        }
    }

    /// Chooses the model of the next turns (`None`: `model.default`).
    pub fn select_model(&self, name: Option<String>) {
        if let Ok(mut model) = self.model.lock() {
            *model = name;
        }
    }

    /// What `session/list` says; `default_model` is named when the session chose none.
    pub fn info(&self, default_model: &str) -> SessionInfo {
        SessionInfo {
            session_id: self.id.to_string(),
            workspace: self.workspace.display().to_string(),
            mode: self.mode,
            turns: self.turns_started.load(Ordering::Acquire),
            busy: self.busy(),
            persisted: self.persisted.load(Ordering::Acquire),
            model: self
                .selected_model()
                .unwrap_or_else(|| default_model.to_string()),
            directory: self.directory(),
            instructions: self
                .instructions
                .lock()
                .map(|i| i.clone())
                .unwrap_or_default(),
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

    /// The running turn's cancellation token (`turn/cancel` cancels it).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The turn has its outcome: a `turn/cancel` from now on finds no turn to stop.
    pub fn turn_ended(&self) {
        if let Ok(mut running) = self.session.running.lock() {
            *running = None;
        }
    }

    pub fn history(&self) -> Vec<PriorTurn> {
        self.state.history.iter().map(|r| r.turn.clone()).collect()
    }

    /// What the session persists after a turn.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            id: self.session.id.clone(),
            workspace: self.session.workspace.clone(),
            mode: self.session.mode,
            turns: self.state.turns,
            requests: self
                .state
                .history
                .iter()
                .map(|r| (r.request.clone(), r.turn.outcome))
                .collect(),
            answers: self
                .state
                .history
                .iter()
                .map(|r| (r.answer.clone(), r.turn.changed.clone()))
                .collect(),
            last_outcome: self.state.last_outcome.clone(),
            last_findings: self.state.last_findings.clone(),
            model: self.session.selected_model(),
            directory: self.session.directory(),
        }
    }

    pub fn last_outcome(&self) -> Option<TurnOutcome> {
        self.state.last_outcome.clone()
    }

    pub fn last_findings(&self) -> Vec<String> {
        self.state.last_findings.clone()
    }

    /// The files the last remembered turn changed.
    pub fn last_changed(&self) -> Vec<String> {
        self.state
            .history
            .last()
            .map(|r| r.turn.changed.clone())
            .unwrap_or_default()
    }

    pub fn remember_findings(&mut self, findings: Vec<String>) {
        self.state.last_findings = findings;
    }

    pub fn remember_outcome(&mut self, outcome: &TurnOutcome) {
        self.state.last_outcome = Some(outcome.clone());
    }

    /// The earlier turns as the conversation carries them, oldest first.
    pub fn conversation(&self) -> Vec<talos_core::turn::conversation::EarlierTurn> {
        self.state
            .history
            .iter()
            .map(|r| talos_core::turn::conversation::EarlierTurn {
                request: r.request.clone(),
                answer: r.answer.clone(),
                changed: r.turn.changed.clone(),
                outcome: r.turn.outcome,
                replaced: talos_core::history::replacement_made(&r.turn),
            })
            .collect()
    }

    /// Remembers a finished turn: its request, contract, outcome and changed files, and the
    /// committed answer the conversation carries.
    pub fn remember_turn(&mut self, request: String, turn: PriorTurn, answer: String) {
        let history = &mut self.state.history;
        history.push(Remembered {
            request,
            turn,
            answer,
        });
        let excess = history.len().saturating_sub(HISTORY_TURNS);
        history.drain(..excess);
    }
}

impl Drop for SessionTurn {
    fn drop(&mut self) {
        self.turn_ended();
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
            let claim = session.claim(&CancellationToken::new());
            got.push(claim.is_some());
            held.push(claim);
            assert_eq!(session.info("default").busy, got.iter().any(|g| *g));
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
            let Some(mut turn) = session.claim(&CancellationToken::new()) else {
                panic!("the session should be free");
            };
            assert_eq!(turn.next_turn(), expected);
            turn.remember_findings(vec![format!("finding {expected}")]);
            assert!(session.info("default").busy);
            assert_eq!(session.info("default").turns, expected);
        }
        assert!(!session.info("default").busy);
        let Some(turn) = session.claim(&CancellationToken::new()) else {
            panic!("the session should be free");
        };
        assert_eq!(turn.last_findings(), vec!["finding 3".to_string()]);
    }

    #[test]
    fn cancel_reaches_only_the_running_turn() {
        let workspace = Workspace::open(&std::env::temp_dir()).expect("the temp dir opens");
        let session = Arc::new(Session::new(
            SessionId::new().expect("random ids"),
            workspace,
            Mode::Agent,
            0,
        ));
        assert!(!session.cancel_turn(), "no turn runs yet");
        let stopping = CancellationToken::new();
        let turn = session.claim(&stopping).expect("free");
        let token = turn.cancel_token();
        assert!(session.cancel_turn());
        assert!(token.is_cancelled());
        assert!(!stopping.is_cancelled(), "the daemon goes on");
        drop(turn);
        assert!(!session.cancel_turn(), "the turn ended");
        let next = session.claim(&stopping).expect("free again");
        assert!(
            !next.cancel_token().is_cancelled(),
            "a new turn starts uncancelled"
        );
        stopping.cancel();
        assert!(
            next.cancel_token().is_cancelled(),
            "a stopping daemon cancels it"
        );
    }

    #[test]
    fn a_restored_session_has_its_records_and_no_grants() {
        let workspace = || Workspace::open(&std::env::temp_dir()).expect("the temp dir opens");
        let session = Arc::new(Session::new(
            SessionId::new().expect("random ids"),
            workspace(),
            Mode::Ask,
            0,
        ));
        session.remember_writes();
        let snapshot = {
            let mut turn = session.claim(&CancellationToken::new()).expect("free");
            turn.next_turn();
            let request = "change the title in index.html to Hello";
            turn.remember_turn(
                request.into(),
                PriorTurn {
                    contract: talos_core::history::resolve_in_context(&[], request),
                    outcome: PriorOutcome::Denied,
                    changed: vec![],
                },
                "The change was denied.".into(),
            );
            // A verified replacement: its files and its change come back with the session.
            let edit = "In settings.py, change TIMEOUT from 30 to 60.";
            turn.next_turn();
            let history = turn.history();
            turn.remember_turn(
                edit.into(),
                PriorTurn {
                    contract: talos_core::history::resolve_in_context(&history, edit),
                    outcome: PriorOutcome::Verified,
                    changed: vec!["settings.py".into()],
                },
                "Edited settings.py.".into(),
            );
            turn.remember_findings(vec!["finding".into()]);
            turn.snapshot()
        };
        let restored = Arc::new(Session::restore(snapshot.clone(), workspace(), 1));
        assert_eq!(restored.id, session.id);
        assert_eq!(restored.mode, Mode::Ask);
        let info = restored.info("default");
        assert_eq!((info.turns, info.persisted, info.busy), (2, true, false));
        assert!(
            !restored.grants().remember_writes,
            "grants are not restored"
        );
        let turn = restored.claim(&CancellationToken::new()).expect("free");
        assert_eq!(turn.snapshot(), snapshot);
        let live = session.claim(&CancellationToken::new()).expect("free");
        assert_eq!(turn.history(), live.history());
        assert_eq!(
            turn.conversation(),
            live.conversation(),
            "the answers are restored"
        );
        let replaced = turn.conversation().pop().and_then(|t| t.replaced);
        assert_eq!(
            replaced.map(|r| (r.target, r.from, r.to)),
            Some(("settings.py".into(), "30".into(), "60".into())),
            "the change made is restored"
        );
        assert_eq!(turn.last_findings(), vec!["finding".to_string()]);
    }
}

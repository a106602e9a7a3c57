//! A session's life beyond one turn and one daemon: `turn/cancel` stops the running turn,
//! persisted sessions are restored when the daemon starts, `session/resume` reopens one, and
//! `session/close` forgets a session and deletes its file.
//!
//! A restored session re-opens its workspace through `Workspace::open` after checking that the
//! directory still exists and still resolves to the same path; a file that fails a check in
//! `session_store` or whose workspace is gone is logged and skipped, never trusted. Grants are
//! not restored: a new daemon asks again.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use talos_protocol as proto;
use talos_protocol::{ErrorCode, RpcError};

use crate::server::Daemon;
use crate::session_store::{SessionStore, Skipped};
use crate::sessions::{Session, Snapshot};

/// `turn/cancel`: cancels the session's running turn. No running turn is not an error; an
/// unknown session is.
pub fn turn_cancel(daemon: &Daemon, p: proto::TurnCancelParams) -> Result<Value, RpcError> {
    let session = daemon
        .session(&p.session_id)
        .ok_or_else(|| not_found(&p.session_id))?;
    let cancelled = session.cancel_turn();
    tracing::info!(session = %session.id, cancelled, "turn/cancel");
    to_value(proto::TurnCancelResult { cancelled })
}

/// `model/select`: the model the session's next turns use. A turn that runs keeps the model it
/// started with. The choice is written with the session's state: now when no turn runs and the
/// session is persisted, else when the running turn ends.
pub fn model_select(daemon: &Daemon, p: proto::ModelSelectParams) -> Result<Value, RpcError> {
    let session = daemon
        .session(&p.session_id)
        .ok_or_else(|| not_found(&p.session_id))?;
    let Some(entry) = daemon.models.get(&p.name) else {
        return Err(RpcError::new(
            ErrorCode::InvalidParams,
            format!(
                "no model `{}`; configured: {} (models: in config.yaml)",
                p.name,
                daemon.models.names().join(", ")
            ),
        ));
    };
    let previous = session
        .selected_model()
        .unwrap_or_else(|| daemon.default_model().to_string());
    session.select_model(Some(entry.name.clone()));
    if session.is_persisted()
        && let Some(claim) = session.claim(&daemon.stopping)
    {
        let store = SessionStore::new(daemon.home.sessions());
        let saved = store
            .save(&claim.snapshot(), crate::clock::now_ms())
            .and_then(|()| daemon.home.sessions().sync_filesystem());
        if let Err(e) = saved {
            tracing::error!(session = %session.id, error = %e, "cannot persist the session");
        }
    }
    tracing::info!(session = %session.id, model = %entry.name, %previous, "model selected");
    to_value(proto::ModelSelectResult {
        session_id: p.session_id,
        name: entry.name.clone(),
        previous,
        mode: entry.config.mode.as_str().into(),
        url: entry.engine.url.clone(),
    })
}

/// At most this many persisted sessions, the most recently saved, are reopened at start: each
/// holds a handle on its workspace. Older ones stay on disk and `session/resume` reopens them.
pub const RESTORED_AT_START: usize = 64;

/// What [`restore_at_start`] did: the sessions open afterwards, the files it skipped, each
/// with its reason (all of which are also logged), and the valid sessions left on disk beyond
/// [`RESTORED_AT_START`].
#[derive(Debug, Default)]
pub struct Restored {
    pub sessions: Vec<crate::ids::SessionId>,
    pub skipped: Vec<Skipped>,
    pub left_on_disk: Vec<crate::ids::SessionId>,
}

/// Restores every persisted session that passes its checks (one already open is kept as it is);
/// logs each file skipped.
pub fn restore_at_start(daemon: &Daemon) -> Restored {
    let store = SessionStore::new(daemon.home.sessions());
    let (mut snapshots, mut skipped) = store.load_all();
    let left_on_disk: Vec<crate::ids::SessionId> = snapshots
        .split_off(snapshots.len().min(RESTORED_AT_START))
        .into_iter()
        .map(|s| s.id)
        .collect();
    if !left_on_disk.is_empty() {
        tracing::info!(
            left = left_on_disk.len(),
            "older persisted sessions left on disk; session/resume reopens them"
        );
    }
    let mut sessions = Vec::new();
    for snapshot in snapshots {
        let path = store.path(snapshot.id.as_str());
        match reopen(daemon, snapshot) {
            Ok(session) => sessions.push(session.id.clone()),
            Err(reason) => skipped.push(Skipped { path, reason }),
        }
    }
    for skip in &skipped {
        tracing::warn!(file = %skip.path.display(), reason = %skip.reason, "session file skipped");
    }
    if !sessions.is_empty() {
        tracing::info!(restored = sessions.len(), "persisted sessions restored");
    }
    Restored {
        sessions,
        skipped,
        left_on_disk,
    }
}

/// `session/resume`: the session if it is open, else reopened from its file.
pub fn session_resume(daemon: &Daemon, p: proto::SessionResumeParams) -> Result<Value, RpcError> {
    if !p.mcp_servers.is_empty() {
        crate::mcp::editor_servers(&daemon.mcp, &p.session_id, &p.mcp_servers)
            .map_err(|m| RpcError::new(ErrorCode::InvalidParams, m))?;
    }
    if let Some(open) = daemon.session(&p.session_id) {
        return to_value(proto::SessionResumeResult {
            session: open.info(daemon.default_model()),
            loaded: false,
        });
    }
    let store = SessionStore::new(daemon.home.sessions());
    let snapshot = store.load(&p.session_id).map_err(|skip| {
        tracing::warn!(file = %skip.path.display(), reason = %skip.reason, "session file skipped");
        RpcError::new(
            ErrorCode::SessionNotFound,
            format!("no session {} to resume: {}", p.session_id, skip.reason),
        )
    })?;
    let session = reopen(daemon, snapshot).map_err(|reason| {
        RpcError::new(
            ErrorCode::WorkspaceInvalid,
            format!("session {} cannot be resumed: {reason}", p.session_id),
        )
    })?;
    to_value(proto::SessionResumeResult {
        session: session.info(daemon.default_model()),
        loaded: true,
    })
}

/// `session/close`: forgets the session and deletes its file.
pub fn session_close(daemon: &Daemon, p: proto::SessionCloseParams) -> Result<Value, RpcError> {
    if p.release {
        return session_release(daemon, &p.session_id);
    }
    let removed = daemon
        .sessions
        .lock()
        .map_err(internal)?
        .remove(p.session_id.as_str());
    daemon.mcp.forget_session(&p.session_id);
    let store = SessionStore::new(daemon.home.sessions());
    let deleted = match store.remove(&p.session_id) {
        Ok(deleted) => deleted,
        Err(e) => {
            tracing::error!(session = %p.session_id, error = %e, "cannot delete the session file");
            false
        }
    };
    match (removed, deleted) {
        (None, false) => Err(not_found(&p.session_id)),
        _ => to_value(proto::SessionCloseResult { closed: true }),
    }
}

/// `session/close` with `release`: forgets the session in memory, keeping its file for a
/// later `session/resume`; a session whose turn runs is kept, since the turn's end writes
/// the file only while the session is held.
fn session_release(daemon: &Daemon, id: &str) -> Result<Value, RpcError> {
    let mut sessions = daemon.sessions.lock().map_err(internal)?;
    let Some(session) = sessions.get(id) else {
        return Err(not_found(id));
    };
    if session.busy() {
        return Err(RpcError::new(
            ErrorCode::SessionBusy,
            format!("session {id} is running a turn; cancel it, then release the session"),
        ));
    }
    sessions.remove(id);
    drop(sessions);
    daemon.mcp.forget_session(id);
    to_value(proto::SessionCloseResult { closed: true })
}

/// Opens the snapshot's workspace again and adds the session, unless one with its id is open.
fn reopen(daemon: &Daemon, snapshot: Snapshot) -> Result<Arc<Session>, String> {
    let root = crate::workspace::canonical_root(&snapshot.workspace).map_err(|e| {
        format!(
            "workspace {} cannot be opened: {e}",
            snapshot.workspace.display()
        )
    })?;
    if root != snapshot.workspace {
        return Err(format!(
            "workspace {} now resolves to {}",
            snapshot.workspace.display(),
            root.display()
        ));
    }
    if !crate::workspace::is_directory(&root) || root == Path::new("/") {
        return Err(format!(
            "workspace {} is not a usable directory",
            root.display()
        ));
    }
    let handle = crate::workspace::Workspace::open(&root)
        .map_err(|e| format!("workspace {} cannot be opened: {e}", root.display()))?
        .with_pending(crate::workspace::PendingLog::new(
            daemon.home.pending_writes(),
        ));
    let id = snapshot.id.clone();
    let mut sessions = daemon.sessions.lock().map_err(|e| e.to_string())?;
    if let Some(open) = sessions.get(id.as_str()) {
        return Ok(open.clone());
    }
    let session = Arc::new(Session::restore(snapshot, handle, daemon.next_slot()));
    sessions.insert(id.clone(), session.clone());
    tracing::info!(session = %id, workspace = %root.display(), "session restored");
    Ok(session)
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(ErrorCode::SessionNotFound, format!("no session {id}"))
}

fn to_value<T: serde::Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(internal)
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    RpcError::new(ErrorCode::InternalError, format!("internal error: {e}"))
}

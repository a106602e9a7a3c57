//! The method table: one arm per [`talos_protocol::Request`] variant, each a thin call into the
//! module that owns the work (or a short handler here).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde::Serialize;
use serde_json::Value;
use talos_protocol as proto;
use talos_protocol::{ErrorCode, RpcError};

use crate::connection::{Handler, Peer};
use crate::server::Daemon;
use crate::sessions::Session;

/// The daemon's method table as a connection's [`Handler`].
#[derive(Debug, Clone)]
pub struct Dispatch {
    daemon: Arc<Daemon>,
}

impl Dispatch {
    pub fn new(daemon: Arc<Daemon>) -> Dispatch {
        Dispatch { daemon }
    }
}

impl Handler for Dispatch {
    async fn handle(
        &self,
        peer: Arc<Peer>,
        method: String,
        params: Value,
    ) -> Result<Value, RpcError> {
        handle(&self.daemon, &peer, &method, params).await
    }
}

/// One request: parsed into its [`proto::Request`] variant (an unknown method, or one the
/// daemon sends, is `-32601`; params that do not fit `-32602`), then the arm for it, each a call into the module that owns
/// the work (blocking work through [`crate::offload::blocking`]).
pub async fn handle(
    daemon: &Arc<Daemon>,
    peer: &Arc<Peer>,
    method: &str,
    params: Value,
) -> Result<Value, RpcError> {
    use crate::offload::blocking;
    use proto::Request as R;
    match R::parse_to_daemon(method, params)? {
        R::Initialize(p) => initialize(peer, &p),
        R::DaemonStatus => to_value(status(daemon)),
        R::DaemonShutdown => shutdown(daemon, peer),
        R::SessionNew(p) => blocking(|| session_new(daemon, p)),
        R::SessionList => session_list(daemon),
        R::SessionClose(p) => blocking(|| crate::lifecycle::session_close(daemon, p)),
        R::SessionResume(p) => blocking(|| crate::lifecycle::session_resume(daemon, p)),
        R::TurnCancel(p) => crate::lifecycle::turn_cancel(daemon, p),
        R::TurnStart(p) => turn_start(daemon, peer, p).await,
        R::ApprovalRespond(p) => approval_respond(peer, &p),
        R::GrantsList(p) => grants_list(daemon, p),
        R::GrantsRevoke(p) => grants_revoke(daemon, p),
        R::ProfileList(p) => blocking(|| profile_list(daemon, p)),
        R::ProfileTrust(p) => blocking(|| profile_trust(daemon, p)),
        R::ModelStatus => to_value(daemon.models.status()),
        R::ModelSelect(p) => blocking(|| crate::lifecycle::model_select(daemon, p)),
        R::CommandList(p) => blocking(|| crate::custom_commands::list(daemon, p)),
        R::CommandExpand(p) => blocking(|| crate::custom_commands::expand(daemon, p)),
        R::CheckpointList(p) => blocking(|| crate::checkpoint::serve::list(daemon, p)),
        R::CheckpointShow(p) => blocking(|| crate::checkpoint::serve::show(daemon, p)),
        R::CheckpointRestore(p) => {
            crate::checkpoint::serve::restore_checkpoint(daemon, peer, p).await
        }
        R::TurnUndo(p) => crate::checkpoint::serve::undo(daemon, peer, p).await,
        R::IndexStatus(p) => blocking(|| index_status(daemon, &p)),
        R::IndexRebuild(p) => index_rebuild(daemon, peer, &p).await,
        R::IndexSearch(p) => blocking(|| index_search(daemon, &p)),
        R::TraceList(p) => blocking(|| trace_list(daemon, &p)),
        R::TraceGet(p) => trace_get(daemon, &p),
        R::DaemonGc => crate::gc::run_once(daemon)
            .map_err(|message| RpcError::new(ErrorCode::ConfigError, message))
            .and_then(to_value),
        R::TurnEvent(_) | R::ApprovalRequest(_) | R::IndexProgress(_) | R::ContractChoose(_) => {
            Err(proto::RequestError::SentByTheDaemon(method.to_string()).into())
        }
    }
}

/// `initialize`: logs who connected (and the fields it did not know), remembers the requests
/// the client declines to answer, answers who we are.
fn initialize(peer: &Peer, p: &proto::InitializeParams) -> Result<Value, RpcError> {
    peer.set_declines(&p.declines);
    let (client, version) = p.client();
    tracing::debug!(
        connection = peer.id,
        client,
        version,
        protocol_version = p.protocol_version,
        ignored = ?p.other.keys().collect::<Vec<_>>(),
        "initialize"
    );
    to_value(proto::InitializeResult {
        protocol_version: proto::PROTOCOL_VERSION,
        server_name: "talosd".into(),
        server_version: env!("CARGO_PKG_VERSION").into(),
        capabilities: proto::Capabilities::of_this_daemon(),
    })
}

/// `daemon/shutdown`: begins to stop; the answer goes out before the daemon is gone.
fn shutdown(daemon: &Daemon, peer: &Peer) -> Result<Value, RpcError> {
    tracing::info!(connection = peer.id, "shutdown requested over the socket");
    daemon.stopping.cancel();
    to_value(proto::DaemonShutdownResult { stopping: true })
}

/// `session/list`: every open session, by id.
fn session_list(daemon: &Daemon) -> Result<Value, RpcError> {
    let mut sessions: Vec<proto::SessionInfo> = daemon
        .sessions
        .lock()
        .map_err(internal)?
        .values()
        .map(|s| s.info(daemon.default_model()))
        .collect();
    sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    to_value(proto::SessionListResult { sessions })
}

/// `approval/respond`: completes an approval pending on this connection, and no other.
fn approval_respond(peer: &Peer, p: &proto::ApprovalRespondParams) -> Result<Value, RpcError> {
    let result = serde_json::to_value(proto::ApprovalResult {
        decision: p.decision,
    })
    .map_err(internal)?;
    if peer.complete_alias(&p.request_id, result) {
        to_value(proto::ApprovalRespondResult { accepted: true })
    } else {
        Err(RpcError::new(
            ErrorCode::ApprovalNotOwned,
            format!("no pending approval {} on this connection", p.request_id),
        ))
    }
}

/// `grants/list`: what the session remembers, described from the ladder's own table.
fn grants_list(daemon: &Daemon, p: proto::GrantsParams) -> Result<Value, RpcError> {
    let session = find_session(daemon, &p.session_id)?;
    let grants = if session.grants().remember_writes {
        vec![proto::GrantInfo {
            kind: "writes".into(),
            description: talos_core::ladder::remembered_writes_description(),
        }]
    } else {
        Vec::new()
    };
    to_value(proto::GrantsListResult {
        session_id: p.session_id,
        grants,
    })
}

/// `grants/revoke`: forgets every grant of the session.
fn grants_revoke(daemon: &Daemon, p: proto::GrantsParams) -> Result<Value, RpcError> {
    let revoked = find_session(daemon, &p.session_id)?.revoke_grants();
    to_value(proto::GrantsRevokeResult {
        session_id: p.session_id,
        revoked,
    })
}

/// `index/status`: the workspace's index as the index store sees it.
fn index_status(daemon: &Daemon, p: &proto::IndexParams) -> Result<Value, RpcError> {
    let root = workspace_root(&p.workspace)?;
    to_value(crate::index::requests::status(&daemon.home.index(), &root))
}

/// `index/rebuild`: builds the index again, sending `index/progress` to this peer.
async fn index_rebuild(
    daemon: &Daemon,
    peer: &Arc<Peer>,
    p: &proto::IndexParams,
) -> Result<Value, RpcError> {
    let root = crate::offload::blocking(|| workspace_root(&p.workspace))?;
    let stopping = daemon.stopping.clone();
    crate::index::requests::rebuild_notifying(daemon.home.index(), root, peer.clone(), stopping)
        .await
        .map_err(internal)
        .and_then(to_value)
}

/// `index/search`: ranked chunks of the workspace, without the model.
fn index_search(daemon: &Daemon, p: &proto::IndexSearchParams) -> Result<Value, RpcError> {
    let root = workspace_root(&p.workspace)?;
    crate::index::requests::search(&daemon.home.index(), &root, p, &daemon.stopping)
        .map_err(internal)
        .and_then(to_value)
}

/// `trace/list`: recent turns of a session or a workspace, from their traces.
fn trace_list(daemon: &Daemon, p: &proto::TraceListParams) -> Result<Value, RpcError> {
    let workspace = p.workspace.as_deref().map(workspace_root).transpose()?;
    crate::traces::requests::list(&daemon.home.traces(), p, workspace.as_deref()).and_then(to_value)
}

/// `trace/get`: one turn's trace record, with its turn log when there is one.
fn trace_get(daemon: &Daemon, p: &proto::TraceGetParams) -> Result<Value, RpcError> {
    crate::offload::blocking(|| crate::traces::requests::get(&daemon.home.traces(), p))
        .and_then(to_value)
}

/// `profile/list`: the built-in profiles and the workspace's declaration with its trust state.
fn profile_list(daemon: &Daemon, p: proto::ProfileListParams) -> Result<Value, RpcError> {
    let workspace = workspace_root(&p.workspace)?;
    let snap = crate::profiles::snapshot(
        &workspace,
        &crate::profiles::PinStore::new(&daemon.home.state),
    );
    let builtin = snap
        .registry
        .profiles()
        .iter()
        .filter(|p| !p.id().starts_with("ws:"))
        .map(crate::profiles::info)
        .collect();
    let declared = snap
        .validated
        .clone()
        .and_then(Result::ok)
        .unwrap_or_default();
    let workspace_profiles = proto::WorkspaceProfiles {
        state: crate::profiles::state_name(&snap.trust).into(),
        sha256: snap
            .declaration
            .as_ref()
            .map(|d| d.sha256.clone())
            .filter(|s| !s.is_empty()),
        reason: match &snap.trust {
            talos_core::command::TrustState::Invalid(reason) => Some(reason.clone()),
            _ => None,
        },
        profiles: declared.iter().map(crate::profiles::info).collect(),
        declaration: snap.declaration.as_ref().map(|d| d.text.clone()),
    };
    to_value(proto::ProfileListResult {
        builtin,
        workspace: workspace_profiles,
    })
}

/// `profile/trust`: pins the declaration's bytes when the hash the person confirmed matches.
fn profile_trust(daemon: &Daemon, p: proto::ProfileTrustParams) -> Result<Value, RpcError> {
    let workspace = workspace_root(&p.workspace)?;
    let pins = crate::profiles::PinStore::new(&daemon.home.state);
    let snap = crate::profiles::snapshot(&workspace, &pins);
    let (Some(declaration), Some(Ok(profiles))) = (&snap.declaration, &snap.validated) else {
        return Err(RpcError::new(
            ErrorCode::WorkspaceInvalid,
            format!("nothing to trust: {}", snap.trust.label()),
        ));
    };
    if !declaration.sha256.eq_ignore_ascii_case(p.sha256.trim()) {
        return to_value(proto::ProfileTrustResult {
            pinned: false,
            sha256: declaration.sha256.clone(),
            profile_count: profiles.len(),
        });
    }
    pins.pin(
        &workspace,
        &declaration.sha256,
        profiles.len(),
        crate::clock::now_ms(),
    )
    .map_err(internal)?;
    tracing::info!(workspace = %workspace.display(), sha256 = %declaration.sha256, "workspace profiles pinned");
    to_value(proto::ProfileTrustResult {
        pinned: true,
        sha256: declaration.sha256.clone(),
        profile_count: profiles.len(),
    })
}

fn status(daemon: &Daemon) -> proto::DaemonStatusResult {
    proto::DaemonStatusResult {
        version: env!("CARGO_PKG_VERSION").into(),
        pid: std::process::id(),
        uptime_ms: u64::try_from(daemon.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        socket: daemon.socket_path.display().to_string(),
        home: daemon.home.root.display().to_string(),
        sessions: daemon.session_count(),
        active_turns: daemon.active_turns.load(Ordering::Relaxed),
        model: proto::ModelInfo {
            mode: daemon.models.default_entry().config.mode.as_str().into(),
            url: daemon.models.default_entry().engine.url.clone(),
        },
        config_error: daemon.config_error.clone(),
        log_lines_dropped: crate::logging::dropped_lines(),
    }
}

fn session_new(daemon: &Daemon, p: proto::SessionNewParams) -> Result<Value, RpcError> {
    let invalid = |m: String| RpcError::new(ErrorCode::WorkspaceInvalid, m);
    if p.workspace.trim().is_empty() {
        return Err(invalid("workspace is empty".into()));
    }
    let raw = std::path::Path::new(&p.workspace);
    if !raw.is_absolute() {
        return Err(invalid(format!(
            "workspace {} is not an absolute path",
            p.workspace
        )));
    }
    let root = crate::workspace::canonical_root(raw)
        .map_err(|e| invalid(format!("workspace {} cannot be opened: {e}", p.workspace)))?;
    if !crate::workspace::is_directory(&root) {
        return Err(invalid(format!(
            "workspace {} is not a directory",
            p.workspace
        )));
    }
    if root == std::path::Path::new("/") {
        return Err(invalid("the filesystem root cannot be a workspace".into()));
    }
    let id = crate::ids::SessionId::new().map_err(internal)?;
    let handle = crate::workspace::Workspace::open(&root)
        .map_err(|e| invalid(format!("workspace {} cannot be opened: {e}", p.workspace)))?
        .with_pending(crate::workspace::PendingLog::new(
            daemon.home.pending_writes(),
        ));
    let session = match &p.continue_from {
        None => Session::new(id.clone(), handle, p.mode, daemon.next_slot()),
        Some(from_id) => {
            let from = daemon.session(from_id).ok_or_else(|| {
                RpcError::new(
                    ErrorCode::SessionNotFound,
                    format!("continueFrom: no session {from_id}"),
                )
            })?;
            if from.workspace != root {
                return Err(invalid(format!(
                    "continueFrom: session {from_id} is on another workspace ({})",
                    from.workspace.display()
                )));
            }
            Session::continuing(id.clone(), handle, p.mode, daemon.next_slot(), &from).ok_or_else(
                || {
                    RpcError::new(
                        ErrorCode::SessionBusy,
                        format!("continueFrom: session {from_id} is running a turn"),
                    )
                },
            )?
        }
    };
    if let Some(directory) = &p.directory {
        session.set_directory(session_directory(&root, directory).map_err(invalid)?);
    }
    crate::mcp::editor_servers(&daemon.mcp, id.as_str(), &p.mcp_servers)
        .map_err(|m| RpcError::new(ErrorCode::InvalidParams, m))?;
    let session = Arc::new(session);
    let mut sessions = daemon.sessions.lock().map_err(internal)?;
    if sessions.len() >= daemon.max_sessions {
        return Err(RpcError::new(
            ErrorCode::TooManyRequests,
            format!(
                "talosd holds {} sessions, as many as it allows (each holds an open file, under the open-file limit); close some with session/close, or restart talosd",
                sessions.len()
            ),
        ));
    }
    sessions.insert(id.clone(), session);
    drop(sessions);
    tracing::info!(session = %id, workspace = %root.display(), mode = p.mode.as_str(), continues = p.continue_from.as_deref().unwrap_or(""), "session opened");
    to_value(proto::SessionNewResult {
        session_id: id.into_string(),
        workspace: root.display().to_string(),
        mode: p.mode,
    })
}

/// `session/new`'s `directory` as a path relative to the workspace root: an existing folder
/// inside the workspace, after symlinks.
fn session_directory(root: &std::path::Path, directory: &str) -> Result<String, String> {
    let refused = |why: &str| format!("directory {directory} {why}");
    let raw = std::path::Path::new(directory);
    if !raw.is_absolute() {
        return Err(refused("is not an absolute path"));
    }
    let canonical = crate::workspace::canonical_root(raw)
        .map_err(|e| refused(&format!("cannot be opened: {e}")))?;
    if !crate::workspace::is_directory(&canonical) {
        return Err(refused("is not a directory"));
    }
    let relative = canonical
        .strip_prefix(root)
        .map_err(|_| refused(&format!("is not inside the workspace {}", root.display())))?;
    relative
        .to_str()
        .map(str::to_string)
        .ok_or_else(|| refused("is not UTF-8"))
}

/// Why a turn is refused under a configuration talosd could not use, and exactly what to do:
/// a running talosd keeps the settings it started with (sessions and the model server depend on
/// them), so a file fixed since is named as valid now, with the restart that takes it up.
fn config_refusal(daemon: &Daemon, error: &str) -> String {
    let file = &daemon.home.config_file;
    let fixed = crate::offload::blocking(|| crate::config::Config::load(file).is_ok());
    let file = file.display();
    if fixed {
        format!(
            "turns are refused: talosd started with a configuration it could not use ({error}); {file} is valid now, but a running talosd does not reload it. Run `talos stop`: the next talos command starts talosd with the fixed file."
        )
    } else {
        format!(
            "turns are refused until the configuration is fixed: {error}. Fix {file}, then run `talos stop`: the next talos command starts talosd with the fixed file."
        )
    }
}

async fn turn_start(
    daemon: &Arc<Daemon>,
    peer: &Arc<Peer>,
    p: proto::TurnStartParams,
) -> Result<Value, RpcError> {
    if let Some(error) = &daemon.config_error {
        let message = config_refusal(daemon, error);
        return Err(RpcError::new(ErrorCode::ConfigError, message));
    }
    if daemon.stopping.is_cancelled() {
        return Err(RpcError::new(ErrorCode::ShuttingDown, "talosd is stopping"));
    }
    let session = daemon.session(&p.session_id).ok_or_else(|| {
        RpcError::new(
            ErrorCode::SessionNotFound,
            format!("no session {}", p.session_id),
        )
    })?;
    let turn_id = crate::ids::TurnId::new().map_err(internal)?;
    let trace_id = crate::ids::TraceId::new().map_err(internal)?;
    let Some(claimed) = session.claim(&daemon.stopping) else {
        return Err(RpcError::new(
            ErrorCode::SessionBusy,
            format!("session {} is already running a turn", p.session_id),
        ));
    };
    let files = session.files().map_err(|e| {
        RpcError::new(
            ErrorCode::WorkspaceInvalid,
            format!("the session's workspace cannot be opened again: {e}"),
        )
    })?;
    let store_use = daemon.retention.enter(Some(trace_id.as_str())).await;
    daemon.active_turns.fetch_add(1, Ordering::Relaxed);
    let outcome = crate::turn::run(
        daemon.clone(),
        claimed,
        peer.clone(),
        crate::turn::TurnRequest {
            prompt: p.prompt,
            pins: p.pins,
            turn_id,
            trace_id,
            files,
        },
    )
    .await;
    daemon.active_turns.fetch_sub(1, Ordering::Relaxed);
    drop(store_use);
    to_value(outcome)
}

/// An absolute, existing workspace directory, symlinks resolved.
fn workspace_root(raw: &str) -> Result<std::path::PathBuf, RpcError> {
    let invalid = |m: String| RpcError::new(ErrorCode::WorkspaceInvalid, m);
    let path = std::path::Path::new(raw);
    if !path.is_absolute() {
        return Err(invalid(format!("workspace {raw} is not an absolute path")));
    }
    let root = crate::workspace::canonical_root(path)
        .map_err(|e| invalid(format!("workspace {raw} cannot be opened: {e}")))?;
    if !crate::workspace::is_directory(&root) || root == std::path::Path::new("/") {
        return Err(invalid(format!(
            "workspace {raw} is not a usable directory"
        )));
    }
    Ok(root)
}

fn find_session(daemon: &Daemon, id: &str) -> Result<Arc<Session>, RpcError> {
    daemon
        .session(id)
        .ok_or_else(|| RpcError::new(ErrorCode::SessionNotFound, format!("no session {id}")))
}

fn to_value<T: Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(internal)
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    RpcError::new(ErrorCode::InternalError, format!("internal error: {e}"))
}

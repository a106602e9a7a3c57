//! Sessions from the CLI's side: `talos run` reuses the daemon's idle session for the same
//! workspace and mode (so what you approved "for the session" and the turn history carry over
//! between runs), and `talos grants` lists or revokes what those sessions remember.

use talos_protocol::{
    EditorMcpServer, GRANTS_LIST, GRANTS_REVOKE, GrantsListResult, GrantsParams,
    GrantsRevokeResult, MODEL_SELECT, Mode, ModelSelectParams, ModelSelectResult, SESSION_LIST,
    SESSION_NEW, SessionInfo, SessionListResult, SessionNewParams, SessionNewResult,
};

use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;
use crate::render::{Output, printable};

fn invalid(method: &str, error: serde_json::Error) -> Failure {
    Failure::Connection(format!("invalid {method} result: {error}"))
}

/// The daemon's sessions on `workspace`, in `mode` when one is given.
pub fn on_workspace(
    client: &mut Client,
    workspace: &str,
    mode: Option<Mode>,
) -> Result<Vec<SessionInfo>, Failure> {
    let listed: SessionListResult = serde_json::from_value(client.call(
        SESSION_LIST,
        serde_json::json!({}),
        &mut ignore_messages,
    )?)
    .map_err(|e| invalid(SESSION_LIST, e))?;
    Ok(listed
        .sessions
        .into_iter()
        .filter(|s| s.workspace == workspace && mode.is_none_or(|m| s.mode == m))
        .collect())
}

/// An idle session for the workspace, mode and directory (absolute, inside the workspace;
/// `None`: the root), or a new one.
pub fn open_in(
    client: &mut Client,
    (workspace, directory): (&str, Option<&str>),
    mode: Mode,
    fresh: bool,
    mcp_servers: &[EditorMcpServer],
) -> Result<String, Failure> {
    let relative = directory.map_or(String::new(), |d| relative_to(workspace, d));
    if !fresh
        && let Some(idle) = on_workspace(client, workspace, Some(mode))?
            .into_iter()
            .find(|s| !s.busy && s.directory == relative)
    {
        return Ok(idle.session_id);
    }
    new_session(client, workspace, mode, (None, directory), mcp_servers)
}

/// The current directory when it is a folder strictly inside `workspace` (both canonical):
/// the session's directory, from which project instructions are read down from the root.
pub fn here(workspace: &str) -> Option<String> {
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    let inside = cwd.strip_prefix(workspace).ok()?;
    (!inside.as_os_str().is_empty()).then(|| cwd.display().to_string())
}

fn relative_to(workspace: &str, directory: &str) -> String {
    std::path::Path::new(directory)
        .strip_prefix(workspace)
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The daemon's account of one session (`session/list`).
pub fn info_of(client: &mut Client, workspace: &str, session_id: &str) -> Option<SessionInfo> {
    on_workspace(client, workspace, None)
        .ok()?
        .into_iter()
        .find(|s| s.session_id == session_id)
}

/// A new session in `mode` on the workspace that starts with what the session `from`
/// remembers (`session/new` with `continueFrom`): a change of mode keeps the conversation.
pub fn continue_in(
    client: &mut Client,
    workspace: &str,
    mode: Mode,
    from: &str,
    mcp_servers: &[EditorMcpServer],
) -> Result<String, Failure> {
    new_session(
        client,
        workspace,
        mode,
        (Some(from.to_string()), None),
        mcp_servers,
    )
}

/// Chooses the model of the session's next turns (`model/select`).
pub fn select_model(
    client: &mut Client,
    session_id: &str,
    name: &str,
) -> Result<ModelSelectResult, Failure> {
    let select = ModelSelectParams {
        session_id: session_id.to_string(),
        name: name.to_string(),
    };
    serde_json::from_value(client.call(
        MODEL_SELECT,
        params(serde_json::to_value(&select)),
        &mut ignore_messages,
    )?)
    .map_err(|e| invalid(MODEL_SELECT, e))
}

fn new_session(
    client: &mut Client,
    workspace: &str,
    mode: Mode,
    (continue_from, directory): (Option<String>, Option<&str>),
    mcp_servers: &[EditorMcpServer],
) -> Result<String, Failure> {
    let new = SessionNewParams {
        workspace: workspace.to_string(),
        mode,
        continue_from,
        directory: directory.map(str::to_string),
        mcp_servers: mcp_servers.to_vec(),
    };
    let created: SessionNewResult = serde_json::from_value(client.call(
        SESSION_NEW,
        params(serde_json::to_value(&new)),
        &mut ignore_messages,
    )?)
    .map_err(|e| invalid(SESSION_NEW, e))?;
    Ok(created.session_id)
}

/// `talos grants`: what each session on the workspace remembers, or revoke it all.
pub fn grants(
    client: &mut Client,
    workspace: &str,
    mode: Option<Mode>,
    revoke: bool,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    client.initialize()?;
    let sessions = on_workspace(client, workspace, mode)?;
    if sessions.is_empty() && !json {
        return output.out(&format!("no session on {}\n", printable(workspace)));
    }
    for session in sessions {
        let request = params(serde_json::to_value(GrantsParams {
            session_id: session.session_id.clone(),
        }));
        if revoke {
            let raw = client.call(GRANTS_REVOKE, request, &mut ignore_messages)?;
            if json {
                output.out(&format!("{raw}\n"))?;
                continue;
            }
            let result: GrantsRevokeResult =
                serde_json::from_value(raw).map_err(|e| invalid(GRANTS_REVOKE, e))?;
            output.out(&format!(
                "{} ({}): revoked {} grant(s)\n",
                result.session_id,
                session.mode.as_str(),
                result.revoked
            ))?;
            continue;
        }
        let raw = client.call(GRANTS_LIST, request, &mut ignore_messages)?;
        if json {
            output.out(&format!("{raw}\n"))?;
            continue;
        }
        let result: GrantsListResult =
            serde_json::from_value(raw).map_err(|e| invalid(GRANTS_LIST, e))?;
        if result.grants.is_empty() {
            output.out(&format!(
                "{} ({}): nothing remembered\n",
                result.session_id,
                session.mode.as_str()
            ))?;
        }
        for grant in result.grants {
            output.out(&format!(
                "{} ({}): {}: {}\n",
                result.session_id,
                session.mode.as_str(),
                grant.kind,
                printable(&grant.description)
            ))?;
        }
    }
    Ok(())
}

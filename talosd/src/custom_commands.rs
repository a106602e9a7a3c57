//! Custom commands' IO (issue 28): `.talos/commands/*.md` read through the session's workspace
//! handle (a folder or file that links out of the workspace, a protected or hard-linked file is
//! not read), then `commands/*.md` in the Talos config dir; `command/list` and
//! `command/expand`. What a file makes, and which one wins a name, is
//! `talos_core::custom_command`'s.

use std::path::Path;

use serde_json::Value;
use talos_core::custom_command::{self, Command, MAX_COMMAND_BYTES, Source};
use talos_protocol as proto;
use talos_protocol::{ErrorCode, RpcError};

use crate::server::Daemon;
use crate::workspace::{EntryKind, Workspace};

const FOLDER: &str = ".talos/commands";

/// The commands a session offers, and why each other file found is not offered.
pub fn commands(files: &Workspace, config_dir: Option<&Path>) -> (Vec<Command>, Vec<String>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for (name, text) in workspace_files(files, &mut problems) {
        match custom_command::parse(&name, Source::Workspace, &text) {
            Ok(command) => found.push(command),
            Err(problem) => problems.push(problem),
        }
    }
    if let Some(dir) = config_dir {
        for (name, text) in user_files(&dir.join("commands"), &mut problems) {
            match custom_command::parse(&name, Source::User, &text) {
                Ok(command) => found.push(command),
                Err(problem) => problems.push(problem),
            }
        }
    }
    custom_command::merge(found, problems)
}

fn workspace_files(files: &Workspace, problems: &mut Vec<String>) -> Vec<(String, String)> {
    let folder = files.resolve(FOLDER);
    let Some(location) = folder.location.filter(|_| !folder.facts.escapes) else {
        if folder.facts.escapes {
            problems.push(format!(
                "{FOLDER} is not read: it leads out of the workspace"
            ));
        }
        return Vec::new();
    };
    let Ok(entries) = files.read_dir(&location) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::File | EntryKind::Symlink))
    {
        let Some(name) = custom_command::name_of(&entry.name) else {
            continue;
        };
        let path = format!("{FOLDER}/{}", entry.name);
        let resolved = files.resolve(&path);
        let read = custom_command::admit_path(&path, &resolved.facts).and_then(|shown| {
            let location = resolved.location.as_deref().unwrap_or_default();
            files
                .read_unshared_limited(location, &shown, MAX_COMMAND_BYTES as u64 + 1)
                .map_err(|e| format!("command {shown} not read: {e}"))
        });
        match read {
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => out.push((name, text)),
                Err(_) => problems.push(format!("command {path} not read: not UTF-8 text")),
            },
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    out
}

fn user_files(dir: &Path, problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // Through a handle on the folder: a link in it is never followed.
    let folder = crate::home::Store::new(crate::home::Root::existing(dir.to_path_buf()), ".");
    for file_name in folder.names(".", crate::workspace::EntryKind::File) {
        let Some(name) = custom_command::name_of(&file_name) else {
            continue;
        };
        let path = dir.join(&file_name);
        match folder.read(&file_name, MAX_COMMAND_BYTES as u64 + 1) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => out.push((name, text)),
                Err(_) => problems.push(format!(
                    "command {} not read: not UTF-8 text",
                    path.display()
                )),
            },
            Err(e) => problems.push(format!("command {} not read: {e}", path.display())),
        }
    }
    out
}

fn session_commands(
    daemon: &Daemon,
    session_id: &str,
) -> Result<(Vec<Command>, Vec<String>), RpcError> {
    let session = daemon.session(session_id).ok_or_else(|| {
        RpcError::new(
            ErrorCode::SessionNotFound,
            format!("no session {session_id}"),
        )
    })?;
    let files = session.files().map_err(|e| {
        RpcError::new(
            ErrorCode::WorkspaceInvalid,
            format!("the session's workspace cannot be opened again: {e}"),
        )
    })?;
    Ok(commands(&files, daemon.home.config_file.parent()))
}

/// `command/list`.
pub fn list(daemon: &Daemon, p: proto::CommandListParams) -> Result<Value, RpcError> {
    let (commands, problems) = session_commands(daemon, &p.session_id)?;
    let result = proto::CommandListResult {
        commands: commands
            .iter()
            .map(|c| proto::CustomCommand {
                name: c.name.clone(),
                source: c.source.as_str().into(),
                description: c.description.clone(),
                ignored: c.ignored.clone(),
            })
            .collect(),
        problems,
    };
    serde_json::to_value(result).map_err(|e| RpcError::new(ErrorCode::InternalError, e.to_string()))
}

/// `command/expand`.
pub fn expand(daemon: &Daemon, p: proto::CommandExpandParams) -> Result<Value, RpcError> {
    let (commands, _) = session_commands(daemon, &p.session_id)?;
    let command = commands.iter().find(|c| c.name == p.name).ok_or_else(|| {
        let names: Vec<String> = commands.iter().map(|c| format!("/{}", c.name)).collect();
        RpcError::new(
            ErrorCode::InvalidParams,
            format!(
                "no command /{}; this session has: {}",
                talos_core::deceptive::escaped(&p.name.chars().take(40).collect::<String>()),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        )
    })?;
    let result = proto::CommandExpandResult {
        request: custom_command::expand(command, &p.arguments),
        source: command.source.as_str().into(),
    };
    serde_json::to_value(result).map_err(|e| RpcError::new(ErrorCode::InternalError, e.to_string()))
}

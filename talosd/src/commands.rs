//! The workspace's commands outside any one call: the command facts a turn's contract is
//! matched against (a root `Cargo.toml`, a root `gradlew`, the trusted workspace profiles),
//! planning a `talos.run_command` request against the workspace's current profile registry,
//! and locating it on disk (cwd inside the workspace, the wrapper present) with the
//! containment the kernel grants. Whether a command may run is talos-core's
//! (`talos_core::command`, `talos_core::turn::call`).

use std::path::{Path, PathBuf};

use talos_core::command::{self, CommandPlan, CommandRequest, Program};
use talos_core::contract::WorkspaceCommands;
use talos_core::turn::call::PlannedCommand;

use crate::contain;
use crate::profiles::{PinStore, snapshot};
use crate::workspace::{EntryKind, Workspace};

/// What the workspace has for commands as the turn starts, for the contract to match plain-word
/// requests against (`talos_core::contract::with_workspace`): a root `Cargo.toml`, a root
/// `gradlew`, and the ids of the workspace profiles when their declaration is trusted.
pub fn workspace_commands(home_state: &Path, workspace: &Workspace) -> WorkspaceCommands {
    let root_file = |name: &str| {
        let resolved = workspace.resolve(name);
        resolved.location.is_some_and(|l| {
            !resolved.facts.escapes && matches!(workspace.kind(&l), Ok(Some(EntryKind::File)))
        })
    };
    let registry = snapshot(workspace.root(), &PinStore::new(home_state)).registry;
    WorkspaceCommands {
        cargo: root_file("Cargo.toml"),
        gradle: root_file("gradlew"),
        trusted_profiles: registry
            .profiles()
            .iter()
            .map(|p| p.id().to_string())
            .filter(|id| id.starts_with("ws:"))
            .collect(),
    }
}

/// Plans the request against the registry as it is now and locates it.
pub fn plan(
    home_state: &Path,
    workspace: &Workspace,
    request: &CommandRequest,
) -> Result<PlannedCommand, String> {
    let pins = PinStore::new(home_state);
    let plan = command::plan(request, &snapshot(workspace.root(), &pins).registry)
        .map_err(|e| e.to_string())?;
    let (program, _cwd) = locate(workspace, &plan)?;
    let wrapped = contain::wrap(&program, &plan.args, plan.isolation, workspace.root());
    Ok(PlannedCommand {
        plan,
        network_isolated: wrapped.network_isolated,
        writes_confined: wrapped.writes_confined,
    })
}

/// Where the plan's program and cwd are on disk, or why they are refused.
pub fn locate(files: &Workspace, plan: &CommandPlan) -> Result<(PathBuf, PathBuf), String> {
    let inside = |raw: &str, want: EntryKind| {
        let resolved = files.resolve(raw);
        resolved.location.filter(|l| {
            !resolved.facts.escapes && matches!(files.kind(l), Ok(Some(k)) if k == want)
        })
    };
    let Some(cwd_location) = inside(&plan.cwd, EntryKind::Directory) else {
        return Err(command::refusal(&format!(
            "Command cwd escapes workspace or is not a directory: {}",
            plan.cwd
        )));
    };
    let program = match &plan.program {
        Program::Wrapper(name) => {
            let wrapper = crate::workspace::child(&cwd_location, name.trim_start_matches("./"));
            let Some(location) = inside(&wrapper, EntryKind::File) else {
                return Err(command::refusal(&format!(
                    "Gradle command profile requires selected wrapper `{name}` in the selected workspace/cwd."
                )));
            };
            files.absolute(&location)
        }
        Program::OnPath(name) => PathBuf::from(name),
        Program::Path(path) if path.starts_with('/') => PathBuf::from(path),
        Program::Path(path) => match inside(path, EntryKind::File) {
            Some(location) => files.absolute(&location),
            None => {
                return Err(command::refusal(&format!(
                    "profile executable not found inside the workspace: {path}"
                )));
            }
        },
    };
    Ok((program, files.absolute(&cwd_location)))
}

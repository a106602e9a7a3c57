//! The project's instruction files' IO (issue 28): each candidate `talos_core::instructions`
//! names is resolved beneath the workspace root and read through the workspace handle (a
//! symlink out, a protected name or a hard link is refused as a read without approval would
//! be); then the user-wide file from the Talos config dir. What is sent, and how it is framed,
//! is the core's.

use std::path::Path;

use talos_core::instructions::{self, Found, Origin};

use crate::config::InstructionsConfig;
use crate::workspace::Workspace;

/// Largest instruction file read at all; the cap on what is sent is `instructions.max_bytes`.
const MAX_READ_BYTES: u64 = 1 << 20;

/// The files found for one turn of a session working from `directory`, read off the async
/// workers, and the cap on what is sent (`instructions.max_bytes`).
pub fn for_turn(
    (config, config_dir): (&InstructionsConfig, Option<&Path>),
    directory: &str,
    files: &Workspace,
) -> (Vec<Found>, usize) {
    let found = crate::offload::blocking(|| gather(files, directory, config, config_dir));
    (
        found,
        usize::try_from(config.max_bytes).unwrap_or(usize::MAX),
    )
}

/// The files found for a session whose directory is `directory` (workspace-relative), root
/// first, then the user's. Files that do not exist are not listed.
pub fn gather(
    files: &Workspace,
    directory: &str,
    config: &InstructionsConfig,
    config_dir: Option<&Path>,
) -> Vec<Found> {
    let mut found: Vec<Found> = instructions::candidates(directory, &config.files)
        .iter()
        .filter_map(|candidate| workspace_file(files, candidate))
        .collect();
    if let Some(dir) = config_dir {
        found.extend(
            config
                .files
                .iter()
                .filter(|name| instructions::plain_name(name))
                .filter_map(|name| user_file(&dir.join(name))),
        );
    }
    found
}

fn workspace_file(files: &Workspace, candidate: &str) -> Option<Found> {
    let resolved = files.resolve(candidate);
    let refused = |problem: String| {
        Some(Found {
            shown: candidate.to_string(),
            origin: Origin::Workspace,
            bytes: Err(problem),
        })
    };
    let shown = match instructions::admit_path(candidate, &resolved.facts) {
        Ok(shown) => shown,
        Err(problem) => return refused(problem),
    };
    let location = resolved.location.as_deref()?;
    match files.read_unshared_limited(location, &shown, MAX_READ_BYTES) {
        Ok(Some(bytes)) => Some(Found {
            shown,
            origin: Origin::Workspace,
            bytes: Ok(bytes),
        }),
        Ok(None) => None,
        Err(e) => refused(format!("instructions {shown} not read: {e}")),
    }
}

fn user_file(path: &Path) -> Option<Found> {
    let shown = path.display().to_string();
    let (Some(folder), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
    else {
        return None;
    };
    // Through a handle on its folder: the file is read only as a regular file, never a link.
    let folder = crate::home::Store::new(crate::home::Root::existing(folder.to_path_buf()), ".");
    let bytes = match folder.read(name, MAX_READ_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => Err(format!("instructions {shown} not read: {e}")),
    };
    Some(Found {
        shown,
        origin: Origin::User,
        bytes,
    })
}

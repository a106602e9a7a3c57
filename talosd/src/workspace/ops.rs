//! Typed workspace operations on the disk (mkdir, move, copy, rename, delete): checked against
//! the disk before approval (`plan`), applied with every path resolved again at the moment of
//! IO (`apply`), and verified by their postconditions (`verify`). Which operations a call
//! carries, and what is asked and recorded, is the turn's business; this is only the IO.

use talos_core::ops::{self, WorkspaceOp};

use super::{EntryKind, Workspace};

/// A path inside the workspace: what users see, and the location IO uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub shown: String,
    pub location: String,
}

/// An op with every path resolved inside the workspace.
#[derive(Debug, Clone)]
pub struct Planned {
    pub op: WorkspaceOp,
    /// The op's source (or only) path.
    pub source: Placed,
    /// The destination of move, copy and rename.
    pub destination: Option<Placed>,
}

impl Planned {
    /// Every path the op touches, source first.
    pub fn touched(&self) -> Vec<Placed> {
        let mut out = vec![self.source.clone()];
        out.extend(self.destination.clone());
        out
    }
}

/// Whether `inner` is `outer` or beneath it.
fn within(inner: &str, outer: &str) -> bool {
    outer == "."
        || inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Workspace {
    /// Resolves `raw` to a place inside the workspace, or the refusal users see.
    pub fn place(&self, raw: &str) -> Result<Placed, String> {
        let resolved = self.resolve(raw);
        match (resolved.facts.escapes, resolved.location) {
            (false, Some(location)) => Ok(Placed {
                shown: resolved.facts.relative.unwrap_or_else(|| raw.to_string()),
                location,
            }),
            _ => Err(format!(
                "Path not allowed: {raw} ({})",
                resolved
                    .facts
                    .problem
                    .unwrap_or_else(|| "outside the workspace".into())
            )),
        }
    }

    /// Resolves and checks one op against the disk as it is now. Errors end in the usual
    /// "No approval was requested" sentence at the call site.
    pub fn plan(&self, op: &WorkspaceOp) -> Result<Planned, String> {
        let kind = |p: &Placed| self.kind(&p.location).ok().flatten();
        let planned = match op {
            WorkspaceOp::Mkdir { path } => {
                let source = self.place(path)?;
                if kind(&source).is_some_and(|k| k != EntryKind::Directory) {
                    return Err(format!(
                        "Destination already exists and is not a directory: {}",
                        source.shown
                    ));
                }
                Planned {
                    op: op.clone(),
                    source,
                    destination: None,
                }
            }
            WorkspaceOp::Move {
                from,
                to,
                overwrite,
            }
            | WorkspaceOp::Copy {
                from,
                to,
                overwrite,
                ..
            } => {
                let source = self.place(from)?;
                let destination = self.place(to)?;
                self.check_transfer(op, &source, &destination, *overwrite)?;
                Planned {
                    op: op.clone(),
                    source,
                    destination: Some(destination),
                }
            }
            WorkspaceOp::Rename {
                path,
                new_name,
                overwrite,
            } => {
                if !ops::is_single_segment(new_name) {
                    return Err("new_name must be a single path segment".into());
                }
                let source = self.place(path)?;
                let destination = self.place(&ops::renamed_path(path, new_name))?;
                self.check_transfer(op, &source, &destination, *overwrite)?;
                Planned {
                    op: op.clone(),
                    source,
                    destination: Some(destination),
                }
            }
            WorkspaceOp::Delete { path, recursive } => {
                let source = self.place(path)?;
                if source.location == "." {
                    return Err("Refusing to delete the workspace root.".into());
                }
                let Some(found) = kind(&source) else {
                    return Err(format!("Path not found: {}", source.shown));
                };
                if found == EntryKind::Directory && !recursive {
                    return Err(format!(
                        "{} is a directory; set recursive=true to delete it",
                        source.shown
                    ));
                }
                Planned {
                    op: op.clone(),
                    source,
                    destination: None,
                }
            }
        };
        Ok(planned)
    }

    fn check_transfer(
        &self,
        op: &WorkspaceOp,
        source: &Placed,
        destination: &Placed,
        overwrite: bool,
    ) -> Result<(), String> {
        let found = self
            .kind(&source.location)
            .ok()
            .flatten()
            .ok_or_else(|| format!("Source not found: {}", source.shown))?;
        if source.location == "." {
            return Err("Refusing to move or copy the workspace root.".into());
        }
        let is_dir = found == EntryKind::Directory;
        if is_dir && within(&destination.location, &source.location) {
            return Err(format!("Refusing to put {} inside itself", source.shown));
        }
        if let WorkspaceOp::Copy {
            recursive: false, ..
        } = op
            && is_dir
        {
            return Err(format!(
                "{} is a directory; set recursive=true to copy it",
                source.shown
            ));
        }
        if self.exists(&destination.location) && !overwrite {
            return Err(format!(
                "Destination already exists: {}. Set overwrite=true to replace it.",
                destination.shown
            ));
        }
        Ok(())
    }

    /// Applies one op, resolving every path again at the moment of IO.
    pub fn apply(&self, p: &Planned) -> Result<(), String> {
        let again = |placed: &Placed| -> Result<String, String> {
            let now = self.place(&placed.shown)?;
            if now.location != placed.location {
                return Err(format!("{} changed after it was approved", placed.shown));
            }
            Ok(now.location)
        };
        let io = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", p.source.shown);
        let source = again(&p.source)?;
        match &p.op {
            WorkspaceOp::Mkdir { .. } => self.create_dir_all(&source).map_err(|e| io("create", e)),
            WorkspaceOp::Delete { .. } => self.remove(&source).map_err(|e| io("delete", e)),
            WorkspaceOp::Move { overwrite, .. } | WorkspaceOp::Rename { overwrite, .. } => {
                let destination = again(p.destination.as_ref().ok_or("no destination")?)?;
                self.prepare_destination(&destination, *overwrite)
                    .map_err(|e| io("replace the destination of", e))?;
                self.rename(&source, &destination)
                    .map_err(|e| io("move", e))
            }
            WorkspaceOp::Copy { overwrite, .. } => {
                let destination = again(p.destination.as_ref().ok_or("no destination")?)?;
                self.prepare_destination(&destination, *overwrite)
                    .map_err(|e| io("replace the destination of", e))?;
                self.copy_tree(&source, &destination)
                    .map_err(|e| io("copy", e))
            }
        }
    }

    /// Makes the destination's parents and, with `overwrite`, removes what is there.
    fn prepare_destination(&self, destination: &str, overwrite: bool) -> std::io::Result<()> {
        if let Some((parent, _)) = destination.rsplit_once('/') {
            self.create_dir_all(parent)?;
        }
        match self.kind(destination)? {
            Some(_) if overwrite => self.remove(destination),
            Some(_) => Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "destination exists",
            )),
            None => Ok(()),
        }
    }

    /// The op's postcondition, read back from the disk.
    pub fn verify(&self, p: &Planned) -> Result<String, String> {
        let kind = |location: &str| self.kind(location).ok().flatten();
        let exists = |location: &str| kind(location).is_some();
        let (shown, source) = (&p.source.shown, p.source.location.as_str());
        match (&p.op, p.destination.as_ref()) {
            (WorkspaceOp::Mkdir { .. }, _) if kind(source) == Some(EntryKind::Directory) => {
                Ok(format!("Created directory {shown}"))
            }
            (WorkspaceOp::Delete { .. }, _) if !exists(source) => Ok(format!("Deleted {shown}")),
            (WorkspaceOp::Move { .. } | WorkspaceOp::Rename { .. }, Some(to))
                if !exists(source) && exists(&to.location) =>
            {
                Ok(format!("Moved {shown} -> {}", to.shown))
            }
            (WorkspaceOp::Copy { .. }, Some(to)) if exists(&to.location) => {
                Ok(format!("Copied {shown} -> {}", to.shown))
            }
            _ => Err(format!(
                "the {} of {shown} did not take effect on disk",
                p.op.name()
            )),
        }
    }
}

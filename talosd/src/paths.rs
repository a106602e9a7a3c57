//! Where Talos keeps things: the home (config and state) and the daemon's socket.
//!
//! `TALOS_HOME=DIR` puts everything under one folder: `DIR/config.yaml`, state folders, and
//! the socket at `DIR/run/talosd.sock`. Without it, config and data follow the XDG base
//! directories: config in `$XDG_CONFIG_HOME/talos/`, traces, checkpoints and sessions in
//! `$XDG_DATA_HOME/talos/`, the logs in `$XDG_STATE_HOME/talos/logs/` and the workspace indexes
//! (a cache: rebuilt when missing) in `$XDG_CACHE_HOME/talos/index/`. Logs and indexes found in
//! their old place under the data folder are moved once ([`Home::move_old_places`]). The
//! socket lives in `$XDG_RUNTIME_DIR/talos/`, else in a private `talos-$UID` folder in the temp
//! dir (that rule is `talos_protocol::socket::default_socket_path`, shared with the CLI).
//!
//! Every store of the home is reached through the home's handle (`crate::home`): the state
//! folder, and the logs and index folders when they live outside it, are each opened once and
//! every store is a location beneath one of them ([`Home::traces`] and the rest).
// std::fs here: moves the logs and indexes from where earlier versions kept them, once, across
// the home's roots (before any handle on them is used).
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::home::{Root, Store};

/// The per-user folders the daemon reads and writes.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
    pub config_file: PathBuf,
    pub state: PathBuf,
    /// The daemon's and llama-server's logs (`$XDG_STATE_HOME/talos/logs`).
    logs_dir: PathBuf,
    /// The workspace indexes (`$XDG_CACHE_HOME/talos/index`).
    index_dir: PathBuf,
    /// The handles: the state folder's, and the logs' and the index's stores (beneath the
    /// state folder's handle when they live inside it, as under `TALOS_HOME`).
    handles: Arc<Handles>,
}

#[derive(Debug)]
struct Handles {
    state: Arc<Root>,
    logs: Store,
    index: Store,
}

impl Handles {
    fn new(state: &Path, logs: &Path, index: &Path) -> Arc<Handles> {
        let state_root = Root::new(state.to_path_buf());
        let store = |dir: &Path| match dir.strip_prefix(state).ok().and_then(Path::to_str) {
            Some(inside) if !inside.is_empty() => Store::new(Arc::clone(&state_root), inside),
            _ => Store::new(Root::new(dir.to_path_buf()), "."),
        };
        let (logs, index) = (store(logs), store(index));
        Arc::new(Handles {
            state: state_root,
            logs,
            index,
        })
    }
}

/// One folder [`Home::move_old_places`] dealt with: moved, or (an index on another
/// filesystem, which is a cache) removed to be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OldPlace {
    Moved { from: PathBuf, to: PathBuf },
    Removed { from: PathBuf, why: String },
    Kept { from: PathBuf, why: String },
}

impl std::fmt::Display for OldPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OldPlace::Moved { from, to } => {
                write!(f, "moved {} to {}", from.display(), to.display())
            }
            OldPlace::Removed { from, why } => write!(f, "removed {}: {why}", from.display()),
            OldPlace::Kept { from, why } => write!(f, "left {} in place: {why}", from.display()),
        }
    }
}

impl Home {
    /// Resolves the home from the environment values given (so tests can pass their own).
    pub fn resolve(talos_home: Option<&str>) -> Home {
        if let Some(dir) = talos_home.filter(|d| !d.is_empty()) {
            return Home::from_root(Path::new(dir));
        }
        match directories::ProjectDirs::from("dev", "talos", "talos") {
            Some(dirs) => {
                let data = dirs.data_dir().to_path_buf();
                let logs_dir = dirs.state_dir().unwrap_or(&data).join("logs");
                let index_dir = dirs.cache_dir().join("index");
                Home {
                    config_file: dirs.config_dir().join("config.yaml"),
                    handles: Handles::new(&data, &logs_dir, &index_dir),
                    logs_dir,
                    index_dir,
                    state: data.clone(),
                    root: data,
                }
            }
            None => Home::from_root(&std::env::temp_dir().join("talos-home")),
        }
    }

    /// Everything under one folder (`TALOS_HOME`).
    pub fn from_root(root: &Path) -> Home {
        let (logs_dir, index_dir) = (root.join("logs"), root.join("index"));
        Home {
            root: root.to_path_buf(),
            config_file: root.join("config.yaml"),
            state: root.to_path_buf(),
            handles: Handles::new(root, &logs_dir, &index_dir),
            logs_dir,
            index_dir,
        }
    }

    /// Moves the logs and the indexes from where earlier versions kept them (`logs/` and
    /// `index/` in the data folder) to their XDG places, once: a folder is moved only when the
    /// new place does not exist yet, so a second start finds nothing to do. An index that
    /// cannot be renamed (another filesystem) is removed, since it is rebuilt on demand; logs
    /// that cannot be renamed stay where they are. Nothing happens under `TALOS_HOME`.
    pub fn move_old_places(&self) -> Vec<OldPlace> {
        use std::os::unix::fs::DirBuilderExt;
        let mut done = Vec::new();
        for (old, new, cache) in [
            (self.state.join("logs"), &self.logs_dir, false),
            (self.state.join("index"), &self.index_dir, true),
        ] {
            let is_dir = std::fs::symlink_metadata(&old).is_ok_and(|m| m.is_dir());
            if old == *new || !is_dir || std::fs::symlink_metadata(new).is_ok() {
                continue;
            }
            let parent_made = new.parent().map_or(Ok(()), |parent| {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
            });
            match parent_made.and_then(|()| std::fs::rename(&old, new)) {
                Ok(()) => done.push(OldPlace::Moved {
                    from: old,
                    to: new.clone(),
                }),
                Err(error) if cache => match std::fs::remove_dir_all(&old) {
                    Ok(()) => done.push(OldPlace::Removed {
                        from: old,
                        why: format!(
                            "cannot move it to {} ({error}); it is rebuilt",
                            new.display()
                        ),
                    }),
                    Err(removing) => done.push(OldPlace::Kept {
                        from: old,
                        why: format!("cannot move it ({error}) or remove it ({removing})"),
                    }),
                },
                Err(error) => done.push(OldPlace::Kept {
                    from: old,
                    why: format!("cannot move it to {} ({error})", new.display()),
                }),
            }
        }
        done
    }

    /// Creates the state folders private to this user (0700): traces and checkpoints hold
    /// paths and file contents.
    pub fn prepare(&self) -> std::io::Result<()> {
        for store in [
            self.state_store(),
            self.traces(),
            self.checkpoints(),
            self.logs(),
        ] {
            store.make_private(".")?;
        }
        Ok(())
    }

    /// The state folder itself (the home lock lives there).
    pub fn state_store(&self) -> Store {
        Store::new(Arc::clone(&self.handles.state), ".")
    }
    pub fn traces(&self) -> Store {
        self.state_store().child("traces")
    }
    pub fn checkpoints(&self) -> Store {
        self.state_store().child("checkpoints")
    }
    /// Entries for workspace writes in flight (see `workspace::PendingLog`).
    pub fn pending_writes(&self) -> Store {
        self.state_store().child("pending-writes")
    }
    /// Persisted sessions (`session_store`).
    pub fn sessions(&self) -> Store {
        self.state_store().child("sessions")
    }
    /// The profile pins of trusted workspaces (`profiles::PinStore`).
    pub fn pins(&self) -> Store {
        self.state_store().child("trust/workspace-profiles")
    }
    /// The workspace indexes (`crate::index`), one folder per workspace.
    pub fn index(&self) -> Store {
        self.handles.index.clone()
    }
    pub fn logs(&self) -> Store {
        self.handles.logs.clone()
    }
}

//! Where Talos keeps things: the home (config and state) and the daemon's socket.
//!
//! `TALOS_HOME=DIR` puts everything under one folder: `DIR/config.yaml`, state folders, and
//! the socket at `DIR/run/talosd.sock`. Without it, config and data follow the platform's
//! per-user folders and the socket lives in `$XDG_RUNTIME_DIR/talos/`, else in a private
//! `talos-$UID` folder in the temp dir (that rule is `talos_protocol::socket::default_socket_path`,
//! shared with the CLI).
// std::fs here: creates the Talos home's state folders, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

/// The per-user folders the daemon reads and writes.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
    pub config_file: PathBuf,
    pub state: PathBuf,
}

impl Home {
    /// Resolves the home from the environment values given (so tests can pass their own).
    pub fn resolve(talos_home: Option<&str>) -> Home {
        if let Some(dir) = talos_home.filter(|d| !d.is_empty()) {
            let root = PathBuf::from(dir);
            return Home {
                config_file: root.join("config.yaml"),
                state: root.clone(),
                root,
            };
        }
        match directories::ProjectDirs::from("dev", "talos", "talos") {
            Some(dirs) => Home {
                root: dirs.data_dir().to_path_buf(),
                config_file: dirs.config_dir().join("config.yaml"),
                state: dirs.data_dir().to_path_buf(),
            },
            None => {
                let root = std::env::temp_dir().join("talos-home");
                Home {
                    config_file: root.join("config.yaml"),
                    state: root.clone(),
                    root,
                }
            }
        }
    }

    pub fn from_root(root: &Path) -> Home {
        Home {
            root: root.to_path_buf(),
            config_file: root.join("config.yaml"),
            state: root.to_path_buf(),
        }
    }

    /// Creates the state folders private to this user (0700): traces and checkpoints hold
    /// paths and file contents.
    pub fn prepare(&self) -> std::io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        for dir in [
            self.state.clone(),
            self.traces(),
            self.checkpoints(),
            self.logs(),
        ] {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)?;
            let mode = std::fs::metadata(&dir)?.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
            }
        }
        Ok(())
    }

    pub fn traces(&self) -> PathBuf {
        self.state.join("traces")
    }
    pub fn checkpoints(&self) -> PathBuf {
        self.state.join("checkpoints")
    }
    /// Entries for workspace writes in flight (see `workspace::PendingLog`).
    pub fn pending_writes(&self) -> PathBuf {
        self.state.join("pending-writes")
    }
    /// Persisted sessions (`session_store`).
    pub fn sessions(&self) -> PathBuf {
        self.state.join("sessions")
    }
    /// The workspace indexes (`crate::index`), one folder per workspace.
    pub fn index(&self) -> PathBuf {
        self.state.join("index")
    }
    pub fn logs(&self) -> PathBuf {
        self.state.join("logs")
    }
}

//! Where the daemon's socket is when nobody names one: the single rule that `talosd` and the
//! `talos` CLI both call, as a pure function of the environment facts they read (this crate does
//! no IO, so each binary reads its own environment and passes the values in). [`trust`] holds the
//! rules for when the socket's directory, the socket and the process behind it are the user's.

pub mod trust;

use std::path::{Path, PathBuf};

/// The file name of the daemon's socket inside its directory.
pub const SOCKET_FILE_NAME: &str = "talosd.sock";

/// The environment facts the default socket path depends on, read by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketEnv {
    /// `$TALOS_HOME`, when set; an empty value counts as unset.
    pub talos_home: Option<String>,
    /// `$XDG_RUNTIME_DIR`, when set; an empty value counts as unset.
    pub xdg_runtime_dir: Option<String>,
    /// The system temp directory (`$TMPDIR`, else `/tmp`), as `std::env::temp_dir` gives it.
    pub temp_dir: PathBuf,
    /// The effective uid of the process, naming the private `talos-<uid>` directory.
    pub uid: u32,
}

/// The socket path when `--socket` is not given, first match wins:
/// `$TALOS_HOME/run/talosd.sock`, else `$XDG_RUNTIME_DIR/talos/talosd.sock`, else
/// `<temp>/talos-<uid>/talosd.sock`. Empty variables count as unset.
pub fn default_socket_path(env: &SocketEnv) -> PathBuf {
    let non_empty = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
    if let Some(home) = non_empty(&env.talos_home) {
        return Path::new(&home).join("run").join(SOCKET_FILE_NAME);
    }
    if let Some(runtime) = non_empty(&env.xdg_runtime_dir) {
        return Path::new(&runtime).join("talos").join(SOCKET_FILE_NAME);
    }
    env.temp_dir
        .join(format!("talos-{}", env.uid))
        .join(SOCKET_FILE_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(talos_home: Option<&str>, xdg_runtime_dir: Option<&str>, uid: u32, expected: &str) {
        let env = SocketEnv {
            talos_home: talos_home.map(String::from),
            xdg_runtime_dir: xdg_runtime_dir.map(String::from),
            temp_dir: PathBuf::from("/tmp"),
            uid,
        };
        assert_eq!(
            default_socket_path(&env),
            PathBuf::from(expected),
            "{env:?}"
        );
    }

    /// Proves the default socket follows TALOS_HOME, then XDG_RUNTIME_DIR, then the temp dir,
    /// with empty variables counted as unset.
    #[test]
    fn socket_path_rows() {
        check(Some("/h"), Some("/run/user/1"), 1, "/h/run/talosd.sock");
        check(
            None,
            Some("/run/user/1"),
            1,
            "/run/user/1/talos/talosd.sock",
        );
        check(Some(""), None, 7, "/tmp/talos-7/talosd.sock");
        check(
            Some(""),
            Some("/run/user/1000"),
            1000,
            "/run/user/1000/talos/talosd.sock",
        );
        check(None, Some(""), 1000, "/tmp/talos-1000/talosd.sock");
        check(None, None, 1000, "/tmp/talos-1000/talosd.sock");
    }
}

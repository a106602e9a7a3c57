//! Which Talos sessions an ACP session has been (issue 26, defect 6). `session/set_mode` moves
//! an editor's session to a new Talos session in the chosen mode (one that continues the
//! conversation), so the editor's id and the session that holds its latest turns part ways.
//! The bridge writes the chain, oldest first, to `<home>/acp/<editor's id>.json` (the home the
//! daemon reports in `daemon/status`) each time it grows; `session/load` resumes the last one,
//! in its mode, and replays the turns of every session in the chain.
//!
//! An editor's id is used as a file name only when it is a Talos session id (`ses-` and 32
//! lowercase hex digits); anything else has no chain. The files are written whole (a temporary
//! file, then a rename) in a 0700 folder, readable by the user only.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The chains of one Talos home.
#[derive(Debug, Clone)]
pub struct Links {
    dir: PathBuf,
}

/// Whether `id` is a Talos session id, so it can name a file.
fn is_session_id(id: &str) -> bool {
    id.strip_prefix("ses-").is_some_and(|hex| {
        hex.len() == 32
            && hex
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    })
}

impl Links {
    pub fn in_home(home: &Path) -> Links {
        Links {
            dir: home.join("acp"),
        }
    }

    fn path(&self, acp_id: &str) -> Option<PathBuf> {
        is_session_id(acp_id).then(|| self.dir.join(format!("{acp_id}.json")))
    }

    /// The chain of `acp_id`, oldest first: `[acp_id]` when none was written (or it cannot be
    /// read, or names something that is not a session id).
    pub fn chain(&self, acp_id: &str) -> Vec<String> {
        let read = self
            .path(acp_id)
            .and_then(|path| std::fs::read_to_string(path).ok())
            .and_then(|text| serde_json::from_str::<Vec<String>>(&text).ok())
            .filter(|chain| chain.first().map(String::as_str) == Some(acp_id))
            .filter(|chain| chain.iter().all(|id| is_session_id(id)));
        read.unwrap_or_else(|| vec![acp_id.to_string()])
    }

    /// Appends `talos_id` to the chain of `acp_id` and writes it.
    pub fn extend(&self, acp_id: &str, talos_id: &str) -> std::io::Result<()> {
        let Some(path) = self.path(acp_id) else {
            return Ok(());
        };
        let mut chain = self.chain(acp_id);
        if chain.last().map(String::as_str) != Some(talos_id) {
            chain.push(talos_id.to_string());
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let temporary = path.with_extension("json.tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(serde_json::to_string(&chain)?.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "ses-0123456789abcdef0123456789abcdef";
    const B: &str = "ses-fedcba9876543210fedcba9876543210";

    #[test]
    fn a_chain_grows_and_is_read_back_and_foreign_ids_have_none() {
        let home = tempfile::tempdir().unwrap();
        let links = Links::in_home(home.path());
        assert_eq!(links.chain(A), [A]);
        links.extend(A, B).unwrap();
        links.extend(A, B).unwrap();
        assert_eq!(links.chain(A), [A, B]);
        for hostile in ["../../etc/passwd", "ses-../x", "", "ses-0123"] {
            links.extend(hostile, B).unwrap();
            assert_eq!(links.chain(hostile), [hostile]);
        }
        let files: Vec<_> = std::fs::read_dir(home.path().join("acp"))
            .unwrap()
            .collect();
        assert_eq!(files.len(), 1, "only the session id named a file");
        std::fs::write(home.path().join(format!("acp/{A}.json")), "[\"ses-x\"]").unwrap();
        assert_eq!(
            links.chain(A),
            [A],
            "a chain that does not start at the id is ignored"
        );
    }
}

//! Which Talos sessions an ACP session has been (issue 26, defect 6). `session/set_mode` moves
//! an editor's session to a new Talos session in the chosen mode (one that continues the
//! conversation), so the editor's id and the session that holds its latest turns part ways.
//! The bridge writes the chain, oldest first, with the workspace it belongs to, to
//! `<home>/acp/<editor's id>.json` (the home the daemon reports in `daemon/status`) each time it
//! grows; `session/load` resumes the last one, in its mode, and replays the turns of every
//! session in the chain.
//!
//! An editor's id is used as a file name only when it is a Talos session id (`ses-` and 32
//! lowercase hex digits); anything else has no chain. The files are written whole (a temporary
//! file, then a rename) in a 0700 folder, readable by the user only. Nothing read back is
//! trusted: the folder and the file are opened through a handle on the folder, never through a
//! link, without waiting (a FIFO cannot hang the read), and only a regular file of this user
//! of at most [`MAX_BYTES`] is read; a chain written for another workspace is not used.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

/// A larger chain file is not read: a chain is a few session ids.
pub const MAX_BYTES: u64 = 64 * 1024;

/// The chains of one Talos home.
#[derive(Debug, Clone)]
pub struct Links {
    dir: PathBuf,
}

/// What a chain file holds.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    /// The canonical workspace the editor's session is on.
    workspace: String,
    /// The Talos sessions, oldest first; the first is the editor's id.
    chain: Vec<String>,
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

    fn name(acp_id: &str) -> Option<String> {
        is_session_id(acp_id).then(|| format!("{acp_id}.json"))
    }

    /// The chain of `acp_id` on `workspace`, oldest first: `[acp_id]` when none was written
    /// for that workspace (or it cannot be read safely, or names something that is not a
    /// session id).
    pub fn chain(&self, acp_id: &str, workspace: &str) -> Vec<String> {
        let read = Links::name(acp_id)
            .and_then(|name| self.read(&name))
            .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
            .filter(|record| record.workspace == workspace)
            .map(|record| record.chain)
            .filter(|chain| chain.first().map(String::as_str) == Some(acp_id))
            .filter(|chain| chain.iter().all(|id| is_session_id(id)));
        read.unwrap_or_else(|| vec![acp_id.to_string()])
    }

    /// Appends `talos_id` to the chain of `acp_id` on `workspace` and writes it.
    pub fn extend(&self, acp_id: &str, workspace: &str, talos_id: &str) -> std::io::Result<()> {
        let Some(name) = Links::name(acp_id) else {
            return Ok(());
        };
        let mut chain = self.chain(acp_id, workspace);
        if chain.last().map(String::as_str) != Some(talos_id) {
            chain.push(talos_id.to_string());
        }
        let record = Record {
            workspace: workspace.to_string(),
            chain,
        };
        std::fs::create_dir_all(self.dir.parent().unwrap_or(&self.dir))?;
        match rustix::fs::mkdir(&self.dir, Mode::RWXU) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let dir = self.open_dir()?;
        let temporary = format!("{name}.tmp");
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::TRUNC
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, temporary.as_str(), flags, Mode::RUSR | Mode::WUSR)?;
        if !rustix::fs::fstat(&fd).is_ok_and(|s| regular(s.st_mode)) {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file",
                self.dir.join(&temporary).display()
            )));
        }
        let mut file = std::fs::File::from(fd);
        file.write_all(serde_json::to_string(&record)?.as_bytes())?;
        file.sync_all()?;
        rustix::fs::renameat(&dir, temporary.as_str(), &dir, name.as_str())?;
        Ok(())
    }

    /// The folder, never through a link.
    fn open_dir(&self) -> std::io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(rustix::fs::open(&self.dir, flags, Mode::empty())?)
    }

    /// The bytes of `name` in the folder when it is a regular file of this user, not a link,
    /// of at most [`MAX_BYTES`]; opened without blocking, so a FIFO is refused, not waited on.
    fn read(&self, name: &str) -> Option<Vec<u8>> {
        let dir = self.open_dir().ok()?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, name, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        let own = stat.st_uid == rustix::process::geteuid().as_raw();
        let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
        if !regular(stat.st_mode) || !own || size > MAX_BYTES {
            return None;
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd)
            .take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        (bytes.len() as u64 <= MAX_BYTES).then_some(bytes)
    }
}

fn regular(mode: rustix::fs::RawMode) -> bool {
    rustix::fs::FileType::from_raw_mode(mode) == rustix::fs::FileType::RegularFile
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "ses-0123456789abcdef0123456789abcdef";
    const B: &str = "ses-fedcba9876543210fedcba9876543210";
    const WS: &str = "/work/project";

    #[test]
    fn a_chain_grows_and_is_read_back_and_foreign_ids_have_none() {
        let home = tempfile::tempdir().unwrap();
        let links = Links::in_home(home.path());
        assert_eq!(links.chain(A, WS), [A]);
        links.extend(A, WS, B).unwrap();
        links.extend(A, WS, B).unwrap();
        assert_eq!(links.chain(A, WS), [A, B]);
        assert_eq!(
            links.chain(A, "/elsewhere"),
            [A],
            "another workspace's chain"
        );
        for hostile in ["../../etc/passwd", "ses-../x", "", "ses-0123"] {
            links.extend(hostile, WS, B).unwrap();
            assert_eq!(links.chain(hostile, WS), [hostile]);
        }
        let files: Vec<_> = std::fs::read_dir(home.path().join("acp"))
            .unwrap()
            .collect();
        assert_eq!(files.len(), 1, "only the session id named a file");
        let file = home.path().join(format!("acp/{A}.json"));
        std::fs::write(
            &file,
            format!("{{\"workspace\":\"{WS}\",\"chain\":[\"ses-x\"]}}"),
        )
        .unwrap();
        assert_eq!(
            links.chain(A, WS),
            [A],
            "a chain that does not start at the id is ignored"
        );
        std::fs::write(&file, format!("[\"{A}\",\"{B}\"]")).unwrap();
        assert_eq!(links.chain(A, WS), [A], "a chain without its workspace");
    }

    /// A FIFO, a link to `/dev/zero` and an oversized file in place of a chain: each is read
    /// as no chain, at once and within the bound.
    #[test]
    fn hostile_chain_files_are_refused_without_blocking_or_growing() {
        let home = tempfile::tempdir().unwrap();
        let links = Links::in_home(home.path());
        links.extend(A, WS, B).unwrap();
        let file = home.path().join(format!("acp/{A}.json"));
        std::fs::remove_file(&file).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, &file, Mode::RUSR | Mode::WUSR).unwrap();
        assert_eq!(links.chain(A, WS), [A], "a FIFO");
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        assert_eq!(links.chain(A, WS), [A], "a link to /dev/zero");
        std::fs::remove_file(&file).unwrap();
        let padded = format!(
            "{{\"workspace\":\"{WS}\",\"chain\":[\"{A}\",\"{B}\"]}}{}",
            " ".repeat(MAX_BYTES as usize)
        );
        std::fs::write(&file, padded).unwrap();
        assert_eq!(links.chain(A, WS), [A], "over the size bound");
        std::fs::remove_file(&file).unwrap();
        links.extend(A, WS, B).unwrap();
        assert_eq!(links.chain(A, WS), [A, B]);
        let outside = tempfile::tempdir().unwrap();
        std::fs::rename(home.path().join("acp"), outside.path().join("acp")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("acp"), home.path().join("acp")).unwrap();
        assert_eq!(links.chain(A, WS), [A], "the folder through a link");
        assert!(links.extend(A, WS, B).is_err(), "nor written through one");
    }
}

//! What `talosd --doctor` looks at: the server binary, the model file, the template, the port
//! and the home's disk use. Reads only; nothing here changes a file.

use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::judge::{Disk, ModelFile, PortHolder, Server, Template};

pub fn server(path: &str, timeout: Duration) -> Server {
    match std::fs::metadata(path) {
        Err(_) if std::fs::symlink_metadata(path).is_ok() => Server::NotAFile,
        Err(_) => Server::Missing,
        Ok(meta) if !meta.is_file() => Server::NotAFile,
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => Server::NotExecutable,
        Ok(_) => match crate::supervisor::server_version(path, timeout) {
            Ok(version) => Server::Runs(version),
            Err(why) => Server::Broken(why),
        },
    }
}

/// The model file: its size, whether it starts with the GGUF magic, and (when `hash`) its
/// SHA-256, read in 1 MiB blocks.
pub fn model(path: &str, hash: bool) -> ModelFile {
    match std::fs::metadata(path) {
        Err(_) if std::fs::symlink_metadata(path).is_ok() => return ModelFile::NotAFile,
        Err(_) => return ModelFile::Missing,
        Ok(meta) if !meta.is_file() => return ModelFile::NotAFile,
        Ok(_) => {}
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path);
    let mut file = match opened {
        Ok(file) => file,
        Err(e) => return ModelFile::Unreadable(e.to_string()),
    };
    let size = match file.metadata() {
        Ok(meta) if meta.is_file() => meta.len(),
        Ok(_) => return ModelFile::NotAFile,
        Err(e) => return ModelFile::Unreadable(e.to_string()),
    };
    let mut hasher = Sha256::new();
    let mut head = Vec::with_capacity(4);
    let mut block = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => return ModelFile::Unreadable(e.to_string()),
        };
        if head.len() < 4 {
            let take = (4 - head.len()).min(n);
            head.extend_from_slice(&block[..take]);
        }
        if !hash {
            if head.len() >= 4 {
                break;
            }
            continue;
        }
        hasher.update(&block[..n]);
    }
    let sha256 = hash.then(|| {
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    });
    ModelFile::Present {
        size,
        gguf: head == b"GGUF",
        sha256,
    }
}

pub fn template(path: &str) -> Template {
    if path.is_empty() {
        Template::Unset
    } else if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        Template::Present
    } else {
        Template::Missing
    }
}

/// Who listens on 127.0.0.1:`port`: nobody, the server this home launched (its launch
/// `record` names it), or another process.
pub fn port(port: u16, record: &Path) -> PortHolder {
    if !crate::engine::port_has_listener(port) {
        return PortHolder::Free;
    }
    if let Some(pid) = crate::supervisor::recorded_listener(record, port) {
        return PortHolder::Ours(pid);
    }
    let pid = crate::supervisor::listener_pid(port).ok();
    let program = pid.and_then(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .ok()
            .map(|s| s.trim().to_string())
    });
    PortHolder::Other { pid, program }
}

/// The home's parts (the index and the logs where they are, which may be outside the data
/// folder) and the free space on the data folder's filesystem. Symlinks are counted as links,
/// never followed.
pub fn disk(home: &crate::paths::Home) -> Disk {
    let state = home.state.as_path();
    let places = [
        ("traces", home.traces().path()),
        ("checkpoints", home.checkpoints().path()),
        ("sessions", home.sessions().path()),
        ("index", home.index().path()),
        ("logs", home.logs().path()),
    ];
    let mut parts: Vec<(&'static str, u64)> = places
        .iter()
        .map(|(part, dir)| (*part, tree_bytes(dir)))
        .collect();
    let inside: u64 = places
        .iter()
        .zip(&parts)
        .filter(|((_, dir), _)| dir.starts_with(state))
        .map(|(_, (_, n))| n)
        .sum();
    let other = tree_bytes(state).saturating_sub(inside);
    parts.push(("other", other));
    let free = state
        .ancestors()
        .find(|dir| dir.exists())
        .and_then(|dir| rustix::fs::statvfs(dir).ok())
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize));
    Disk {
        home: state.display().to_string(),
        parts,
        free,
    }
}

/// Bytes of the regular files under `dir`, not following symlinks.
fn tree_bytes(dir: &Path) -> u64 {
    if !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return 0;
    }
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

//! The workspace boundary: every path is resolved against the workspace root before any
//! decision, and again at the moment of IO. `..` above the root, absolute and home paths,
//! symlinks whose target (or any parent's) leaves the root, backslashes, NUL and control
//! characters all fail closed. Writes go through a new file opened without following links,
//! then an atomic rename.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use talos_core::ladder::PathFacts;
use talos_core::protected::protected_kind;

/// Largest file Talos reads or replaces.
pub const MAX_FILE_BYTES: u64 = 2 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub facts: PathFacts,
    /// The absolute location inside the workspace, symlinks resolved, when the path is inside.
    pub absolute: Option<PathBuf>,
    /// The last component is itself a symlink (inside the workspace); writes refuse it.
    pub final_is_symlink: bool,
}

fn refused(raw: &str, problem: &str) -> Resolved {
    Resolved {
        facts: PathFacts {
            relative: Some(raw.to_string()),
            escapes: true,
            problem: Some(problem.to_string()),
            protected: protected_kind(raw),
        },
        absolute: None,
        final_is_symlink: false,
    }
}

/// Resolves `raw` against `root` (which must already be canonical).
pub fn resolve(root: &Path, raw: &str) -> Resolved {
    if let Some(problem) = talos_core::check::lexical_path_problem(raw) {
        return refused(raw, problem);
    }
    if raw.contains('\\') {
        return refused(raw, "backslash in path");
    }
    if raw.starts_with('/') {
        return refused(raw, "absolute path");
    }
    if raw.starts_with('~') {
        return refused(raw, "home-relative path");
    }
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(raw).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str().unwrap_or_default()),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return refused(raw, "path leaves the workspace through `..`");
                }
            }
            Component::RootDir | Component::Prefix(_) => return refused(raw, "absolute path"),
        }
    }
    let lexical_relative = parts.join("/");
    let mut current = root.to_path_buf();
    let mut final_is_symlink = false;
    for (i, part) in parts.iter().enumerate() {
        let candidate = current.join(part);
        match std::fs::symlink_metadata(&candidate) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                for rest in &parts[i..] {
                    current.push(rest);
                }
                break;
            }
            Err(_) => return refused(raw, "path cannot be inspected"),
            Ok(meta) if meta.file_type().is_symlink() => {
                let Ok(target) = std::fs::canonicalize(&candidate) else {
                    return refused(raw, "symlink whose target does not exist");
                };
                if !target.starts_with(root) {
                    return refused(raw, "symlink leaves the workspace");
                }
                final_is_symlink = i + 1 == parts.len();
                current = target;
            }
            Ok(_) => current = candidate,
        }
    }
    let Ok(inside) = current.strip_prefix(root) else {
        return refused(raw, "path leaves the workspace");
    };
    let relative = inside.to_string_lossy().replace('\\', "/");
    let protected = protected_kind(&relative).or_else(|| protected_kind(&lexical_relative));
    Resolved {
        facts: PathFacts {
            relative: Some(if relative.is_empty() {
                ".".into()
            } else {
                relative
            }),
            escapes: false,
            problem: None,
            protected,
        },
        absolute: Some(current),
        final_is_symlink,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IoError {
    #[error("Path not allowed: {path} ({problem})")]
    NotAllowed { path: String, problem: String },
    #[error("File not found: {0}")]
    NotFound(String),
    #[error("Path is a directory, not a file: {0}")]
    IsDirectory(String),
    #[error("File too large ({kb} KB). Max: 2048 KB")]
    TooLarge { kb: u64 },
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: String,
        source: std::io::Error,
    },
}

/// Re-resolves `raw` at the moment of IO and checks it still lands where it did.
pub fn recheck(root: &Path, raw: &str, expected: &Path) -> Result<Resolved, IoError> {
    let now = resolve(root, raw);
    match &now.absolute {
        Some(abs) if abs == expected && !now.facts.escapes => Ok(now),
        _ => Err(IoError::NotAllowed {
            path: raw.into(),
            problem: now
                .facts
                .problem
                .clone()
                .unwrap_or_else(|| "path changed after it was checked".into()),
        }),
    }
}

/// Reads a regular file, refusing a symlink in the final position and files over the cap.
/// `Ok(None)` when the file does not exist.
pub fn read_bytes(absolute: &Path, shown: &str) -> Result<Option<Vec<u8>>, IoError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(absolute);
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(IoError::Io {
                context: "cannot open",
                path: shown.into(),
                source: e,
            });
        }
    };
    let meta = file.metadata().map_err(|source| IoError::Io {
        context: "cannot inspect",
        path: shown.into(),
        source,
    })?;
    if meta.is_dir() {
        return Err(IoError::IsDirectory(shown.into()));
    }
    if !meta.is_file() {
        return Err(IoError::NotAllowed {
            path: shown.into(),
            problem: "not a regular file".into(),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(IoError::TooLarge {
            kb: meta.len() / 1024,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(|source| IoError::Io {
        context: "cannot read",
        path: shown.into(),
        source,
    })?;
    Ok(Some(bytes))
}

/// Replaces `absolute` with `bytes` atomically: a fresh file created beside it (never
/// following a link), synced, then renamed over the target. Missing parents inside the
/// workspace are created first.
pub fn write_atomic(
    root: &Path,
    absolute: &Path,
    shown: &str,
    bytes: &[u8],
) -> Result<(), IoError> {
    let io = |context: &'static str| {
        move |source| IoError::Io {
            context,
            path: shown.to_string(),
            source,
        }
    };
    let parent = absolute.parent().ok_or_else(|| IoError::NotAllowed {
        path: shown.into(),
        problem: "no parent directory".into(),
    })?;
    if !parent.starts_with(root) {
        return Err(IoError::NotAllowed {
            path: shown.into(),
            problem: "path leaves the workspace".into(),
        });
    }
    std::fs::create_dir_all(parent).map_err(io("cannot create parent of"))?;
    let parent_real = std::fs::canonicalize(parent).map_err(io("cannot resolve parent of"))?;
    if parent_real != parent || !parent_real.starts_with(root) {
        return Err(IoError::NotAllowed {
            path: shown.into(),
            problem: "parent directory changed or leaves the workspace".into(),
        });
    }
    if let Ok(meta) = std::fs::symlink_metadata(absolute) {
        if meta.file_type().is_symlink() {
            return Err(IoError::NotAllowed {
                path: shown.into(),
                problem: "target is a symlink".into(),
            });
        }
        if meta.is_dir() {
            return Err(IoError::IsDirectory(shown.into()));
        }
    }
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(".{name}.talos-{}", crate::ids::new_id("tmp")));
    let mode = std::fs::metadata(absolute)
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)
        .unwrap_or(0o644);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&temp)
            .map_err(io("cannot create temporary file for"))?;
        file.write_all(bytes).map_err(io("cannot write"))?;
        file.sync_all().map_err(io("cannot sync"))?;
        std::fs::rename(&temp, absolute).map_err(io("cannot replace"))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("ws");
        std::fs::create_dir(&root).unwrap();
        (tmp, root)
    }

    #[test]
    fn hostile_paths_fail_closed() {
        let (tmp, root) = workspace();
        let sibling = root.with_file_name("ws-other");
        std::fs::create_dir(&sibling).unwrap();
        std::fs::write(sibling.join("x.txt"), "x").unwrap();
        std::os::unix::fs::symlink(&sibling, root.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("passwd")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("inner")).unwrap();
        let rows: &[(&str, bool)] = &[
            ("../outside.txt", true),
            ("sub/../../outside.txt", true),
            ("/etc/passwd", true),
            ("~/.bashrc", true),
            ("link/x.txt", true),
            ("passwd", true),
            ("../ws-other/x.txt", true),
            ("a\0b", true),
            ("a\nb", true),
            ("..\\outside.txt", true),
            (&"a".repeat(300), true),
            ("sub/../ok.txt", false),
            ("inner/new.txt", false),
            ("./settings.py", false),
        ];
        for (raw, escapes) in rows {
            let r = resolve(&root, raw);
            assert_eq!(
                r.facts.escapes, *escapes,
                "{raw:?} -> {:?}",
                r.facts.problem
            );
            if !escapes {
                assert!(r.absolute.as_ref().unwrap().starts_with(&root));
            }
        }
        assert_eq!(
            resolve(&root, "inner/new.txt").facts.relative.as_deref(),
            Some("sub/new.txt")
        );
        drop(tmp);
    }

    #[test]
    fn writes_replace_atomically_and_refuse_symlinked_targets() {
        let (_tmp, root) = workspace();
        let target = root.join("a.txt");
        write_atomic(&root, &target, "a.txt", b"one").unwrap();
        write_atomic(&root, &target, "a.txt", b"two").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        std::os::unix::fs::symlink(&target, root.join("l.txt")).unwrap();
        assert!(write_atomic(&root, &root.join("l.txt"), "l.txt", b"x").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("talos-tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}

//! Ignore files the index walk reads (`.ignore`, `.gitignore`, `.git/info/exclude`): the cap on
//! their size, and what the turn is told of one that was not read (issue 26). An ignore file is
//! read like any workspace file, through the workspace handle: a regular file beneath the
//! root, never through a link that leaves it, at most [`MAX_IGNORE_FILE_BYTES`]. One that is
//! not read is left out whole: its patterns do not apply, so the files it names are listed.

use crate::text::deceptive::escaped;

/// Largest ignore file the walk reads, in bytes (256 KiB, about ten thousand patterns). A
/// larger one is not read.
pub const MAX_IGNORE_FILE_BYTES: u64 = 256 << 10;

/// An ignore file the walk did not read, and why (`reason`: a lowercase phrase, "refused: not
/// a regular file").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadIgnoreFile {
    /// Workspace-relative, as the walk found it.
    pub path: String,
    pub reason: String,
}

impl UnreadIgnoreFile {
    /// The one line a trace warning, a log line and `talos doctor` show; the path escaped.
    pub fn message(&self) -> String {
        format!(
            "ignore file {} was not read ({}); its patterns do not apply",
            escaped(&self.path),
            self.reason
        )
    }
}

/// The reason for an ignore file over the cap, whose size is `kib` KiB (rounded down).
pub fn too_large(kib: u64) -> String {
    let cap = MAX_IGNORE_FILE_BYTES / 1024;
    if kib > cap {
        format!("it is {kib} KiB, over the {cap} KiB cap for ignore files")
    } else {
        format!("it is over the {cap} KiB cap for ignore files")
    }
}

/// What the runtime's own search before the first model request found: the ranked hits
/// (`None`: the index failed; the turn goes on without them) and the ignore files the walk
/// did not read (each becomes an `IGNORE_FILE_NOT_READ` warning in the trace).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retrieval {
    pub hits: Option<Vec<super::Hit>>,
    pub unread_ignore_files: Vec<UnreadIgnoreFile>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the message names the file with control characters escaped, says why, and says
    /// its patterns do not apply; a size just over the cap is not said as the cap.
    #[test]
    fn message_rows() {
        let rows = [
            (
                ".gitignore",
                too_large(64 << 10),
                "ignore file .gitignore was not read (it is 65536 KiB, over the 256 KiB cap for ignore files); its patterns do not apply",
            ),
            (
                "a\nb/.ignore",
                "refused: not a regular file".to_string(),
                "ignore file a\\u{a}b/.ignore was not read (refused: not a regular file); its patterns do not apply",
            ),
            (
                "x/.gitignore",
                too_large(256),
                "ignore file x/.gitignore was not read (it is over the 256 KiB cap for ignore files); its patterns do not apply",
            ),
        ];
        for (path, reason, expected) in rows {
            let unread = UnreadIgnoreFile {
                path: path.into(),
                reason,
            };
            assert_eq!(unread.message(), expected);
        }
    }
}

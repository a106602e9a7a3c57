//! Edits and write verification, as pure functions over file contents.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    EmptyOldString,
    Identical,
    NotFound,
    Ambiguous(usize),
}

impl EditError {
    pub fn message(&self, path: &str) -> String {
        match self {
            EditError::EmptyOldString => format!("Invalid talos.edit_file call for `{path}`: old_string is empty. No approval was requested and no file was changed."),
            EditError::Identical => "old_string and new_string are identical - no change would be made. No approval was requested and no file was changed.".into(),
            EditError::NotFound => format!("old_string was not found in {path}. Read the file and retry with the exact text. No approval was requested and no file was changed."),
            EditError::Ambiguous(n) => format!("old_string found {n} times in {path}. Provide more context to make the match unique. No approval was requested and no file was changed."),
        }
    }
}

/// Replaces the single occurrence of `old` with `new` in `content`.
pub fn apply_edit(content: &str, old: &str, new: &str) -> Result<String, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyOldString);
    }
    if old == new {
        return Err(EditError::Identical);
    }
    match content.matches(old).count() {
        0 => Err(EditError::NotFound),
        1 => Ok(content.replacen(old, new, 1)),
        n => Err(EditError::Ambiguous(n)),
    }
}

/// What the read-back must show after a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteCheck {
    /// A full write: the bytes on disk equal the approved content.
    Exact(String),
    /// An edit: the approved replacement is present (and the whole file equals the approved
    /// result, when nothing else touched it).
    Contains {
        replacement: String,
        approved: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    pub passed: bool,
    pub summary: String,
}

pub fn verify_write(check: &WriteCheck, on_disk: &[u8]) -> Verification {
    let text = String::from_utf8_lossy(on_disk);
    match check {
        WriteCheck::Exact(expected) if expected.as_bytes() == on_disk => Verification {
            passed: true,
            summary: format!(
                "read-back matches the approved content ({} bytes)",
                on_disk.len()
            ),
        },
        WriteCheck::Exact(expected) => Verification {
            passed: false,
            summary: format!(
                "read-back differs from the approved content ({} bytes on disk, {} approved)",
                on_disk.len(),
                expected.len()
            ),
        },
        WriteCheck::Contains {
            replacement,
            approved,
        } if approved.as_bytes() == on_disk => Verification {
            passed: true,
            summary: format!(
                "read-back matches the approved edit; replacement present ({} bytes)",
                replacement.len()
            ),
        },
        WriteCheck::Contains { replacement, .. }
            if !replacement.is_empty() && text.contains(replacement.as_str()) =>
        {
            Verification {
                passed: true,
                summary: "replacement present; other content changed since approval".into(),
            }
        }
        WriteCheck::Contains { .. } => Verification {
            passed: false,
            summary: "approved replacement not found on read-back".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_rows() {
        let file = "TIMEOUT = 30\nRETRIES = 3\n";
        assert_eq!(
            apply_edit(file, "TIMEOUT = 30", "TIMEOUT = 60"),
            Ok("TIMEOUT = 60\nRETRIES = 3\n".into())
        );
        assert_eq!(
            apply_edit(file, "TIMEOUT = 90", "x"),
            Err(EditError::NotFound)
        );
        assert_eq!(apply_edit(file, "3", "4"), Err(EditError::Ambiguous(2)));
        assert_eq!(apply_edit(file, "", "4"), Err(EditError::EmptyOldString));
        assert_eq!(
            apply_edit(file, "RETRIES", "RETRIES"),
            Err(EditError::Identical)
        );
        assert_eq!(
            apply_edit(file, "RETRIES = 3\n", ""),
            Ok("TIMEOUT = 30\n".into())
        );
    }

    #[test]
    fn verification_rows() {
        assert!(verify_write(&WriteCheck::Exact("a".into()), b"a").passed);
        assert!(!verify_write(&WriteCheck::Exact("a".into()), b"ab").passed);
        let edit = WriteCheck::Contains {
            replacement: "60".into(),
            approved: "T = 60\n".into(),
        };
        assert!(verify_write(&edit, b"T = 60\n").passed);
        assert!(verify_write(&edit, b"T = 60\nX\n").passed);
        assert!(!verify_write(&edit, b"T = 30\n").passed);
    }
}

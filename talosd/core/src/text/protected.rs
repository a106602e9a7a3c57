//! Protected paths: workspace files whose change is denied without a prompt and whose
//! reading asks first (secrets, keys, VCS and Talos control files).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectedKind {
    Control,
    Secret,
}

impl ProtectedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProtectedKind::Control => "CONTROL",
            ProtectedKind::Secret => "SECRET",
        }
    }
}

const SECRET_SEGMENTS: &[&str] = &[
    "secrets",
    "tokens",
    "credentials",
    "protected",
    ".npmrc",
    ".netrc",
    ".ssh",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".pypirc",
    ".git-credentials",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ed25519_sk",
];
const SECRET_STEMS: &[&str] = &[
    "secret",
    "secrets",
    "token",
    "tokens",
    "credential",
    "credentials",
    "password",
    "passwords",
    "privatekey",
];
const SECRET_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "ppk", "gpg", "asc"];
const WINDOWS_DEVICES: &[&str] = &["con", "prn", "aux", "nul"];

/// Classifies a workspace-relative path (any separator, any case).
pub fn protected_kind(relative: &str) -> Option<ProtectedKind> {
    let normal = relative
        .trim_matches(['"', '\'', '`'])
        .replace('\\', "/")
        .to_lowercase();
    let segments: Vec<&str> = normal
        .split('/')
        .map(|s| s.trim_end_matches(['.', ' ']))
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    for (i, segment) in segments.iter().enumerate() {
        if matches!(*segment, ".git" | ".gnupg" | ".talos") {
            return Some(ProtectedKind::Control);
        }
        if *segment == ".github" && segments.get(i + 1) == Some(&"workflows") {
            return Some(ProtectedKind::Control);
        }
        let stem = segment.split('.').next().unwrap_or(segment);
        if WINDOWS_DEVICES.contains(&stem) || is_numbered_device(stem) {
            return Some(ProtectedKind::Control);
        }
    }
    for (i, segment) in segments.iter().enumerate() {
        if *segment == ".env" || segment.starts_with(".env.") || segment.ends_with(".env") {
            return Some(ProtectedKind::Secret);
        }
        if SECRET_SEGMENTS.contains(segment) {
            return Some(ProtectedKind::Secret);
        }
        if *segment == ".config" && segments.get(i + 1) == Some(&"gcloud") {
            return Some(ProtectedKind::Secret);
        }
        if has_secret_letter_run(segment) {
            return Some(ProtectedKind::Secret);
        }
    }
    let file = segments.last()?;
    let ext = file.rsplit_once('.').map(|(_, e)| e)?;
    SECRET_EXTENSIONS
        .contains(&ext)
        .then_some(ProtectedKind::Secret)
}

fn is_numbered_device(stem: &str) -> bool {
    // `get`, not `split_at`: a stem with a multi-byte character (`crеdentials`, Cyrillic `е`)
    // has no character boundary at byte 3, and `split_at` would panic there.
    let (Some(prefix), Some(digit)) = (stem.get(..3), stem.get(3..)) else {
        return false;
    };
    (prefix == "com" || prefix == "lpt")
        && digit.len() == 1
        && digit.chars().all(|c| ('1'..='9').contains(&c))
}

/// A maximal run of letters ending in a secret stem (`apitoken`, `db-passwords`), or `private`
/// followed by `key` (`private-key.txt`).
fn has_secret_letter_run(segment: &str) -> bool {
    let runs: Vec<&str> = segment
        .split(|c: char| !c.is_ascii_lowercase())
        .filter(|r| !r.is_empty())
        .collect();
    runs.iter()
        .any(|run| SECRET_STEMS.iter().any(|stem| run.ends_with(stem)))
        || runs.windows(2).any(|w| w[0] == "private" && w[1] == "key")
}

/// What the daemon observed about a call's target path, resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathFacts {
    /// Workspace-relative, `/`-separated; `None` when the call has no path.
    pub relative: Option<String>,
    pub escapes: bool,
    /// Why the path was refused, when it escapes or is malformed.
    pub problem: Option<String>,
    pub protected: Option<ProtectedKind>,
    /// The link count of the regular file the path lands on (0 when it is not a regular file
    /// or does not exist). Above one, the file's bytes are shared with another name, which may
    /// be outside the workspace.
    pub hard_links: u64,
}

impl PathFacts {
    pub fn none() -> PathFacts {
        PathFacts {
            relative: None,
            escapes: false,
            problem: None,
            protected: None,
            hard_links: 0,
        }
    }

    /// Whether the path is a regular file with more than one name (a hard link): reading it
    /// may read bytes that belong to a file outside the workspace.
    pub fn shares_bytes(&self) -> bool {
        self.hard_links > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_rows() {
        use ProtectedKind::*;
        let rows: &[(&str, Option<ProtectedKind>)] = &[
            (".env", Some(Secret)),
            (".env.local", Some(Secret)),
            ("config/prod.env", Some(Secret)),
            (".git/config", Some(Control)),
            (".GIT/HEAD", Some(Control)),
            (".talos/profiles.yaml", Some(Control)),
            (".github/workflows/ci.yml", Some(Control)),
            (".github/CODEOWNERS", None),
            ("home/.ssh/id_rsa", Some(Secret)),
            ("keys/server.pem", Some(Secret)),
            ("my_secret.json", Some(Secret)),
            ("apitoken.txt", Some(Secret)),
            ("private-key.txt", Some(Secret)),
            ("db-passwords.csv", Some(Secret)),
            (".npmrc", Some(Secret)),
            ("nul.txt", Some(Control)),
            ("com1", Some(Control)),
            ("settings.py", None),
            ("keyboard.js", None),
            ("src/tokenizer.rs", None),
            // A multi-byte character across byte 3 of a stem is no device and no panic.
            ("cr\u{435}dentials", None),
            ("co\u{43C}1", None),
            ("\u{2066}\u{2069}", None),
        ];
        for (path, expected) in rows {
            assert_eq!(protected_kind(path), *expected, "{path}");
        }
    }
}

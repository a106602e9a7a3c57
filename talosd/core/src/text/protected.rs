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

/// Shortest line of a protected file withheld as a whole.
const MIN_WITHHELD_LINE: usize = 8;
/// Shortest value withheld wherever it appears; a shorter one only when its key names a
/// secret, since a short common value (`1`, `true`) would blank the answer's own words.
const MIN_WITHHELD_VALUE: usize = 8;
const MIN_SECRET_VALUE: usize = 4;
/// Key words that make a value a secret whatever its length.
const SECRET_KEY_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pass",
    "pwd",
    "auth",
    "credential",
    "private",
    "dsn",
    "session",
    "cookie",
    "salt",
    "signature",
];

/// What of one line of a protected file is withheld from an answer wherever it appears: the
/// line itself, and the value it assigns (`KEY=value`, `export KEY="value"`, `key: value`,
/// `"key": "value",`), so that a value quoted inside a sentence is withheld as the whole line
/// would be.
pub fn withheld_pieces(line: &str) -> Vec<String> {
    let line = line.trim();
    let mut pieces = Vec::new();
    if line.len() >= MIN_WITHHELD_LINE {
        pieces.push(line.to_string());
    }
    if let Some((key, value)) = assigned(line) {
        let secret_key = {
            let key = key.to_ascii_lowercase();
            SECRET_KEY_WORDS.iter().any(|w| key.contains(w))
        };
        let least = if secret_key {
            MIN_SECRET_VALUE
        } else {
            MIN_WITHHELD_VALUE
        };
        if value.chars().count() >= least && value != line {
            pieces.push(value.to_string());
        }
    }
    pieces
}

/// The key and the bare value of an assignment line, quotes and a trailing comma taken off.
fn assigned(line: &str) -> Option<(&str, &str)> {
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    let at = line.find(['=', ':'])?;
    let key = line[..at].trim().trim_matches(['"', '\'', ' ']);
    let plain_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if !plain_key {
        return None;
    }
    let value = line[at + 1..]
        .trim()
        .trim_end_matches(',')
        .trim()
        .trim_matches(['"', '\'', '`'])
        .trim();
    (!value.is_empty()).then_some((key, value))
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

    #[test]
    fn the_values_of_assignments_are_withheld_with_their_lines() {
        let rows: &[(&str, &[&str])] = &[
            (
                "API_KEY=sk-live-7Hq2Zp9Lm4Xw8Rt6",
                &[
                    "API_KEY=sk-live-7Hq2Zp9Lm4Xw8Rt6",
                    "sk-live-7Hq2Zp9Lm4Xw8Rt6",
                ],
            ),
            (
                "export DB_PASSWORD=\"hunter2\"",
                &["export DB_PASSWORD=\"hunter2\"", "hunter2"],
            ),
            ("  \"token\": \"abcd\",", &["\"token\": \"abcd\",", "abcd"]),
            (
                "database_url: postgres://u:p@h/db",
                &["database_url: postgres://u:p@h/db", "postgres://u:p@h/db"],
            ),
            // A short value under a plain key is left: it would blank common words.
            ("DEBUG=1", &[]),
            ("MODE=prod", &["MODE=prod"]),
            ("-----BEGIN KEY-----", &["-----BEGIN KEY-----"]),
        ];
        for (line, expected) in rows {
            assert_eq!(withheld_pieces(line), *expected, "{line}");
        }
    }
}

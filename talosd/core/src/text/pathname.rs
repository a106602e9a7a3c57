//! Path text, lexically: the one place a workspace path's text is checked and normalised
//! (`..`, `.`, empty segments, NUL and control characters, lengths, backslashes, absolute and
//! home-relative forms). Callers that see a path before the disk does (the pre-approval checks,
//! the command planner, the daemon's `Workspace` handle) all go through these functions, so a
//! shape refused in one place is refused in every place. Nothing here touches the disk; the
//! daemon's `Workspace` resolves symlinks and checks the boundary in the kernel.

/// Why a path's text is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathProblem {
    Empty,
    Nul,
    Control,
    TooLong,
    SegmentTooLong,
    Backslash,
    Absolute,
    HomeRelative,
    /// A `..` climbs above the workspace root.
    Escapes,
}

impl PathProblem {
    /// The words users and traces see.
    pub fn message(self) -> &'static str {
        match self {
            PathProblem::Empty => "empty path",
            PathProblem::Nul => "NUL character in path",
            PathProblem::Control => "control character in path",
            PathProblem::TooLong => "path too long",
            PathProblem::SegmentTooLong => "path segment too long",
            PathProblem::Backslash => "backslash in path",
            PathProblem::Absolute => "absolute path",
            PathProblem::HomeRelative => "home-relative path",
            PathProblem::Escapes => "path leaves the workspace through `..`",
        }
    }
}

/// Problems visible in the text alone, whatever the separator: empty, NUL, control
/// characters, over 4,096 bytes, or a segment over 255 bytes.
pub fn text_problem(path: &str) -> Option<PathProblem> {
    if path.is_empty() {
        return Some(PathProblem::Empty);
    }
    if path.chars().any(|c| c == '\0') {
        return Some(PathProblem::Nul);
    }
    if path.chars().any(char::is_control) {
        return Some(PathProblem::Control);
    }
    if path.len() > 4096 {
        return Some(PathProblem::TooLong);
    }
    if path.split(['/', '\\']).any(|segment| segment.len() > 255) {
        return Some(PathProblem::SegmentTooLong);
    }
    None
}

/// The segments of a relative, `/`-separated path: empty and `.` segments dropped, each `..`
/// removing the segment before it. A `..` with nothing left to remove is
/// [`PathProblem::Escapes`]. An empty result is the root itself.
pub fn segments(path: &str) -> Result<Vec<&str>, PathProblem> {
    let mut out: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if out.pop().is_none() {
                    return Err(PathProblem::Escapes);
                }
            }
            name => out.push(name),
        }
    }
    Ok(out)
}

/// A path the model or a person gave for a file inside the workspace, checked as the
/// workspace boundary reads it: [`text_problem`], then no backslash, not absolute, not
/// home-relative, then [`segments`]. The result is never empty of meaning: no segments is the
/// root.
pub fn workspace_segments(raw: &str) -> Result<Vec<&str>, PathProblem> {
    if let Some(problem) = text_problem(raw) {
        return Err(problem);
    }
    if raw.contains('\\') {
        return Err(PathProblem::Backslash);
    }
    if raw.starts_with('/') {
        return Err(PathProblem::Absolute);
    }
    if raw.starts_with('~') {
        return Err(PathProblem::HomeRelative);
    }
    segments(raw)
}

/// The path with every leading `./` dropped: `././a/b` gives `a/b` (the text is otherwise kept,
/// `..` included, for the checks that come after).
pub fn without_leading_current_dir(path: &str) -> &str {
    let mut rest = path;
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped;
    }
    rest
}

/// `segments` joined with `/`, or `.` for the root.
pub fn joined(segments: &[&str]) -> String {
    if segments.is_empty() {
        ".".into()
    } else {
        segments.join("/")
    }
}

/// What the daemon's temporary files are called: `.<name>.talos-tmp-<32 hex>`, beside the file
/// they will replace. Listings hide them and the daemon removes its own leftovers at start.
pub const TEMP_MARKER: &str = ".talos-tmp-";

/// The temporary name for replacing `name`, given 32 random hex characters.
pub fn temp_name(name: &str, random_hex: &str) -> String {
    format!(".{name}{TEMP_MARKER}{random_hex}")
}

/// Whether `name` is one of the daemon's temporary files (exactly the shape [`temp_name`]
/// gives: a leading dot, a non-empty name, the marker, 32 lower-case hex characters).
pub fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let Some(at) = rest.rfind(TEMP_MARKER) else {
        return false;
    };
    let hex = &rest[at + TEMP_MARKER.len()..];
    at > 0
        && hex.len() == 32
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves only the exact temp shape counts: a person's own files that merely look alike
    /// are never hidden or removed.
    #[test]
    fn temp_name_rows() {
        let hex = "0123456789abcdef0123456789abcdef";
        let rows: &[(&str, bool)] = &[
            (&temp_name("settings.py", hex), true),
            (&temp_name("a", hex), true),
            (".settings.py.talos-tmp-0123", false),
            (
                "settings.py.talos-tmp-0123456789abcdef0123456789abcdef",
                false,
            ),
            (".talos-tmp-0123456789abcdef0123456789abcdef", false),
            (".x.talos-tmp-0123456789ABCDEF0123456789abcdef", false),
            (".x.talos-tmp-0123456789abcdef0123456789abcdef0", false),
            (".x.talos-tmp-0123456789abcdef0123456789abcdeg", false),
            ("settings.py", false),
            (".env", false),
        ];
        for (name, expected) in rows {
            assert_eq!(is_temp_name(name), *expected, "{name}");
        }
    }

    fn check(raw: &str, expected: Result<&str, PathProblem>) {
        let got = workspace_segments(raw).map(|s| joined(&s));
        assert_eq!(got.as_deref().map_err(|p| *p), expected, "{raw:?}");
    }

    #[test]
    fn workspace_path_rows() {
        let long_segment = "a".repeat(256);
        let long_path = "a/".repeat(2049);
        let rows: &[(&str, Result<&str, PathProblem>)] = &[
            ("a.txt", Ok("a.txt")),
            ("./settings.py", Ok("settings.py")),
            ("sub/../ok.txt", Ok("ok.txt")),
            ("a//b/./c/", Ok("a/b/c")),
            (".", Ok(".")),
            ("a/..", Ok(".")),
            ("", Err(PathProblem::Empty)),
            ("a\0b", Err(PathProblem::Nul)),
            ("a\nb", Err(PathProblem::Control)),
            (&long_segment, Err(PathProblem::SegmentTooLong)),
            (&long_path, Err(PathProblem::TooLong)),
            ("..\\outside.txt", Err(PathProblem::Backslash)),
            ("/etc/passwd", Err(PathProblem::Absolute)),
            ("~/.bashrc", Err(PathProblem::HomeRelative)),
            ("../outside.txt", Err(PathProblem::Escapes)),
            ("sub/../../outside.txt", Err(PathProblem::Escapes)),
        ];
        for (raw, expected) in rows {
            check(raw, *expected);
        }
    }

    #[test]
    fn leading_current_dir_rows() {
        let rows = [
            ("./a", "a"),
            ("././a/./b", "a/./b"),
            ("../a", "../a"),
            (".hidden", ".hidden"),
            ("./", ""),
        ];
        for (raw, expected) in rows {
            assert_eq!(without_leading_current_dir(raw), expected, "{raw:?}");
        }
    }
}

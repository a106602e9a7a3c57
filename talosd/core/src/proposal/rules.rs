//! Configured permission rules: `deny`, `ask` and `allow` rules from `config.yaml`, matched
//! on the tool, the call's risk, the phase, the workspace-relative path (globs) and whether the
//! path is inside the workspace. The ladder consults deny rules, then ask rules, then allow
//! rules, so deny wins over ask over allow whatever their order in the file.

use std::fmt;

use crate::planning::tools::{Risk, ToolId};
use crate::request::phase::Phase;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

/// One rule. Empty lists match anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub effect: Effect,
    pub tools: Vec<ToolId>,
    /// MCP tools it names (`mcp.fs.read_file`, `mcp.fs.*`): only such rules decide an MCP
    /// call, and a rule that names only MCP tools never matches one of Talos's own.
    pub mcp_tools: Vec<String>,
    pub risks: Vec<Risk>,
    pub phases: Vec<Phase>,
    pub paths: Vec<Glob>,
    pub within_workspace: Option<bool>,
    pub reason: String,
}

/// What a rule is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleQuery<'a> {
    pub tool: ToolId,
    pub risk: Risk,
    pub phase: Phase,
    /// Workspace-relative path, `/`-separated; `None` for a call without a path.
    pub path: Option<&'a str>,
    pub within_workspace: bool,
}

impl Rule {
    pub fn matches(&self, q: &RuleQuery<'_>) -> bool {
        let tool_ok =
            (self.tools.is_empty() && self.mcp_tools.is_empty()) || self.tools.contains(&q.tool);
        let risk_ok = self.risks.is_empty() || self.risks.contains(&q.risk);
        let phase_ok = self.phases.is_empty() || self.phases.contains(&q.phase);
        let path_ok = self.paths.is_empty()
            || q.path
                .is_some_and(|p| self.paths.iter().any(|g| g.matches(p)));
        let within_ok = self
            .within_workspace
            .is_none_or(|w| w == q.within_workspace);
        tool_ok && risk_ok && phase_ok && path_ok && within_ok
    }
}

/// The first rule with `effect` that matches.
pub fn first<'r>(rules: &'r [Rule], effect: Effect, q: &RuleQuery<'_>) -> Option<&'r Rule> {
    rules.iter().find(|r| r.effect == effect && r.matches(q))
}

/// A path glob: `**` any characters, `*` any characters but `/`, `?` one character but `/`,
/// everything else literal; case-insensitive, whole-path match; `\` is read as `/` and a
/// leading `./` is ignored; a pattern starting `**/` also matches without that prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
}

/// Why a path glob was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlobError {
    Empty,
    /// The pattern as written.
    ControlCharacter(String),
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobError::Empty => f.write_str("empty path glob"),
            GlobError::ControlCharacter(pattern) => write!(
                f,
                "path glob `{}` has a control character",
                pattern.escape_default()
            ),
        }
    }
}

impl std::error::Error for GlobError {}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let normal = normalise(pattern);
        if normal.is_empty() {
            return Err(GlobError::Empty);
        }
        if normal.chars().any(char::is_control) {
            return Err(GlobError::ControlCharacter(pattern.into()));
        }
        Ok(Glob { pattern: normal })
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    pub fn matches(&self, path: &str) -> bool {
        let path = normalise(path);
        let p: Vec<char> = self.pattern.chars().collect();
        let t: Vec<char> = path.chars().collect();
        glob_match(&p, &t)
            || self
                .pattern
                .strip_prefix("**/")
                .is_some_and(|rest| glob_match(&rest.chars().collect::<Vec<_>>(), &t))
    }
}

fn normalise(path: &str) -> String {
    let s = path.trim().replace('\\', "/").to_lowercase();
    crate::text::pathname::without_leading_current_dir(&s).to_string()
}

/// Iterative matcher with backtracking for `*` and `**` (no recursion, no exponential blowup
/// on the patterns a config can hold: bounded by pattern length times path length).
fn glob_match(p: &[char], t: &[char]) -> bool {
    // dp[i][j]: pattern[..i] matches text[..j]
    let mut dp = vec![vec![false; t.len() + 1]; p.len() + 1];
    dp[0][0] = true;
    let mut i = 0;
    while i < p.len() {
        let double = p[i] == '*' && p.get(i + 1) == Some(&'*');
        let step = if double { 2 } else { 1 };
        for j in 0..=t.len() {
            if !dp[i][j] {
                continue;
            }
            match p[i] {
                '*' => {
                    dp[i + step][j] = true;
                    let mut k = j;
                    while k < t.len() && (double || t[k] != '/') {
                        k += 1;
                        dp[i + step][k] = true;
                    }
                }
                '?' => {
                    if j < t.len() && t[j] != '/' {
                        dp[i + 1][j + 1] = true;
                    }
                }
                c => {
                    if j < t.len() && t[j] == c {
                        dp[i + 1][j + 1] = true;
                    }
                }
            }
        }
        i += step;
    }
    dp[p.len()][t.len()]
}

/// Whether a change alters the file's line endings, byte order mark or final newline: an
/// allow rule does not skip the prompt for that.
pub fn format_change(before: Option<&str>, after: &str) -> Option<String> {
    let before = before?;
    let crlf = |s: &str| s.contains("\r\n");
    let bom = |s: &str| s.starts_with('\u{feff}');
    let final_newline = |s: &str| s.ends_with('\n');
    let mut changes = Vec::new();
    if crlf(before) != crlf(after) {
        changes.push(if crlf(after) {
            "line endings change to CRLF"
        } else {
            "line endings change to LF"
        });
    }
    if bom(before) != bom(after) {
        changes.push(if bom(after) {
            "a byte order mark is added"
        } else {
            "the byte order mark is removed"
        });
    }
    if !before.is_empty() && !after.is_empty() && final_newline(before) != final_newline(after) {
        changes.push(if final_newline(after) {
            "a final newline is added"
        } else {
            "the final newline is removed"
        });
    }
    (!changes.is_empty()).then(|| changes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_rows() {
        let rows: &[(&str, &str, bool)] = &[
            ("docs/**", "docs/a/b.md", true),
            ("docs/**", "docs", false),
            ("docs/*", "docs/a/b.md", false),
            ("docs/*", "docs/a.md", true),
            ("**/*.md", "README.md", true),
            ("**/*.md", "a/b/c.md", true),
            ("*.md", "a/b.md", false),
            ("src/?.rs", "src/a.rs", true),
            ("src/?.rs", "src/ab.rs", false),
            ("SRC/**", "src/x", true),
            ("./src/**", "src\\x", true),
            ("settings.py", "settings.py", true),
            ("settings.py", "settings.pyc", false),
            ("**", "anything/at/all", true),
            (
                "a*b*c*d*e*f*g",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                false,
            ),
        ];
        for (pattern, path, expected) in rows {
            assert_eq!(
                Glob::new(pattern).unwrap().matches(path),
                *expected,
                "{pattern} ~ {path}"
            );
        }
        assert!(Glob::new("").is_err());
    }

    #[test]
    fn rules_match_on_every_field() {
        let rule = Rule {
            effect: Effect::Allow,
            tools: vec![ToolId::WriteFile],
            mcp_tools: Vec::new(),
            risks: vec![Risk::Write],
            phases: vec![Phase::Apply],
            paths: vec![Glob::new("docs/**").unwrap()],
            within_workspace: Some(true),
            reason: "docs".into(),
        };
        let q = RuleQuery {
            tool: ToolId::WriteFile,
            risk: Risk::Write,
            phase: Phase::Apply,
            path: Some("docs/a.md"),
            within_workspace: true,
        };
        assert!(rule.matches(&q));
        assert!(!rule.matches(&RuleQuery {
            tool: ToolId::EditFile,
            ..q
        }));
        assert!(!rule.matches(&RuleQuery {
            phase: Phase::Verify,
            ..q
        }));
        assert!(!rule.matches(&RuleQuery {
            path: Some("src/a.rs"),
            ..q
        }));
        assert!(
            !rule.matches(&RuleQuery { path: None, ..q }),
            "a rule with paths never matches a call without one"
        );
        assert!(!rule.matches(&RuleQuery {
            within_workspace: false,
            ..q
        }));
    }

    #[test]
    fn format_change_rows() {
        assert_eq!(format_change(Some("a\nb\n"), "a\nc\n"), None);
        assert_eq!(
            format_change(Some("a\nb\n"), "a\r\nc\r\n").as_deref(),
            Some("line endings change to CRLF")
        );
        assert_eq!(
            format_change(Some("\u{feff}a\n"), "a\n").as_deref(),
            Some("the byte order mark is removed")
        );
        assert_eq!(
            format_change(Some("a\n"), "a").as_deref(),
            Some("the final newline is removed")
        );
        assert_eq!(
            format_change(None, "a"),
            None,
            "a new file has no format to change"
        );
    }
}

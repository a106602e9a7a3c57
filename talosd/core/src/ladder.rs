//! The permission ladder, read top to bottom; the first matching step decides:
//! a path that escapes the workspace is denied; a change to a protected path is denied without
//! a prompt; a protected read asks; read-only tools are allowed; a write the session remembers
//! is allowed; everything else asks.

use crate::protected::ProtectedKind;
use crate::tools::{Risk, ToolId};

/// What the daemon observed about a call's target path, resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathFacts {
    /// Workspace-relative, `/`-separated; `None` when the call has no path.
    pub relative: Option<String>,
    pub escapes: bool,
    /// Why the path was refused, when it escapes or is malformed.
    pub problem: Option<String>,
    pub protected: Option<ProtectedKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionDecision {
    pub action: Action,
    pub reason_code: &'static str,
    pub message: String,
    pub remember_eligible: bool,
}

/// The session's remembered approval: file writes inside the workspace, outside `.github`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grants {
    pub remember_writes: bool,
}

/// The strictest decision over every path a call touches (deny over ask over allow); a call
/// without a path is decided once, on no path.
pub fn decide_all(
    tool: ToolId,
    risk: Risk,
    paths: &[PathFacts],
    grants: Grants,
) -> PermissionDecision {
    let none = PathFacts {
        relative: None,
        escapes: false,
        problem: None,
        protected: None,
    };
    let decisions: Vec<PermissionDecision> = if paths.is_empty() {
        vec![decide(tool, risk, &none, grants)]
    } else {
        paths
            .iter()
            .map(|p| decide(tool, risk, p, grants))
            .collect()
    };
    let rank = |a: Action| match a {
        Action::Deny => 2,
        Action::Ask => 1,
        Action::Allow => 0,
    };
    let remember_eligible = decisions.iter().all(|d| d.remember_eligible);
    let mut strictest = decisions
        .into_iter()
        .max_by_key(|d| rank(d.action))
        .unwrap_or_else(|| decide(tool, risk, &none, grants));
    strictest.remember_eligible = remember_eligible && strictest.remember_eligible;
    strictest
}

/// One path's decision. `risk` is the call's effective risk (a batch that deletes is destructive).
pub fn decide(tool: ToolId, risk: Risk, path: &PathFacts, grants: Grants) -> PermissionDecision {
    let decision = |action, reason_code, message: String, remember_eligible| PermissionDecision {
        action,
        reason_code,
        message,
        remember_eligible,
    };
    if path.escapes {
        return decision(
            Action::Deny,
            "WORKSPACE_ESCAPE",
            "Permission policy denied the tool call because the target path escapes the workspace."
                .into(),
            false,
        );
    }
    let relative = path.relative.clone().unwrap_or_default();
    if let Some(kind) = path.protected {
        if risk.requires_approval() {
            return decision(
                Action::Deny,
                "PROTECTED_PATH_DENY",
                format!(
                    "Permission policy denied mutation of protected path `{relative}` ({}). No approval was requested and no file was changed.",
                    kind.as_str()
                ),
                false,
            );
        }
        if tool == ToolId::ReadFile {
            return decision(
                Action::Ask,
                "PROTECTED_PATH_ASK",
                format!(
                    "Permission policy requires approval before reading protected path `{relative}` ({}).",
                    kind.as_str()
                ),
                false,
            );
        }
    }
    if risk == Risk::ReadOnly {
        return decision(Action::Allow, "DEFAULT_READ_ALLOW", String::new(), false);
    }
    let remember_eligible = risk == Risk::Write
        && matches!(tool, ToolId::WriteFile | ToolId::EditFile)
        && path.relative.is_some()
        && !is_sensitive(&relative);
    if grants.remember_writes && remember_eligible {
        return decision(Action::Allow, "SESSION_REMEMBER_ALLOW", String::new(), true);
    }
    let code = if risk == Risk::Destructive {
        "DEFAULT_DESTRUCTIVE_ASK"
    } else {
        "DEFAULT_WRITE_ASK"
    };
    decision(
        Action::Ask,
        code,
        format!(
            "Permission policy requires approval before running {}.",
            tool.name()
        ),
        remember_eligible,
    )
}

/// Paths a remembered approval never covers, even though writing them may be approved.
fn is_sensitive(relative: &str) -> bool {
    relative.to_lowercase().split('/').any(|s| {
        matches!(s, ".git" | ".github" | ".ssh" | ".gnupg") || s == ".env" || s.starts_with(".env.")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(relative: &str, escapes: bool) -> PathFacts {
        PathFacts {
            relative: Some(relative.into()),
            escapes,
            problem: None,
            protected: crate::protected::protected_kind(relative),
        }
    }

    fn check(tool: ToolId, path: PathFacts, grants: Grants, action: Action, code: &str) {
        let d = decide(tool, tool.risk(), &path, grants);
        assert_eq!(
            (d.action, d.reason_code),
            (action, code),
            "{tool:?} {path:?}"
        );
    }

    #[test]
    fn ladder_rows() {
        let none = Grants::default();
        let remember = Grants {
            remember_writes: true,
        };
        check(
            ToolId::WriteFile,
            facts("../outside.txt", true),
            remember,
            Action::Deny,
            "WORKSPACE_ESCAPE",
        );
        check(
            ToolId::ReadFile,
            facts("/etc/passwd", true),
            none,
            Action::Deny,
            "WORKSPACE_ESCAPE",
        );
        check(
            ToolId::WriteFile,
            facts(".env", false),
            remember,
            Action::Deny,
            "PROTECTED_PATH_DENY",
        );
        check(
            ToolId::EditFile,
            facts(".talos/profiles.yaml", false),
            none,
            Action::Deny,
            "PROTECTED_PATH_DENY",
        );
        check(
            ToolId::ReadFile,
            facts(".env", false),
            none,
            Action::Ask,
            "PROTECTED_PATH_ASK",
        );
        check(
            ToolId::ListDir,
            facts(".git", false),
            none,
            Action::Allow,
            "DEFAULT_READ_ALLOW",
        );
        check(
            ToolId::ReadFile,
            facts("settings.py", false),
            none,
            Action::Allow,
            "DEFAULT_READ_ALLOW",
        );
        check(
            ToolId::EditFile,
            facts("settings.py", false),
            none,
            Action::Ask,
            "DEFAULT_WRITE_ASK",
        );
        check(
            ToolId::EditFile,
            facts("settings.py", false),
            remember,
            Action::Allow,
            "SESSION_REMEMBER_ALLOW",
        );
        check(
            ToolId::WriteFile,
            facts(".github/CODEOWNERS", false),
            remember,
            Action::Ask,
            "DEFAULT_WRITE_ASK",
        );
    }

    #[test]
    fn remember_is_offered_only_for_plain_workspace_writes() {
        assert!(
            decide(
                ToolId::EditFile,
                Risk::Write,
                &facts("a.py", false),
                Grants::default()
            )
            .remember_eligible
        );
        assert!(
            !decide(
                ToolId::EditFile,
                Risk::Write,
                &facts(".github/x.yml", false),
                Grants::default()
            )
            .remember_eligible
        );
        let remember = Grants {
            remember_writes: true,
        };
        let moved = decide(
            ToolId::MovePath,
            Risk::Write,
            &facts("a.py", false),
            remember,
        );
        assert_eq!(
            (moved.action, moved.remember_eligible),
            (Action::Ask, false),
            "typed workspace operations always ask again"
        );
        let batch = decide(
            ToolId::ApplyWorkspaceBatch,
            Risk::Destructive,
            &facts("a.py", false),
            remember,
        );
        assert_eq!(
            (batch.action, batch.reason_code),
            (Action::Ask, "DEFAULT_DESTRUCTIVE_ASK")
        );
    }

    #[test]
    fn the_strictest_path_decides_a_multi_path_call() {
        let inside = facts("a.txt", false);
        let outside = facts("../b.txt", true);
        let secret = facts(".env", false);
        let d = decide_all(
            ToolId::MovePath,
            Risk::Write,
            &[inside.clone(), outside],
            Grants::default(),
        );
        assert_eq!(d.reason_code, "WORKSPACE_ESCAPE");
        let d = decide_all(
            ToolId::CopyPath,
            Risk::Write,
            &[secret, inside.clone()],
            Grants::default(),
        );
        assert_eq!(d.reason_code, "PROTECTED_PATH_DENY");
        let d = decide_all(ToolId::ReadFile, Risk::ReadOnly, &[], Grants::default());
        assert_eq!(d.action, Action::Allow);
    }
}

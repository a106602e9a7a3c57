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

pub fn decide(tool: ToolId, path: &PathFacts, grants: Grants) -> PermissionDecision {
    let decision = |action, reason_code, message: String, remember_eligible| PermissionDecision {
        action,
        reason_code,
        message,
        remember_eligible,
    };
    let risk = tool.risk();
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
    let remember_eligible =
        risk == Risk::Write && path.relative.is_some() && !is_sensitive(&relative);
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
        let d = decide(tool, &path, grants);
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
            decide(ToolId::EditFile, &facts("a.py", false), Grants::default()).remember_eligible
        );
        assert!(
            !decide(
                ToolId::EditFile,
                &facts(".github/x.yml", false),
                Grants::default()
            )
            .remember_eligible
        );
    }
}

//! The permission ladder, read top to bottom; the first matching step decides:
//! a path that escapes the workspace is denied; a change to a protected path is denied without
//! a prompt; then configured deny rules; protected reads ask; reads of a hard-linked file ask;
//! configured ask rules; configured
//! allow rules; read-only tools are allowed; a write the session remembers is allowed;
//! everything else asks. Deny therefore wins over ask over allow whatever the rule order.

use crate::planning::tools::{Risk, ToolId};
use crate::proposal::rules::{self, Effect, Rule, RuleQuery};
use crate::request::phase::Phase;

mod format;
mod reason;

pub use crate::text::protected::PathFacts;
pub use format::format_rung;
pub use reason::ReasonCode;

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

    fn rank(self) -> u8 {
        match self {
            Action::Deny => 2,
            Action::Ask => 1,
            Action::Allow => 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionDecision {
    pub action: Action,
    pub reason_code: ReasonCode,
    pub message: String,
    pub remember_eligible: bool,
}

/// The session's remembered approval: file writes inside the workspace, outside the
/// [`NEVER_REMEMBERED_FOLDERS`] and `.env` files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Grants {
    pub remember_writes: bool,
}

/// Everything the ladder reads besides the path.
#[derive(Debug, Clone, Copy)]
pub struct LadderInput<'a> {
    pub tool: ToolId,
    /// The call's effective risk (a batch that deletes is destructive).
    pub risk: Risk,
    pub phase: Phase,
    pub rules: &'a [Rule],
    pub grants: Grants,
}

impl<'a> LadderInput<'a> {
    /// A call with no configured rules, in APPLY.
    pub fn plain(tool: ToolId, risk: Risk, grants: Grants) -> LadderInput<'static> {
        LadderInput {
            tool,
            risk,
            phase: Phase::Apply,
            rules: &[],
            grants,
        }
    }
}

/// The strictest decision over every path a call touches (deny over ask over allow); a call
/// without a path is decided once, on no path.
pub fn decide_all(input: &LadderInput<'_>, paths: &[PathFacts]) -> PermissionDecision {
    let none = [PathFacts::none()];
    let paths = if paths.is_empty() { &none[..] } else { paths };
    let decisions: Vec<PermissionDecision> = paths.iter().map(|p| decide(input, p)).collect();
    let remember_eligible = decisions.iter().all(|d| d.remember_eligible);
    let mut strictest = decisions
        .into_iter()
        .max_by_key(|d| d.action.rank())
        .unwrap_or_else(|| decide(input, &PathFacts::none()));
    strictest.remember_eligible = remember_eligible && strictest.remember_eligible;
    strictest
}

/// One path's decision.
pub fn decide(input: &LadderInput<'_>, path: &PathFacts) -> PermissionDecision {
    let decision = |action, reason_code, message: String, remember_eligible| PermissionDecision {
        action,
        reason_code,
        message,
        remember_eligible,
    };
    let (tool, risk) = (input.tool, input.risk);
    if path.escapes {
        return decision(
            Action::Deny,
            ReasonCode::WorkspaceEscape,
            "Permission policy denied the tool call because the target path escapes the workspace."
                .into(),
            false,
        );
    }
    let relative = path.relative.clone().unwrap_or_default();
    if let Some(kind) = path.protected
        && risk.requires_approval()
    {
        return decision(
            Action::Deny,
            ReasonCode::ProtectedPathDeny,
            format!(
                "Permission policy denied mutation of protected path `{relative}` ({}). No approval was requested and no file was changed.",
                kind.as_str()
            ),
            false,
        );
    }
    let query = RuleQuery {
        tool,
        risk,
        phase: input.phase,
        path: path.relative.as_deref(),
        within_workspace: true,
    };
    if let Some(rule) = rules::first(input.rules, Effect::Deny, &query) {
        return decision(
            Action::Deny,
            ReasonCode::ConfigDeny,
            format!("Permission policy denied the tool call: {}", rule.reason),
            false,
        );
    }
    if let Some(kind) = path.protected
        && tool == ToolId::ReadFile
    {
        return decision(
            Action::Ask,
            ReasonCode::ProtectedPathAsk,
            format!(
                "Permission policy requires approval before reading protected path `{relative}` ({}).",
                kind.as_str()
            ),
            false,
        );
    }
    if path.shares_bytes() && tool == ToolId::ReadFile {
        return decision(
            Action::Ask,
            ReasonCode::HardLinkAsk,
            format!(
                "Permission policy requires approval before reading `{relative}`: it is a hard link ({} names share its bytes), so its content may belong to a file outside the workspace.",
                path.hard_links
            ),
            false,
        );
    }
    if let Some(rule) = rules::first(input.rules, Effect::Ask, &query) {
        return decision(
            Action::Ask,
            ReasonCode::ConfigAsk,
            format!("Permission policy requires approval: {}", rule.reason),
            false,
        );
    }
    if rules::first(input.rules, Effect::Allow, &query).is_some() {
        return decision(Action::Allow, ReasonCode::ConfigAllow, String::new(), false);
    }
    if risk == Risk::ReadOnly {
        return decision(
            Action::Allow,
            ReasonCode::DefaultReadAllow,
            String::new(),
            false,
        );
    }
    let remember_eligible = risk == Risk::Write
        && matches!(tool, ToolId::WriteFile | ToolId::EditFile)
        && path.relative.is_some()
        && !is_sensitive(&relative);
    if input.grants.remember_writes && remember_eligible {
        return decision(
            Action::Allow,
            ReasonCode::SessionRememberAllow,
            String::new(),
            true,
        );
    }
    let code = if risk == Risk::Destructive {
        ReasonCode::DefaultDestructiveAsk
    } else {
        ReasonCode::DefaultWriteAsk
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

/// Folders a remembered approval never covers, even though writing in them may be approved.
pub const NEVER_REMEMBERED_FOLDERS: [&str; 4] = [".git", ".github", ".ssh", ".gnupg"];

/// Paths a remembered approval never covers: anything in [`NEVER_REMEMBERED_FOLDERS`], and
/// `.env` files (`.env`, `.env.local`, ...).
fn is_sensitive(relative: &str) -> bool {
    relative
        .to_lowercase()
        .split('/')
        .any(|s| NEVER_REMEMBERED_FOLDERS.contains(&s) || s == ".env" || s.starts_with(".env."))
}

/// What a session's remembered write approval covers, as clients are told it (`grants/list`),
/// from the same table the ladder uses.
pub fn remembered_writes_description() -> String {
    let folders: Vec<String> = NEVER_REMEMBERED_FOLDERS
        .iter()
        .map(|f| format!("{f}/"))
        .collect();
    format!(
        "file writes inside the workspace are approved without asking, except under {} and to .env files",
        folders.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(relative: &str, escapes: bool) -> PathFacts {
        PathFacts {
            relative: Some(relative.into()),
            escapes,
            problem: None,
            protected: crate::text::protected::protected_kind(relative),
            hard_links: 1,
        }
    }

    fn check(tool: ToolId, path: PathFacts, grants: Grants, action: Action, code: &str) {
        let d = decide(&LadderInput::plain(tool, tool.risk(), grants), &path);
        assert_eq!(
            (d.action, d.reason_code.as_str()),
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

    /// Proves what clients are told a remembered write covers is the ladder's own table: each
    /// folder it names is one the grant does not answer, and `.env` files are named too.
    #[test]
    fn the_grant_description_is_the_ladders_table() {
        let told = remembered_writes_description();
        let remember = Grants {
            remember_writes: true,
        };
        for folder in NEVER_REMEMBERED_FOLDERS {
            assert!(told.contains(&format!("{folder}/")), "{told}");
            let inside = decide(
                &LadderInput::plain(ToolId::EditFile, Risk::Write, remember),
                &facts(&format!("{folder}/x"), false),
            );
            assert_ne!(
                inside.reason_code,
                ReasonCode::SessionRememberAllow,
                "{folder}"
            );
        }
        assert!(told.contains(".env files"), "{told}");
        for env in [".env", "app/.env.local"] {
            let d = decide(
                &LadderInput::plain(ToolId::WriteFile, Risk::Write, remember),
                &facts(env, false),
            );
            assert_ne!(d.reason_code, ReasonCode::SessionRememberAllow, "{env}");
        }
        let plain = decide(
            &LadderInput::plain(ToolId::EditFile, Risk::Write, remember),
            &facts("src/a.py", false),
        );
        assert_eq!(plain.reason_code, ReasonCode::SessionRememberAllow);
    }

    #[test]
    fn remember_is_offered_only_for_plain_workspace_writes() {
        assert!(
            decide(
                &LadderInput::plain(ToolId::EditFile, Risk::Write, Grants::default()),
                &facts("a.py", false)
            )
            .remember_eligible
        );
        assert!(
            !decide(
                &LadderInput::plain(ToolId::EditFile, Risk::Write, Grants::default()),
                &facts(".github/x.yml", false)
            )
            .remember_eligible
        );
        let remember = Grants {
            remember_writes: true,
        };
        let moved = decide(
            &LadderInput::plain(ToolId::MovePath, Risk::Write, remember),
            &facts("a.py", false),
        );
        assert_eq!(
            (moved.action, moved.remember_eligible),
            (Action::Ask, false),
            "typed workspace operations always ask again"
        );
        let batch = decide(
            &LadderInput::plain(ToolId::ApplyWorkspaceBatch, Risk::Destructive, remember),
            &facts("a.py", false),
        );
        assert_eq!(
            (batch.action, batch.reason_code.as_str()),
            (Action::Ask, "DEFAULT_DESTRUCTIVE_ASK")
        );
    }

    /// Proves a command always asks, even with remembered writes, is never offered for
    /// remembering, and skips the prompt only when a configured allow rule names it.
    #[test]
    fn a_command_asks_unless_an_allow_rule_covers_it() {
        use crate::proposal::rules::Glob;
        let remember = Grants {
            remember_writes: true,
        };
        let command = |rules: &[Rule], grants| {
            let input = LadderInput {
                tool: ToolId::RunCommand,
                risk: ToolId::RunCommand.risk(),
                phase: Phase::Verify,
                rules,
                grants,
            };
            let d = decide_all(&input, &[]);
            (d.action, d.reason_code.as_str(), d.remember_eligible)
        };
        let rule = |effect, tools: Vec<ToolId>, paths: Vec<Glob>| Rule {
            effect,
            tools,
            mcp_tools: Vec::new(),
            risks: vec![],
            phases: vec![],
            paths,
            within_workspace: None,
            reason: "configured".into(),
        };
        let allow_command = rule(Effect::Allow, vec![ToolId::RunCommand], vec![]);
        let allow_writes = rule(Effect::Allow, vec![ToolId::WriteFile], vec![]);
        let allow_every_path = rule(Effect::Allow, vec![], vec![Glob::new("**").unwrap()]);
        let ask_command = rule(Effect::Ask, vec![ToolId::RunCommand], vec![]);
        let deny_command = rule(Effect::Deny, vec![ToolId::RunCommand], vec![]);
        let rows: Vec<(Vec<Rule>, Grants, (Action, &str, bool))> = vec![
            (
                vec![],
                Grants::default(),
                (Action::Ask, "DEFAULT_WRITE_ASK", false),
            ),
            (vec![], remember, (Action::Ask, "DEFAULT_WRITE_ASK", false)),
            (
                vec![allow_writes],
                remember,
                (Action::Ask, "DEFAULT_WRITE_ASK", false),
            ),
            (
                vec![allow_every_path],
                remember,
                (Action::Ask, "DEFAULT_WRITE_ASK", false),
            ),
            (
                vec![allow_command.clone()],
                Grants::default(),
                (Action::Allow, "CONFIG_ALLOW", false),
            ),
            (
                vec![allow_command.clone(), ask_command],
                Grants::default(),
                (Action::Ask, "CONFIG_ASK", false),
            ),
            (
                vec![allow_command, deny_command],
                remember,
                (Action::Deny, "CONFIG_DENY", false),
            ),
        ];
        for (rules, grants, expected) in rows {
            assert_eq!(command(&rules, grants), expected, "{rules:?} {grants:?}");
        }
    }

    #[test]
    fn the_strictest_path_decides_a_multi_path_call() {
        let inside = facts("a.txt", false);
        let outside = facts("../b.txt", true);
        let secret = facts(".env", false);
        let d = decide_all(
            &LadderInput::plain(ToolId::MovePath, Risk::Write, Grants::default()),
            &[inside.clone(), outside],
        );
        assert_eq!(d.reason_code.as_str(), "WORKSPACE_ESCAPE");
        let d = decide_all(
            &LadderInput::plain(ToolId::CopyPath, Risk::Write, Grants::default()),
            &[secret, inside.clone()],
        );
        assert_eq!(d.reason_code.as_str(), "PROTECTED_PATH_DENY");
        let d = decide_all(
            &LadderInput::plain(ToolId::ReadFile, Risk::ReadOnly, Grants::default()),
            &[],
        );
        assert_eq!(d.action, Action::Allow);
    }

    #[test]
    fn configured_rules_sit_on_their_rungs_and_deny_wins_over_ask_over_allow() {
        use crate::proposal::rules::{Glob, Rule};
        let rule = |effect, glob: &str| Rule {
            effect,
            tools: vec![],
            mcp_tools: Vec::new(),
            risks: vec![],
            phases: vec![],
            paths: vec![Glob::new(glob).unwrap()],
            within_workspace: None,
            reason: format!("{effect:?} {glob}"),
        };
        // The file lists allow first, then ask, then deny: order in the file does not matter.
        let rules = vec![
            rule(Effect::Allow, "docs/**"),
            rule(Effect::Ask, "docs/internal/**"),
            rule(Effect::Deny, "docs/internal/keys/**"),
            rule(Effect::Allow, ".env"),
            rule(Effect::Deny, "vendor/**"),
        ];
        let input = |tool: ToolId| LadderInput {
            tool,
            risk: tool.risk(),
            phase: Phase::Apply,
            rules: &rules,
            grants: Grants::default(),
        };
        let rows: &[(ToolId, &str, Action, &str)] = &[
            (
                ToolId::WriteFile,
                "docs/a.md",
                Action::Allow,
                "CONFIG_ALLOW",
            ),
            (
                ToolId::WriteFile,
                "docs/internal/a.md",
                Action::Ask,
                "CONFIG_ASK",
            ),
            (
                ToolId::WriteFile,
                "docs/internal/keys/a.md",
                Action::Deny,
                "CONFIG_DENY",
            ),
            (
                ToolId::ReadFile,
                "vendor/lib.rs",
                Action::Deny,
                "CONFIG_DENY",
            ),
            (
                ToolId::WriteFile,
                ".env",
                Action::Deny,
                "PROTECTED_PATH_DENY",
            ),
            (ToolId::ReadFile, ".env", Action::Ask, "PROTECTED_PATH_ASK"),
            (
                ToolId::WriteFile,
                "src/a.rs",
                Action::Ask,
                "DEFAULT_WRITE_ASK",
            ),
            (
                ToolId::DeletePath,
                "docs/a.md",
                Action::Allow,
                "CONFIG_ALLOW",
            ),
        ];
        for (tool, path, action, code) in rows {
            let d = decide(&input(*tool), &facts(path, false));
            assert_eq!(
                (d.action, d.reason_code.as_str()),
                (*action, *code),
                "{tool:?} {path}"
            );
        }
        let escape = decide(&input(ToolId::WriteFile), &facts("../docs/a.md", true));
        assert_eq!(
            escape.reason_code.as_str(),
            "WORKSPACE_ESCAPE",
            "no rule allows an escape"
        );
    }
}

//! The pre-approval check sequence, in the fixed order docs/policy.md ("Before the ladder")
//! states: unknown tool, current-turn surface, payload normalisation, phase policy, read-only
//! contract, validation. A call that fails any step is rejected before approval and before
//! any IO. The permission ladder ([`crate::proposal::ladder`]) runs after, once the daemon has resolved
//! the target path. For `talos.run_command` the command plan ([`crate::planning::command::plan`],
//! against the session's profile registry) comes between validation and the ladder; its
//! refusals are reported at [`Stage::CommandPlan`].

use std::collections::BTreeMap;

use crate::planning::plan::TurnPlan;
use crate::planning::surface::Surface;
use crate::planning::tools::{self, NameResolution, ToolArgs, ToolId};
use crate::request::phase::Phase;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    UnknownTool,
    Surface,
    Normalisation,
    Phase,
    ReadOnlyContract,
    Validation,
    /// `talos.run_command` refused by [`crate::planning::command::plan`] (run by the daemon, which
    /// holds the registry).
    CommandPlan,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::UnknownTool => "unknown-tool",
            Stage::Surface => "surface",
            Stage::Normalisation => "normalisation",
            Stage::Phase => "phase",
            Stage::ReadOnlyContract => "read-only-contract",
            Stage::Validation => "validation",
            Stage::CommandPlan => "command-plan",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    Rejected {
        tool: Option<ToolId>,
        stage: Stage,
        message: String,
    },
    Accepted {
        tool: ToolId,
        args: ToolArgs,
        resolution: NameResolution,
    },
}

/// The phase-policy categories of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseCategory {
    Read,
    Search,
    Mutate,
    Command,
}

impl PhaseCategory {
    pub fn of(tool: ToolId) -> PhaseCategory {
        match tool {
            ToolId::RunCommand => PhaseCategory::Command,
            ToolId::WriteFile
            | ToolId::EditFile
            | ToolId::MkDir
            | ToolId::MovePath
            | ToolId::CopyPath
            | ToolId::RenamePath
            | ToolId::DeletePath
            | ToolId::ApplyWorkspaceBatch => PhaseCategory::Mutate,
            ToolId::Grep | ToolId::Search => PhaseCategory::Search,
            ToolId::ReadFile | ToolId::ListDir => PhaseCategory::Read,
        }
    }

    /// INSPECT allows neither changes nor commands, VERIFY allows commands but no changes,
    /// APPLY allows everything.
    pub fn allowed_in(self, phase: Phase) -> bool {
        match phase {
            Phase::Inspect => !matches!(self, PhaseCategory::Mutate | PhaseCategory::Command),
            Phase::Verify => self != PhaseCategory::Mutate,
            Phase::Apply => true,
        }
    }
}

/// Runs the fixed sequence for one proposed call.
pub fn check_call(
    name: &str,
    raw_args: &BTreeMap<String, String>,
    plan: &TurnPlan,
    surface: &Surface,
    phase: Phase,
    strict_names: bool,
) -> CheckOutcome {
    let resolution = tools::resolve_name(name, strict_names);
    let Some(tool) = resolution.tool() else {
        return CheckOutcome::Rejected {
            tool: None,
            stage: Stage::UnknownTool,
            message: format!("Unknown tool: {name}"),
        };
    };
    if !surface.allows(tool) {
        let names = surface.sorted_names();
        let allowed = if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        };
        return CheckOutcome::Rejected {
            tool: Some(tool),
            stage: Stage::Surface,
            message: format!(
                "Current-turn tool surface did not allow {}. Allowed tools: {allowed}.",
                tool.name()
            ),
        };
    }
    let mut args = match tools::normalise(tool, raw_args) {
        Ok(args) => args,
        Err(message) => {
            return CheckOutcome::Rejected {
                tool: Some(tool),
                stage: Stage::Normalisation,
                message: format!("{message} {}", nothing_happened(tool)),
            };
        }
    };
    canonicalise_path(&mut args);
    if !PhaseCategory::of(tool).allowed_in(phase) {
        return CheckOutcome::Rejected {
            tool: Some(tool),
            stage: Stage::Phase,
            message: format!(
                "Phase policy blocked {} during {}. Mutating tools are only allowed during APPLY; this phase allows read, search, and retrieval tools only.",
                tool.name(),
                phase.as_str()
            ),
        };
    }
    let contract = plan.contract();
    if tool.mutates() && !contract.mutation_allowed {
        return CheckOutcome::Rejected {
            tool: Some(tool),
            stage: Stage::ReadOnlyContract,
            message: format!(
                "The user did not ask to modify files on this turn, so do not call {} for a read-only request. Answer with information only, or wait for an explicit change request in a later turn.",
                tool.name()
            ),
        };
    }
    if let Err(message) = validate(tool, &args, plan) {
        return CheckOutcome::Rejected {
            tool: Some(tool),
            stage: Stage::Validation,
            message,
        };
    }
    CheckOutcome::Accepted {
        tool,
        args,
        resolution,
    }
}

/// What a refusal before approval tells the model did not happen.
fn nothing_happened(tool: ToolId) -> &'static str {
    match tool {
        ToolId::RunCommand => "No approval was requested and no command was executed.",
        ToolId::ReadFile
        | ToolId::ListDir
        | ToolId::Grep
        | ToolId::Search
        | ToolId::WriteFile
        | ToolId::EditFile
        | ToolId::MkDir
        | ToolId::MovePath
        | ToolId::CopyPath
        | ToolId::RenamePath
        | ToolId::DeletePath
        | ToolId::ApplyWorkspaceBatch => "No approval was requested and no file was changed.",
    }
}

/// Leading `./` and backslashes are normalised; the boundary decides everything else.
fn canonicalise_path(args: &mut ToolArgs) {
    let path = match args {
        ToolArgs::ReadFile { path, .. }
        | ToolArgs::ListDir { path, .. }
        | ToolArgs::WriteFile { path, .. }
        | ToolArgs::EditFile { path, .. }
        | ToolArgs::MkDir { path }
        | ToolArgs::RenamePath { path, .. }
        | ToolArgs::DeletePath { path, .. }
        | ToolArgs::MovePath { from: path, .. }
        | ToolArgs::CopyPath { from: path, .. } => path,
        ToolArgs::Grep { .. }
        | ToolArgs::Search { .. }
        | ToolArgs::ApplyWorkspaceBatch { .. }
        | ToolArgs::RunCommand { .. } => return,
    };
    *path = crate::text::pathname::without_leading_current_dir(path.trim()).to_string();
}

fn validate(tool: ToolId, args: &ToolArgs, plan: &TurnPlan) -> Result<(), String> {
    let paths = args.paths();
    for path in &paths {
        if let Some(problem) = lexical_path_problem(path) {
            return Err(format!(
                "Path not allowed before approval for `path`: {} ({problem}). No approval was requested and no file was changed.",
                printable(path)
            ));
        }
    }
    if !tool.mutates() {
        return Ok(());
    }
    if matches!(tool, ToolId::WriteFile | ToolId::EditFile)
        && let Some(path) = paths
            .iter()
            .find(|p| crate::request::targets::is_unreadable_document(p))
    {
        return Err(format!(
            "Talos cannot write `{}`: binary document formats (PDF, Word, Excel, PowerPoint, OpenDocument, RTF) are not supported by the text tools. Write a text format such as .md or .txt instead. No approval was requested and no file was changed.",
            printable(path)
        ));
    }
    let contract = plan.contract();
    for path in &paths {
        let key = path.replace('\\', "/");
        if contract
            .forbidden_targets
            .iter()
            .any(|f| same_target(f, &key))
        {
            return Err(format!(
                "Target forbidden before approval: `{key}` was explicitly excluded by the user's current request. No approval was requested and no file was changed."
            ));
        }
    }
    let allowed: Vec<&str> = contract
        .roleful_targets
        .iter()
        .filter(|t| t.role == crate::request::intent::TargetRole::MayMutate)
        .map(|t| t.path.as_str())
        .collect();
    // A contract with no target at all leaves the choice to the model (and the approval); one
    // whose only targets are allowed ones (a repair whose fix may go in either file) does not.
    if contract.expected_targets.is_empty() && allowed.is_empty() {
        return Ok(());
    }
    for path in acted_on(args) {
        let key = path.replace('\\', "/");
        let may_mutate = allowed.iter().any(|t| same_target(t, &key));
        let expected = may_mutate
            || contract
                .expected_targets
                .iter()
                .any(|e| same_target(e, &key))
            || (tool.is_workspace_operation()
                && contract
                    .expected_targets
                    .iter()
                    .any(|e| related_path(e, &key)));
        if !expected {
            return Err(format!(
                "Target outside expected targets before approval: `{key}` is outside the current expected target set: {}. Similar filenames are not substitutes for required target paths. No approval was requested and no file was changed.",
                contract
                    .expected_targets
                    .iter()
                    .map(String::as_str)
                    .chain(allowed.iter().copied())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(())
}

/// The existing paths a call changes, which must be expected targets when the request named
/// any: the file a write or edit replaces, the source of a move, copy or rename, the path a
/// delete removes. New folders and destinations are checked against forbidden targets only.
fn acted_on(args: &ToolArgs) -> Vec<&str> {
    match args {
        ToolArgs::WriteFile { path, .. }
        | ToolArgs::EditFile { path, .. }
        | ToolArgs::RenamePath { path, .. }
        | ToolArgs::DeletePath { path, .. } => vec![path],
        ToolArgs::MovePath { from, .. } | ToolArgs::CopyPath { from, .. } => vec![from],
        ToolArgs::ApplyWorkspaceBatch { operations } => {
            operations.iter().filter_map(op_source).collect()
        }
        ToolArgs::MkDir { .. }
        | ToolArgs::ReadFile { .. }
        | ToolArgs::ListDir { .. }
        | ToolArgs::Grep { .. }
        | ToolArgs::Search { .. }
        | ToolArgs::RunCommand { .. } => Vec::new(),
    }
}

fn op_source(op: &crate::planning::ops::WorkspaceOp) -> Option<&str> {
    match op {
        crate::planning::ops::WorkspaceOp::Mkdir { .. } => None,
        crate::planning::ops::WorkspaceOp::Move { from, .. }
        | crate::planning::ops::WorkspaceOp::Copy { from, .. } => Some(from),
        crate::planning::ops::WorkspaceOp::Rename { path, .. }
        | crate::planning::ops::WorkspaceOp::Delete { path, .. } => Some(path),
    }
}

/// For workspace operations: `path` is a folder holding an expected target, or lies inside an
/// expected folder.
fn related_path(expected: &str, path: &str) -> bool {
    let expected = expected.trim_end_matches('/');
    let path = path.trim_end_matches('/');
    expected.starts_with(&format!("{path}/")) || path.starts_with(&format!("{expected}/"))
}

/// An expected target written as a bare file name also matches that name in a subfolder only
/// when the person wrote a path; otherwise names must match exactly.
fn same_target(expected: &str, actual: &str) -> bool {
    expected == actual
}

/// Problems visible in the path's text alone. The daemon resolves symlinks and checks the
/// boundary again, before the decision and at the moment of IO.
pub fn lexical_path_problem(path: &str) -> Option<&'static str> {
    crate::text::pathname::text_problem(path)
        .map(crate::text::pathname::PathProblem::message)
        .or_else(|| {
            names_no_file(path).then_some(
                "not a file name: the model proposed a path with a part that has no letter or digit",
            )
        })
}

/// A path with a part that names nothing (`,`, `...`, ` `): a small model's stray token, not a
/// file. It is refused as the model's invalid proposal, so it is never reported as a missing
/// file the person should look for. `.` and `..` keep their meaning.
fn names_no_file(path: &str) -> bool {
    // A home-relative, absolute or escaping path keeps the boundary's own verdict.
    if crate::text::pathname::workspace_segments(path).is_err() {
        return false;
    }
    path.split('/')
        .filter(|part| !matches!(*part, "" | "." | ".."))
        .any(|part| !part.chars().any(char::is_alphanumeric))
        || path.trim().is_empty()
}

fn printable(path: &str) -> String {
    path.chars()
        .flat_map(char::escape_default)
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::posture::{Posture, apply};
    use crate::request::contract::resolve;

    fn run(request: &str, posture: Posture, name: &str, args: &[(&str, &str)]) -> CheckOutcome {
        let plan = TurnPlan::from_turn(apply(posture, resolve(request)));
        let args: BTreeMap<String, String> = args
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        check_call(
            name,
            &args,
            &plan,
            plan.surface(),
            plan.initial_phase(),
            false,
        )
    }

    fn rejected(outcome: CheckOutcome) -> (Stage, String) {
        match outcome {
            CheckOutcome::Rejected { stage, message, .. } => (stage, message),
            CheckOutcome::Accepted { .. } => panic!("accepted"),
        }
    }

    const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";
    const EDIT_ARGS: &[(&str, &str)] = &[
        ("path", "settings.py"),
        ("old_string", "30"),
        ("new_string", "60"),
    ];

    #[test]
    fn the_sequence_in_order() {
        assert_eq!(
            rejected(run(
                EDIT,
                Posture::Agent,
                "bash",
                &[("command", "rm -rf /")]
            )),
            (Stage::UnknownTool, "Unknown tool: bash".into())
        );
        assert_eq!(
            rejected(run(EDIT, Posture::AskReadOnly, "talos.edit_file", EDIT_ARGS)),
            (Stage::Surface, "Current-turn tool surface did not allow talos.edit_file. Allowed tools: talos.grep, talos.list_dir, talos.read_file, talos.search.".into())
        );
        assert_eq!(
            rejected(run(
                "hello",
                Posture::Agent,
                "talos.read_file",
                &[("path", "a")]
            ))
            .1,
            "Current-turn tool surface did not allow talos.read_file. Allowed tools: (none)."
        );
        assert_eq!(
            rejected(run(
                EDIT,
                Posture::Agent,
                "talos.edit_file",
                &[("path", "settings.py")]
            ))
            .0,
            Stage::Normalisation
        );
        assert_eq!(
            rejected(run(
                EDIT,
                Posture::Agent,
                "talos.write_file",
                &[("path", "other.py"), ("content", "x")]
            ))
            .0,
            Stage::Validation
        );
        let document = rejected(run(
            "Create report.docx with a summary",
            Posture::Agent,
            "talos.write_file",
            &[("path", "report.docx"), ("content", "summary")],
        ));
        assert_eq!(document.0, Stage::Validation);
        assert!(
            document
                .1
                .starts_with("Talos cannot write `report.docx`: binary document formats"),
            "{}",
            document.1
        );
        assert_eq!(
            rejected(run(
                "Fix only styles.css. Do not change index.html.",
                Posture::Agent,
                "talos.write_file",
                &[("path", "index.html"), ("content", "x")]
            ))
            .1,
            "Target forbidden before approval: `index.html` was explicitly excluded by the user's current request. No approval was requested and no file was changed."
        );
        assert_eq!(
            rejected(run(
                EDIT,
                Posture::Agent,
                "talos.read_file",
                &[("path", "a\0b")]
            ))
            .0,
            Stage::Validation
        );
        assert!(matches!(
            run(EDIT, Posture::Agent, "talos.edit_file", EDIT_ARGS),
            CheckOutcome::Accepted {
                tool: ToolId::EditFile,
                ..
            }
        ));
        assert!(matches!(
            run(
                EDIT,
                Posture::Agent,
                "edit_file",
                &[
                    ("file_path", "./settings.py"),
                    ("old_text", "30"),
                    ("new_text", "60")
                ]
            ),
            CheckOutcome::Accepted {
                args: ToolArgs::EditFile { .. },
                ..
            }
        ));
    }

    #[test]
    fn phase_policy_blocks_writes_outside_apply() {
        let plan = TurnPlan::from_turn(apply(Posture::Agent, resolve(EDIT)));
        let args: BTreeMap<String, String> = EDIT_ARGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let outcome = check_call(
            "talos.edit_file",
            &args,
            &plan,
            plan.surface(),
            Phase::Inspect,
            false,
        );
        assert_eq!(rejected(outcome), (Stage::Phase, "Phase policy blocked talos.edit_file during INSPECT. Mutating tools are only allowed during APPLY; this phase allows read, search, and retrieval tools only.".into()));
    }
}

#[cfg(test)]
mod path_name_tests {
    use super::lexical_path_problem;

    /// Proves a stray token the model gave as a path is refused as its invalid proposal, never
    /// looked up as a missing file, while real names (dotfiles, `.`, `..` inside) pass.
    #[test]
    fn a_path_part_with_no_letter_or_digit_is_not_a_file_name() {
        for path in [",", "...", " ", "src/,", "-/a"] {
            let problem = lexical_path_problem(path).unwrap_or_default();
            assert!(
                problem.starts_with("not a file name"),
                "{path:?}: {problem}"
            );
        }
        for path in [
            ".",
            ".env",
            "src/../a.rs",
            "a-b_c.txt",
            "VERSION",
            "日本.txt",
        ] {
            assert_eq!(lexical_path_problem(path), None, "{path:?}");
        }
    }
}

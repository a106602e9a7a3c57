//! Commands asked for in plain words ("run the tests", "run cargo test", "check that it builds",
//! "does it pass clippy", "run lint"), matched against what the workspace has: its build files
//! (a root `Cargo.toml` makes the `cargo_*` profiles apply, a root `gradlew` the `gradle_*`
//! ones) and its trusted `ws:<id>` profiles. The daemon reads those facts; [`with_workspace`]
//! is the pure rule that turns them and the request into the contract's [`CommandAsk`]:
//!
//! - a request that is not a change and asks for a check a profile covers runs that profile
//!   (a VERIFY_ONLY contract with no file targets, reason `explicit-command-verification`);
//! - a change turn that asks for the tests to pass ("fix it so the tests pass") may run the
//!   matching profile after its changes, and a failing run after the change is a task finding
//!   ([`after_change_run`]);
//! - a runner with no matching profile ("run pytest" where none is declared) keeps the fixed
//!   answer, which lists the profiles that do exist.

use super::{Reason, TaskContract, TaskType};
use crate::request::intent::{TargetRef, TargetRole};
use crate::request::outcome::{MutationRecord, MutationResult};
use crate::text::lexical::{self, Lex};

/// What the daemon knows about the workspace's commands when a turn starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceCommands {
    /// A `Cargo.toml` at the workspace root.
    pub cargo: bool,
    /// A `gradlew` wrapper at the workspace root.
    pub gradle: bool,
    /// The ids (`ws:lint`) of the workspace profiles, when the declaration is trusted.
    pub trusted_profiles: Vec<String>,
}

/// The command a request asks for, decided against the workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CommandAsk {
    /// The request asks for no command (or named a profile itself).
    #[default]
    None,
    /// Run this profile now: the turn is a command check.
    Run(String),
    /// A change turn that asked for this check to pass: it may run after the changes, and a
    /// failing run is a finding.
    AfterChange(String),
    /// A command was asked for and no profile matches; these are the profiles that exist.
    Unavailable(Vec<String>),
}

/// The kind of check a request names in plain words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Test,
    Build,
    Compile,
    Clippy,
    Format,
}

#[rustfmt::skip]
const TEST_PHRASES: &[&str] = &[
    "run the tests", "run tests", "run all tests", "run all the tests", "run my tests",
    "run the test suite", "run the unit tests", "run the test", "run cargo test",
    "run gradle test", "execute cargo test", "do the tests pass", "do tests pass", "tests pass",
    "tests still pass", "tests are passing", "tests passing", "test suite passes",
];

#[rustfmt::skip]
const BUILD_PHRASES: &[&str] = &[
    "check that it builds", "check it builds", "check if it builds", "check whether it builds",
    "does it build", "does it still build", "it still builds", "so it builds", "run the build",
    "run cargo build", "execute cargo build", "run gradle build", "make sure it builds",
];

#[rustfmt::skip]
const COMPILE_PHRASES: &[&str] = &[
    "check that it compiles", "check it compiles", "check if it compiles", "does it compile",
    "does it still compile", "it still compiles", "so it compiles", "make sure it compiles",
    "run cargo check", "execute cargo check",
];

#[rustfmt::skip]
const CLIPPY_PHRASES: &[&str] = &[
    "pass clippy", "passes clippy", "run clippy", "run cargo clippy", "execute cargo clippy",
    "clippy clean", "clippy warnings", "clippy lints",
];

#[rustfmt::skip]
const FORMAT_PHRASES: &[&str] = &[
    "run cargo fmt", "run rustfmt", "check formatting", "check the formatting", "is it formatted",
    "formatted correctly",
];

/// A question about how to run something (or why it behaves as it does), not a request to
/// run it.
#[rustfmt::skip]
const HOW_TO: &[&str] = &[
    "how do i", "how to", "how can i", "how should i", "how would i", "explain", "what does",
    "what is", "why",
];

/// The contract with its command decided against the workspace's facts.
pub fn with_workspace(contract: TaskContract, facts: &WorkspaceCommands) -> TaskContract {
    let text = lexical::normalise(&contract.original_request);
    let lower = lexical::blank_quotes(&text.to_ascii_lowercase());
    let lex = Lex::new(&text, &lower);
    let asked = asked_profile(&lex, facts);
    if contract.mutation_requested {
        let mut contract = contract;
        if contract.mutation_allowed
            && let Some(Ok(profile)) = asked
        {
            contract.command = CommandAsk::AfterChange(profile);
        }
        return contract;
    }
    if contract.reason == Reason::CommandVerification {
        // The request named a profile or the command tool itself.
        return contract;
    }
    let how_to = lex.has_any(HOW_TO);
    match asked {
        Some(Ok(profile)) if !how_to => run(contract, profile),
        Some(Err(())) if !how_to => unavailable(contract, facts),
        None | Some(_) if contract.reason == Reason::UnsupportedCommand => {
            unavailable(contract, facts)
        }
        None | Some(_) => contract,
    }
}

/// How a finding from a failing check after the change begins (`{profile} failed after the change`).
const AFTER_CHANGE_FAILED: &str = "failed after the change";

/// A run of `profile` on a change turn that asked for it to pass: a failing run after a change
/// that succeeded becomes a task finding (so the outcome is not COMPLETED_VERIFIED); a later
/// passing run of the same profile clears it. Runs before any change, and runs of other
/// profiles, are not judged here.
pub fn after_change_run(
    contract: &TaskContract,
    profile: &str,
    passed: bool,
    exit_code: Option<i32>,
    mutations: &[MutationRecord],
    findings: &mut Vec<String>,
) {
    let asked = matches!(&contract.command, CommandAsk::AfterChange(p) if p == profile);
    let changed = mutations
        .iter()
        .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
    if !asked || !changed {
        return;
    }
    let prefix = format!("{profile} {AFTER_CHANGE_FAILED}");
    findings.retain(|f| !f.starts_with(&prefix));
    if !passed {
        let how = exit_code.map_or("it did not finish".to_string(), |c| {
            format!("exit code {c}")
        });
        findings.push(format!("{prefix} ({how})"));
    }
}

/// The profiles a person can name in this workspace, in registry order.
pub fn available_profiles(facts: &WorkspaceCommands) -> Vec<String> {
    crate::request::task::BUILTIN_IDS
        .iter()
        .filter(|id| {
            (facts.cargo && id.starts_with("cargo_")) || (facts.gradle && id.starts_with("gradle_"))
        })
        .map(|id| id.to_string())
        .chain(facts.trusted_profiles.iter().cloned())
        .collect()
}

/// The profile the request asks for: `Some(Ok(id))` when one matches, `Some(Err(()))` when a
/// check is asked for that no profile here covers, `None` when no check is named.
fn asked_profile(lex: &Lex<'_>, facts: &WorkspaceCommands) -> Option<Result<String, ()>> {
    if let Some(id) = named_workspace_profile(lex, facts) {
        return Some(Ok(id));
    }
    let check = [
        (Check::Clippy, CLIPPY_PHRASES),
        (Check::Format, FORMAT_PHRASES),
        (Check::Compile, COMPILE_PHRASES),
        (Check::Build, BUILD_PHRASES),
        (Check::Test, TEST_PHRASES),
    ]
    .into_iter()
    .find(|(_, phrases)| lex.has_any(phrases))
    .map(|(check, _)| check)?;
    let says_gradle = lex.has("gradle") || lex.has("gradlew");
    let says_cargo = lex.has("cargo") || matches!(check, Check::Clippy | Check::Format);
    let cargo = facts.cargo && !says_gradle;
    let gradle = facts.gradle && !says_cargo;
    let profile = match check {
        Check::Test if cargo => Some("cargo_test"),
        Check::Test if gradle => Some("gradle_test"),
        Check::Build if cargo => Some("cargo_build"),
        Check::Build | Check::Compile if gradle => Some("gradle_build"),
        Check::Compile if cargo => Some("cargo_check"),
        Check::Clippy if cargo => Some("cargo_clippy"),
        Check::Format if cargo => Some("cargo_fmt_check"),
        Check::Test | Check::Build | Check::Compile | Check::Clippy | Check::Format => None,
    };
    Some(profile.map(str::to_string).ok_or(()))
}

/// A trusted workspace profile named by its id alone ("run lint" for `ws:lint`) or in full.
fn named_workspace_profile(lex: &Lex<'_>, facts: &WorkspaceCommands) -> Option<String> {
    facts.trusted_profiles.iter().find_map(|full| {
        let id = full
            .strip_prefix("ws:")
            .unwrap_or(full)
            .to_ascii_lowercase();
        let named = lex.lower.contains(&full.to_ascii_lowercase())
            || ["run", "run the", "run my", "run our"]
                .iter()
                .any(|verb| lex.has(&format!("{verb} {id}")));
        named.then(|| full.clone())
    })
}

/// A command check: VERIFY_ONLY, no file to read or change, the forbidden targets kept.
fn run(contract: TaskContract, profile: String) -> TaskContract {
    let forbidden: Vec<TargetRef> = contract
        .roleful_targets
        .iter()
        .filter(|t| t.role == TargetRole::Forbidden)
        .cloned()
        .collect();
    let mut out = TaskContract::compiled(
        TaskType::VerifyOnly,
        false,
        contract.original_request,
        Reason::CommandVerification,
        Vec::new(),
        forbidden,
    );
    out.command = CommandAsk::Run(profile);
    out
}

/// A command no profile covers: the fixed answer, listing what exists.
fn unavailable(contract: TaskContract, facts: &WorkspaceCommands) -> TaskContract {
    let mut out = if contract.reason == Reason::UnsupportedCommand {
        contract
    } else {
        TaskContract::compiled(
            TaskType::VerifyOnly,
            false,
            contract.original_request,
            Reason::UnsupportedCommand,
            Vec::new(),
            Vec::new(),
        )
    };
    out.command = CommandAsk::Unavailable(available_profiles(facts));
    out
}

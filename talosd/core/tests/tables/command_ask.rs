//! Commands in plain words, as rows (`contract/commands.rs`): the request and the workspace's
//! facts (build files, trusted profiles) in, the contract's command, type, reason and the
//! surface's command tool out; then the fixed answer that lists the profiles that exist, and
//! the finding a failing check after a change becomes.

use pretty_assertions::assert_eq;
use talos_core::contract::{
    CommandAsk, WorkspaceCommands, after_change_run, resolve, with_workspace,
};
use talos_core::modes::SessionMode;
use talos_core::outcome::{MutationRecord, MutationResult};
use talos_core::plan::TurnPlan;
use talos_core::posture::apply;
use talos_core::tools::ToolId;
use talos_core::turn::route::{self, Route};

fn facts(cargo: bool, gradle: bool, trusted: &[&str]) -> WorkspaceCommands {
    WorkspaceCommands {
        cargo,
        gradle,
        trusted_profiles: trusted.iter().map(|s| s.to_string()).collect(),
    }
}

/// What one row expects: the command, the task type and reason, whether the first surface
/// offers `talos.run_command`.
struct Expect {
    command: CommandAsk,
    task: &'static str,
    reason: &'static str,
    run_command_offered: bool,
}

fn check(request: &str, workspace: &WorkspaceCommands, expected: &Expect) -> Option<String> {
    let contract = with_workspace(resolve(request), workspace);
    let plan = TurnPlan::from_turn(apply(SessionMode::Agent.posture(), contract.clone()));
    let got = (
        contract.command.clone(),
        contract.task_type.as_str(),
        contract.reason.as_str(),
        plan.surface().allows(ToolId::RunCommand),
    );
    let want = (
        expected.command.clone(),
        expected.task,
        expected.reason,
        expected.run_command_offered,
    );
    (got != want).then(|| format!("{request} with {workspace:?}:\n  got  {got:?}\n  want {want:?}"))
}

fn run(profile: &str) -> Expect {
    Expect {
        command: CommandAsk::Run(profile.into()),
        task: "VERIFY_ONLY",
        reason: "explicit-command-verification-request",
        run_command_offered: true,
    }
}

fn unavailable(profiles: &[&str]) -> Expect {
    Expect {
        command: CommandAsk::Unavailable(profiles.iter().map(|s| s.to_string()).collect()),
        task: "VERIFY_ONLY",
        reason: "unsupported-command-verification-request",
        run_command_offered: false,
    }
}

fn after_change(profile: &str, task: &'static str, reason: &'static str) -> Expect {
    Expect {
        command: CommandAsk::AfterChange(profile.into()),
        task,
        reason,
        run_command_offered: true,
    }
}

fn untouched(task: &'static str, reason: &'static str, run_command_offered: bool) -> Expect {
    Expect {
        command: CommandAsk::None,
        task,
        reason,
        run_command_offered,
    }
}

const CARGO_PROFILES: [&str; 5] = [
    "cargo_test",
    "cargo_check",
    "cargo_build",
    "cargo_clippy",
    "cargo_fmt_check",
];

/// Proves plain-word command requests reach the matching profile only where the workspace has
/// it, and that everything else is left as the resolver made it.
#[test]
fn plain_word_commands_match_the_workspace() {
    let cargo = facts(true, false, &[]);
    let gradle = facts(false, true, &[]);
    let none = facts(false, false, &[]);
    let trusted = facts(false, false, &["ws:lint", "ws:unit-tests"]);
    let cargo_and_lint = facts(true, false, &["ws:lint"]);
    let rows: Vec<(&str, &WorkspaceCommands, Expect)> = vec![
        ("Run the tests", &cargo, run("cargo_test")),
        ("run the tests please", &gradle, run("gradle_test")),
        ("run cargo test", &cargo, run("cargo_test")),
        (
            "Run cargo test and tell me if it passes",
            &cargo,
            run("cargo_test"),
        ),
        ("Can you check that it builds?", &cargo, run("cargo_build")),
        ("check that it builds", &gradle, run("gradle_build")),
        ("does it compile?", &cargo, run("cargo_check")),
        ("Does it pass clippy?", &cargo, run("cargo_clippy")),
        ("run cargo fmt --check", &cargo, run("cargo_fmt_check")),
        ("Can you confirm the tests pass?", &cargo, run("cargo_test")),
        ("run lint", &trusted, run("ws:lint")),
        ("Run the lint", &cargo_and_lint, run("ws:lint")),
        ("run unit-tests", &trusted, run("ws:unit-tests")),
        ("run ws:lint now", &trusted, run("ws:lint")),
        // No matching profile: the fixed answer, listing what exists.
        ("Run pytest", &cargo, unavailable(&CARGO_PROFILES)),
        (
            "Run pytest and tell me if it passes",
            &trusted,
            unavailable(&["ws:lint", "ws:unit-tests"]),
        ),
        ("run the tests", &none, unavailable(&[])),
        (
            "does it pass clippy",
            &gradle,
            unavailable(&[
                "gradle_test",
                "gradle_check",
                "gradle_build",
                "gradle_install_dist",
                "gradle_e2e_test",
            ]),
        ),
        (
            "run cargo test",
            &gradle,
            unavailable(&[
                "gradle_test",
                "gradle_check",
                "gradle_build",
                "gradle_install_dist",
                "gradle_e2e_test",
            ]),
        ),
        (
            "run lint",
            &cargo,
            untouched("READ_ONLY_QA", "non-mutating", false),
        ),
        // A change turn that asks for the tests to pass may run them after its changes.
        (
            "Fix the parse function in src/lib.rs so the tests pass",
            &cargo,
            after_change(
                "cargo_test",
                "FILE_EDIT",
                "explicit-fix-problem-in-file-target",
            ),
        ),
        (
            "Fix the parse function in src/lib.rs so the tests pass",
            &none,
            untouched("FILE_EDIT", "explicit-fix-problem-in-file-target", false),
        ),
        (
            "Edit src/lib.rs so it still compiles",
            &cargo,
            after_change("cargo_check", "FILE_EDIT", "explicit-request-pattern"),
        ),
        // Named profiles, questions about commands and unrelated turns are left alone.
        (
            "Run the cargo_test command profile",
            &cargo,
            untouched("VERIFY_ONLY", "explicit-command-verification-request", true),
        ),
        (
            "How do I run the tests?",
            &cargo,
            untouched("READ_ONLY_QA", "non-mutating", false),
        ),
        (
            "hello",
            &cargo,
            untouched("SMALL_TALK", "non-mutating", false),
        ),
        (
            "Why do the tests pass when parse is wrong?",
            &cargo,
            untouched("READ_ONLY_QA", "non-mutating", false),
        ),
        (
            "I ran cargo clippy yesterday and it was fine",
            &cargo,
            untouched("READ_ONLY_QA", "non-mutating", false),
        ),
        (
            "What does settings.py configure?",
            &cargo,
            untouched("READ_ONLY_QA", "non-mutating", false),
        ),
    ];
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|(request, workspace, expected)| check(request, workspace, expected))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Proves a runner with no profile keeps the fixed answer and lists the profiles that exist.
#[test]
fn the_fixed_answer_lists_the_profiles_that_exist() {
    let rows = [
        (
            facts(true, false, &["ws:lint"]),
            "Profiles available in this workspace: cargo_test, cargo_check, cargo_build, cargo_clippy, cargo_fmt_check, ws:lint.",
        ),
        (
            facts(false, false, &[]),
            "No profile applies to this workspace: it has no Cargo.toml or gradlew at its root and no trusted workspace profile.",
        ),
    ];
    for (workspace, listing) in rows {
        let contract = with_workspace(resolve("Run pytest"), &workspace);
        let plan = TurnPlan::from_turn(apply(SessionMode::Agent.posture(), contract));
        let expected = format!("{}\n{listing}", route::UNSUPPORTED_COMMAND_ANSWER);
        assert_eq!(
            route::route(SessionMode::Agent, &plan, "Run pytest", false),
            Route::Fixed(expected)
        );
    }
}

/// Proves a failing check after a change is a task finding, cleared by a later passing run,
/// and that runs before any change or of another profile are not judged.
#[test]
fn a_failing_check_after_the_change_is_a_finding() {
    let cargo = facts(true, false, &[]);
    let asked = with_workspace(
        resolve("Fix the parse function in src/lib.rs so the tests pass"),
        &cargo,
    );
    let plain = resolve("Fix the parse function in src/lib.rs");
    let changed = vec![MutationRecord {
        target: "src/lib.rs".into(),
        result: MutationResult::Succeeded { verified: true },
    }];
    let denied = vec![MutationRecord {
        target: "src/lib.rs".into(),
        result: MutationResult::Denied,
    }];
    let failed = "cargo_test failed after the change (exit code 101)";
    #[rustfmt::skip]
    let rows: Vec<(&_, &str, bool, Option<i32>, &[MutationRecord], Vec<&str>, Vec<&str>)> = vec![
        (&asked, "cargo_test", false, Some(101), &changed, vec![], vec![failed]),
        (&asked, "cargo_test", false, None, &changed, vec![], vec!["cargo_test failed after the change (it did not finish)"]),
        (&asked, "cargo_test", true, Some(0), &changed, vec![failed, "other"], vec!["other"]),
        (&asked, "cargo_test", false, Some(101), &changed, vec![failed], vec![failed]),
        (&asked, "cargo_test", false, Some(101), &[], vec![], vec![]),
        (&asked, "cargo_test", false, Some(101), &denied, vec![], vec![]),
        (&asked, "cargo_clippy", false, Some(101), &changed, vec![], vec![]),
        (&plain, "cargo_test", false, Some(101), &changed, vec![], vec![]),
    ];
    for (contract, profile, passed, exit, mutations, before, expected) in rows {
        let mut findings: Vec<String> = before.iter().map(|s| s.to_string()).collect();
        after_change_run(contract, profile, passed, exit, mutations, &mut findings);
        assert_eq!(
            findings, expected,
            "{profile} passed={passed} exit={exit:?}"
        );
    }
}

/// Proves a change turn that asked for a check offers `talos.run_command` in APPLY and VERIFY
/// (so the run after the change is never a widened surface), and a plain change turn in
/// neither.
#[test]
fn an_after_change_check_is_on_the_surface_in_both_phases() {
    use talos_core::plan::Phase;
    let cargo = facts(true, false, &[]);
    let rows = [
        (
            "Fix the parse function in src/lib.rs so the tests pass",
            true,
        ),
        ("Fix the parse function in src/lib.rs", false),
    ];
    for (request, offered) in rows {
        let contract = with_workspace(resolve(request), &cargo);
        let plan = TurnPlan::from_turn(apply(SessionMode::Agent.posture(), contract));
        for phase in [Phase::Apply, Phase::Verify] {
            assert_eq!(
                plan.surface_for(phase).allows(ToolId::RunCommand),
                offered,
                "{request} in {phase:?}"
            );
        }
        assert!(!plan.surface_for(Phase::Inspect).allows(ToolId::RunCommand));
    }
}

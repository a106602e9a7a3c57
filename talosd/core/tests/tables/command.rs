//! `talos.run_command` as tables: every built-in profile's argv, every accepted argument
//! form, every grammar refusal and screened token with its exact message, the harmless
//! selectors a substring match would wrongly refuse, raw command keys, parameter aliases, timeouts,
//! the working directory, the approval lines, and the call's path through the check
//! sequence (phase policy, read-only contract).

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use talos_core::check::{CheckOutcome, Stage, check_call};
use talos_core::command::{
    self, BUILTIN_IDS, CommandPlan, CommandRequest, Isolation, Program, Registry,
};
use talos_core::contract::resolve;
use talos_core::plan::{Phase, TurnPlan};
use talos_core::posture::{Posture, apply};
use talos_core::tools::{ToolArgs, ToolId, normalise};

fn request(profile: &str, args: &[&str]) -> CommandRequest {
    CommandRequest {
        profile: profile.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        cwd: ".".into(),
        timeout_ms: None,
    }
}

fn plan(profile: &str, args: &[&str]) -> Result<CommandPlan, String> {
    command::plan(&request(profile, args), &Registry::builtin()).map_err(|e| e.to_string())
}

fn refused(detail: &str) -> String {
    format!(
        "Invalid talos.run_command call: {detail} No approval was requested and no command was executed."
    )
}

/// The full argv of a plan, program first.
fn argv(plan: &CommandPlan) -> Vec<String> {
    std::iter::once(plan.program.as_str().to_string())
        .chain(plan.args.iter().cloned())
        .collect()
}

/// Checks a planned argv (program first) or the refusal detail.
fn check(profile: &str, args: &[&str], expected: Result<&[&str], &str>) {
    let actual = plan(profile, args).map(|p| argv(&p));
    let expected = expected
        .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .map_err(refused);
    assert_eq!(actual, expected, "{profile} {args:?}");
}

/// Proves each built-in profile's program, argv, default timeout, caps and expected writes.
#[test]
fn builtin_profile_rows() {
    #[rustfmt::skip]
    let rows: &[(&str, &[&str], u64, &[&str])] = &[
        ("gradle_test", &["./gradlew", "--no-daemon", "test"], 120_000, &["build/", ".gradle/"]),
        ("gradle_check", &["./gradlew", "--no-daemon", "check"], 120_000, &["build/", ".gradle/"]),
        ("gradle_build", &["./gradlew", "--no-daemon", "build"], 120_000, &["build/", ".gradle/"]),
        ("gradle_install_dist", &["./gradlew", "--no-daemon", "installDist"], 120_000, &["build/", ".gradle/"]),
        ("gradle_e2e_test", &["./gradlew", "--no-daemon", "e2eTest"], 120_000, &["build/", ".gradle/"]),
        ("cargo_test", &["cargo", "test"], 300_000, &["target/"]),
        ("cargo_check", &["cargo", "check"], 300_000, &["target/"]),
        ("cargo_build", &["cargo", "build"], 300_000, &["target/"]),
        ("cargo_clippy", &["cargo", "clippy", "--all-targets", "--", "-D", "warnings"], 300_000, &["target/"]),
        ("cargo_fmt_check", &["cargo", "fmt", "--check"], 60_000, &[]),
    ];
    assert_eq!(rows.len(), BUILTIN_IDS.len(), "a built-in is missing a row");
    for (id, expected_argv, timeout, writes) in rows {
        let plan = plan(id, &[]).unwrap();
        assert_eq!(argv(&plan), *expected_argv, "{id}");
        let program_kind = match &plan.program {
            Program::Wrapper(_) => "wrapper",
            Program::OnPath(_) => "path",
            Program::Path(_) => "file",
        };
        let expected_kind = if id.starts_with("gradle_") {
            "wrapper"
        } else {
            "path"
        };
        assert_eq!(program_kind, expected_kind, "{id}");
        assert_eq!(
            (
                plan.profile_id.as_str(),
                plan.cwd.as_str(),
                plan.timeout_ms,
                plan.stdout_cap,
                plan.stderr_cap,
                plan.isolation,
                plan.expected_writes.clone(),
            ),
            (
                *id,
                ".",
                *timeout,
                65_536,
                65_536,
                Isolation::default(),
                writes.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            ),
            "{id}"
        );
    }
}

/// Proves every accepted argument form, per profile kind, lands in the argv in order.
#[test]
fn accepted_argument_rows() {
    #[rustfmt::skip]
    let rows: &[(&str, &[&str], &[&str])] = &[
        ("gradle_test", &["--tests", "*ModelTest*"], &["./gradlew", "--no-daemon", "test", "--tests", "*ModelTest*"]),
        ("gradle_test", &["--stacktrace", "--info"], &["./gradlew", "--no-daemon", "test", "--stacktrace", "--info"]),
        ("gradle_test", &["--tests", "a.B", "--tests", "c.D"], &["./gradlew", "--no-daemon", "test", "--tests", "a.B", "--tests", "c.D"]),
        ("gradle_check", &["--info"], &["./gradlew", "--no-daemon", "check", "--info"]),
        ("gradle_e2e_test", &["--tests", "dev.talos.E2eTest.runs"], &["./gradlew", "--no-daemon", "e2eTest", "--tests", "dev.talos.E2eTest.runs"]),
        ("cargo_test", &["parser::rejects_empty"], &["cargo", "test", "parser::rejects_empty"]),
        ("cargo_test", &["-p", "talos-core", "--verbose", "--offline"], &["cargo", "test", "-p", "talos-core", "--verbose", "--offline"]),
        ("cargo_test", &["--package", "talos_core", "surface_rows", "--", "--exact", "--nocapture"], &["cargo", "test", "--package", "talos_core", "surface_rows", "--", "--exact", "--nocapture"]),
        ("cargo_test", &["--"], &["cargo", "test", "--"]),
        ("cargo_check", &["-p", "a", "-p", "b", "--verbose"], &["cargo", "check", "-p", "a", "-p", "b", "--verbose"]),
        ("cargo_build", &["--offline"], &["cargo", "build", "--offline"]),
        ("cargo_clippy", &["--package", "talos-core"], &["cargo", "clippy", "--all-targets", "--package", "talos-core", "--", "-D", "warnings"]),
        ("cargo_fmt_check", &["-p", "talos-core"], &["cargo", "fmt", "--check", "-p", "talos-core"]),
        ("GRADLE_TEST", &[], &["./gradlew", "--no-daemon", "test"]),
        (" cargo_check ", &[], &["cargo", "check"]),
    ];
    for (profile, args, expected) in rows {
        check(profile, args, Ok(expected));
    }
}

/// Proves each grammar refusal, per profile kind, with its exact message.
#[test]
fn refused_argument_rows() {
    #[rustfmt::skip]
    let rows: &[(&str, &[&str], &str)] = &[
        ("gradle_test", &["--tests"], "Gradle --tests requires a test selector."),
        ("gradle_test", &["--tests", "--info"], "Gradle --tests requires a test selector."),
        ("gradle_test", &["--tests", " "], "Gradle --tests requires a test selector."),
        ("gradle_test", &["--debug"], "Argument `--debug` is not allowed for profile gradle_test."),
        ("gradle_test", &["test"], "Argument `test` is not allowed for profile gradle_test."),
        ("gradle_build", &["--tests=Foo"], "Argument `--tests=Foo` is not allowed for profile gradle_build."),
        ("gradle_check", &["--offline"], "Argument `--offline` is not allowed for profile gradle_check."),
        ("gradle_test", &["-Dorg.gradle.jvmargs=x"], "Argument `-Dorg.gradle.jvmargs=x` is not allowed for profile gradle_test."),
        ("gradle_test", &["--init-script", "x.gradle"], "Argument `--init-script` is not allowed for profile gradle_test."),
        ("cargo_test", &["a", "b"], "Argument `b` is not allowed for profile cargo_test."),
        ("cargo_test", &["tests/*"], "Argument `tests/*` is not allowed for profile cargo_test."),
        ("cargo_test", &["--exact"], "Argument `--exact` is not allowed for profile cargo_test."),
        ("cargo_test", &["--", "--test-threads=1"], "Argument `--test-threads=1` is not allowed for profile cargo_test."),
        ("cargo_test", &["--", "--exact", "--"], "Argument `--` is not allowed for profile cargo_test."),
        ("cargo_test", &["--", "filter"], "Argument `filter` is not allowed for profile cargo_test."),
        ("cargo_test", &["--release"], "Argument `--release` is not allowed for profile cargo_test."),
        ("cargo_test", &["--features", "x"], "Argument `--features` is not allowed for profile cargo_test."),
        ("cargo_test", &["-p"], "Cargo --package requires a package name."),
        ("cargo_test", &["--package", "--verbose"], "Cargo --package requires a package name."),
        ("cargo_test", &["--package", ""], "Cargo --package requires a package name."),
        ("cargo_check", &["-p", "a b"], "Argument `a b` is not allowed for profile cargo_check."),
        ("cargo_check", &["-p", "x@1.0"], "Argument `x@1.0` is not allowed for profile cargo_check."),
        ("cargo_check", &["filter"], "Argument `filter` is not allowed for profile cargo_check."),
        ("cargo_check", &["--"], "Argument `--` is not allowed for profile cargo_check."),
        ("cargo_build", &["--target-dir", "out"], "Argument `--target-dir` is not allowed for profile cargo_build."),
        ("cargo_clippy", &["--verbose"], "Argument `--verbose` is not allowed for profile cargo_clippy."),
        ("cargo_clippy", &["--fix"], "Argument `--fix` is not allowed for profile cargo_clippy."),
        ("cargo_clippy", &["--", "-A", "warnings"], "Argument `--` is not allowed for profile cargo_clippy."),
        ("cargo_fmt_check", &["--offline"], "Argument `--offline` is not allowed for profile cargo_fmt_check."),
        ("cargo_fmt_check", &["--all"], "Argument `--all` is not allowed for profile cargo_fmt_check."),
        ("gradle_clean", &[], "Unknown command profile: gradle_clean"),
        ("git_status", &[], "Unknown command profile: git_status"),
        ("bash", &["-c", "ls"], "Unknown command profile: bash"),
        ("", &[], "Missing required parameter `profile`."),
        ("ws:check", &[], "Workspace profile ws:check is not available: this workspace declares no verification profiles (.talos/profiles.yaml)."),
    ];
    for (profile, args, message) in rows {
        check(profile, args, Err(message));
    }
}

/// Proves every shell operator is refused wherever it sits in an argument, on every kind.
#[test]
fn shell_syntax_rows() {
    #[rustfmt::skip]
    let rows: &[(&str, &str)] = &[
        ("*Test*; rm -rf /", ";"), ("a&&b", "&&"), ("a||b", "||"), ("a|b", "|"), ("a&", "&"),
        ("a>out", ">"), ("<in", "<"), ("`id`", "`"), ("$(id)", "$("), ("${HOME}", "${"),
        ("a\nb", "\\n"), ("a\rb", "\\r"), ("a\0b", "\\0"), ("a\u{1b}[0m", "control character"),
    ];
    for (arg, marker) in rows {
        for (profile, lead) in [
            ("gradle_test", vec!["--tests"]),
            ("cargo_test", vec![]),
            ("cargo_check", vec!["-p"]),
            ("cargo_fmt_check", vec!["--package"]),
        ] {
            let mut args = lead.clone();
            args.push(arg);
            check(
                profile,
                &args,
                Err(&format!(
                    "Argument contains unsupported shell syntax for profile {profile}: {marker}"
                )),
            );
        }
    }
}

/// Proves the network and destructive lists match whole arguments and whole words.
#[test]
fn network_and_destructive_rows() {
    let network = [
        "curl",
        "wget",
        "iwr",
        "invoke-webrequest",
        "fetch",
        "pull",
        "push",
        "publish",
        "ssh",
        "scp",
        "nc",
        "--scan",
        "--refresh-dependencies",
        "https://example.com/x",
        "http://10.0.0.1",
        "ftp://host",
        "git@github.com:a/b",
        "com.example.fetch.Foo",
        "fetch_works",
        "Push",
    ];
    let destructive = [
        "clean",
        "delete",
        "del",
        "rm",
        "rmdir",
        "remove",
        "reset",
        "checkout",
        "purge",
        "--delete",
        "--force",
        "--force=true",
        "--hard",
        "-rf",
        "remove_works",
        "com.example.clean.Foo",
        "Clean",
        "rm:all",
    ];
    for arg in network {
        check(
            "gradle_test",
            &["--tests", arg],
            Err(&format!(
                "Argument has network command risk for profile gradle_test: {arg}"
            )),
        );
    }
    for arg in destructive {
        check(
            "gradle_test",
            &["--tests", arg],
            Err(&format!(
                "Argument has destructive command risk for profile gradle_test: {arg}"
            )),
        );
    }
    // A screen refuses before the grammar: `clean` as a Gradle task is a destructive risk.
    check(
        "gradle_build",
        &["clean"],
        Err("Argument has destructive command risk for profile gradle_build: clean"),
    );
}

/// Proves selectors and filters that merely contain a listed word are accepted: a
/// substring match would refuse the first three.
#[test]
fn harmless_selectors_are_accepted() {
    for selector in [
        "*ModelTest*",
        "*PermissionTest*",
        "*FetcherTest*",
        "*CleanupTest*",
        "*DeleteTest*",
        "com.example.RemoverTest",
        "*PushNotificationTest*",
        "dev.talos.ModelRegistryTest.loadsModels",
        "*HttpClientTest*",
    ] {
        check(
            "gradle_test",
            &["--tests", selector],
            Ok(&["./gradlew", "--no-daemon", "test", "--tests", selector]),
        );
    }
    for filter in [
        "remover_works",
        "model_tests",
        "permissions::ladder",
        "fetcher_parses",
        "cleanup",
    ] {
        check("cargo_test", &[filter], Ok(&["cargo", "test", filter]));
    }
    check(
        "cargo_check",
        &["-p", "talos-model"],
        Ok(&["cargo", "check", "-p", "talos-model"]),
    );
}

fn raw(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A verification turn whose surface has the command tool, in VERIFY.
fn verification_plan() -> TurnPlan {
    TurnPlan::from_turn(apply(
        Posture::Agent,
        resolve("Use talos.run_command with profile gradle_test"),
    ))
}

fn check_in(phase: Phase, args: &[(&str, &str)]) -> CheckOutcome {
    let plan = verification_plan();
    check_call(
        "talos.run_command",
        &raw(args),
        &plan,
        plan.surface(),
        phase,
        false,
    )
}

/// Proves each raw command key is refused with the exact message, before the unknown
/// parameter refusal and whatever else the call holds.
#[test]
fn raw_command_keys_are_refused_by_key() {
    let message = refused("Raw shell commands are not supported. Use an approved command profile.");
    for key in [
        "command",
        "cmd",
        "shell",
        "executable",
        "argv",
        "command_line",
    ] {
        for args in [
            vec![(key, "rm -rf /")],
            vec![("profile", "gradle_test"), (key, "./gradlew test")],
            vec![("profile", "gradle_test"), (key, "")],
            vec![(key, "x"), ("bogus", "y")],
        ] {
            assert_eq!(
                check_in(Phase::Verify, &args),
                CheckOutcome::Rejected {
                    tool: Some(ToolId::RunCommand),
                    stage: Stage::Normalisation,
                    message: message.clone()
                },
                "{args:?}"
            );
        }
    }
    assert_eq!(
        check_in(Phase::Verify, &[("profile", "gradle_test"), ("bogus", "y")]),
        CheckOutcome::Rejected {
            tool: Some(ToolId::RunCommand),
            stage: Stage::Normalisation,
            message: refused("unknown parameter `bogus`.")
        }
    );
}

/// Proves the parameter aliases and the forms `args` arrives in.
#[test]
fn parameter_alias_rows() {
    let expected = |args: &[&str], cwd: &str, timeout| {
        Ok(ToolArgs::RunCommand {
            request: CommandRequest {
                profile: "gradle_test".into(),
                args: args.iter().map(|s| s.to_string()).collect(),
                cwd: cwd.into(),
                timeout_ms: timeout,
            },
        })
    };
    #[rustfmt::skip]
    let rows: &[(&[(&str, &str)], Result<ToolArgs, String>)] = &[
        (&[("profile", "gradle_test")], expected(&[], ".", None)),
        (&[("profile_id", "gradle_test")], expected(&[], ".", None)),
        (&[("id", "gradle_test")], expected(&[], ".", None)),
        (&[("profile", "gradle_test"), ("args", r#"["--info"]"#)], expected(&["--info"], ".", None)),
        (&[("profile", "gradle_test"), ("args_json", r#"["--tests", "*A*"]"#)], expected(&["--tests", "*A*"], ".", None)),
        (&[("profile", "gradle_test"), ("arguments_json", "--info")], expected(&["--info"], ".", None)),
        (&[("profile", "gradle_test"), ("args", "")], expected(&[], ".", None)),
        (&[("profile", "gradle_test"), ("cwd", "app")], expected(&[], "app", None)),
        (&[("profile", "gradle_test"), ("working_dir", "app")], expected(&[], "app", None)),
        (&[("profile", "gradle_test"), ("working_directory", " ")], expected(&[], ".", None)),
        (&[("profile", "gradle_test"), ("timeout_ms", "5000")], expected(&[], ".", Some(5000))),
        (&[("profile", "gradle_test"), ("timeoutMs", "5000")], expected(&[], ".", Some(5000))),
        (&[("profile", "gradle_test"), ("timeout_ms", "")], expected(&[], ".", None)),
        (&[("profile", "gradle_test"), ("args", r#"["--info", 3]"#)], Err("Invalid talos.run_command call: args_json values must be strings.".into())),
        (&[("profile", "gradle_test"), ("args", r#"{"x": "y"}"#)], Err("Invalid talos.run_command call: args_json must be a JSON array of strings.".into())),
        (&[("profile", "gradle_test"), ("timeout_ms", "soon")], Err("Invalid talos.run_command call: timeout_ms must be an integer.".into())),
        (&[("profile", "gradle_test"), ("timeout_ms", "-1")], Err("Invalid talos.run_command call: timeout_ms must be between 1000 and 600000.".into())),
        (&[("profile", " ")], Err("Invalid talos.run_command call: Missing required parameter `profile`.".into())),
        (&[("args", "[]")], Err("Invalid talos.run_command call: Missing required parameter `profile`.".into())),
    ];
    for (args, expected) in rows {
        assert_eq!(
            &normalise(ToolId::RunCommand, &raw(args)).map_err(|e| e.to_string()),
            expected,
            "{args:?}"
        );
    }
}

/// Proves the caller's timeout is refused outside 1000..=600000 and otherwise replaces the
/// profile's default.
#[test]
fn timeout_rows() {
    let rows: &[(Option<u64>, Result<u64, &str>)] = &[
        (None, Ok(120_000)),
        (Some(1_000), Ok(1_000)),
        (Some(600_000), Ok(600_000)),
        (
            Some(999),
            Err("timeout_ms must be between 1000 and 600000."),
        ),
        (
            Some(600_001),
            Err("timeout_ms must be between 1000 and 600000."),
        ),
        (Some(0), Err("timeout_ms must be between 1000 and 600000.")),
    ];
    for (timeout, expected) in rows {
        let mut r = request("gradle_test", &[]);
        r.timeout_ms = *timeout;
        assert_eq!(
            command::plan(&r, &Registry::builtin())
                .map(|p| p.timeout_ms)
                .map_err(|e| e.to_string()),
            expected.map_err(refused),
            "{timeout:?}"
        );
    }
}

/// Proves the working directory is normalised and never leaves the workspace lexically.
#[test]
fn cwd_rows() {
    let rows: &[(&str, Result<&str, &str>)] = &[
        (".", Ok(".")),
        ("./app", Ok("app")),
        ("app/../lib/", Ok("lib")),
        ("app\\sub", Ok("app/sub")),
        ("..", Err("Command cwd escapes workspace: ..")),
        (
            "app/../../..",
            Err("Command cwd escapes workspace: app/../../.."),
        ),
        ("/tmp", Err("Invalid command cwd: /tmp")),
        ("D:/work", Err("Invalid command cwd: D:/work")),
        ("~", Err("Invalid command cwd: ~")),
    ];
    for (cwd, expected) in rows {
        let mut r = request("cargo_test", &[]);
        r.cwd = cwd.to_string();
        assert_eq!(
            command::plan(&r, &Registry::builtin())
                .map(|p| p.cwd)
                .map_err(|e| e.to_string()),
            expected.map(str::to_string).map_err(refused),
            "{cwd}"
        );
    }
}

/// Proves the approval lines of a built-in plan, whole.
#[test]
fn builtin_description() {
    let mut r = request("gradle_test", &["--tests", "*ModelTest*"]);
    r.cwd = "app".into();
    let plan = command::plan(&r, &Registry::builtin()).unwrap();
    assert_eq!(
        plan.description,
        [
            "command profile: gradle_test",
            "argv: ./gradlew --no-daemon test --tests *ModelTest*",
            "program: ./gradlew, the workspace's own Gradle wrapper in the working directory",
            "cwd: app",
            "timeout: 120000 ms (the process tree is killed when it runs out)",
            "output: stdout and stderr each capped at 65536 bytes",
            "expected writes: build/, .gradle/",
            "workspace code: ./gradlew and the build scripts it runs are workspace files, executed with your user permissions",
            "network: host network is not isolated",
            "writes: not confined (the command can change any file your user can)",
            "checkpoint: not taken (commands are not checkpointed)",
            "approval: a remembered file-write approval never covers a command",
        ]
    );
    let cargo = plan_lines("cargo_test");
    assert!(cargo.contains(&"network: host network is not isolated".to_string()));
    assert!(cargo.contains(
        &"workspace code: build scripts, procedural macros and tests are workspace code, executed with your user permissions".to_string()
    ));
}

fn plan_lines(profile: &str) -> Vec<String> {
    plan(profile, &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .description
}

/// Proves the command category in the phase policy: refused in INSPECT with the wording
/// docs/policy.md gives, accepted in VERIFY and APPLY, and not blocked by a read-only contract.
#[test]
fn phase_rows() {
    let call = [("profile", "gradle_test")];
    assert_eq!(
        check_in(Phase::Inspect, &call),
        CheckOutcome::Rejected {
            tool: Some(ToolId::RunCommand),
            stage: Stage::Phase,
            message: "Phase policy blocked talos.run_command during INSPECT. Mutating tools are only allowed during APPLY; this phase allows read, search, and retrieval tools only.".into()
        }
    );
    let plan = verification_plan();
    assert!(!plan.contract().mutation_allowed, "a VERIFY_ONLY turn");
    for phase in [Phase::Verify, Phase::Apply] {
        assert!(
            matches!(
                check_in(phase, &call),
                CheckOutcome::Accepted {
                    tool: ToolId::RunCommand,
                    args: ToolArgs::RunCommand { .. },
                    ..
                }
            ),
            "{phase:?}"
        );
    }
    for alias in [
        "run_command",
        "command_run",
        "runcommand",
        "talos:run_command",
    ] {
        let outcome = check_call(
            alias,
            &raw(&call),
            &plan,
            plan.surface(),
            Phase::Verify,
            false,
        );
        assert!(
            matches!(
                outcome,
                CheckOutcome::Accepted {
                    tool: ToolId::RunCommand,
                    ..
                }
            ),
            "{alias}"
        );
    }
    for name in ["run_shell", "bash", "shell", "exec"] {
        let outcome = check_call(
            name,
            &raw(&call),
            &plan,
            plan.surface(),
            Phase::Verify,
            false,
        );
        assert_eq!(
            outcome,
            CheckOutcome::Rejected {
                tool: None,
                stage: Stage::UnknownTool,
                message: format!("Unknown tool: {name}")
            }
        );
    }
}

/// Proves an agent-mode change turn refuses the command tool at the surface.
#[test]
fn a_change_turn_refuses_the_command_tool() {
    let plan = TurnPlan::from_turn(apply(
        Posture::Agent,
        resolve("please add a test for parsing"),
    ));
    let outcome = check_call(
        "talos.run_command",
        &raw(&[("profile", "cargo_test")]),
        &plan,
        plan.surface(),
        Phase::Apply,
        false,
    );
    assert!(matches!(
        outcome,
        CheckOutcome::Rejected {
            stage: Stage::Surface,
            ..
        }
    ));
}

//! Caller arguments: the fixed screens every argument passes (shell syntax, network risk,
//! destructive risk) and the grammar of each profile kind, decided in one `match`.
//!
//! Shell operators are syntax, so an argument CONTAINING one is refused, although no shell
//! ever sees the argv. The network and destructive lists are words, so they match whole
//! arguments or whole words of an argument split at `-` `_` `=` `:` `.` `/` `,` and
//! whitespace, never substrings: a substring match would refuse harmless test
//! selectors such as `*ModelTest*` (which contains `del`), `*PermissionTest*` (`rm`) and
//! `*FetcherTest*` (`fetch`). Consequences, deliberately: `remover_works` passes (`remover`
//! is not `remove`), while `remove_works` and `com.example.clean.Foo` are refused, because
//! `remove` and `clean` are whole words there. A refused filter costs one retry with a
//! narrower one; a screen that let a risky word through would cost more.

use super::profiles::{Profile, ProfileKind};

/// Why a call's caller arguments were refused for its profile; the text is the refusal
/// detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentError {
    /// A workspace profile was given caller arguments.
    WorkspaceFixedArgv,
    ShellSyntax {
        profile: String,
        marker: &'static str,
    },
    NetworkRisk {
        profile: String,
        argument: String,
    },
    DestructiveRisk {
        profile: String,
        argument: String,
    },
    NotAllowed {
        profile: String,
        argument: String,
    },
    GradleTestsWithoutSelector,
    CargoPackageWithoutName,
}

impl std::fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgumentError::WorkspaceFixedArgv => f.write_str(
                "Workspace profiles run their declared fixed argv only; caller arguments are not accepted.",
            ),
            ArgumentError::ShellSyntax { profile, marker } => write!(
                f,
                "Argument contains unsupported shell syntax for profile {profile}: {marker}"
            ),
            ArgumentError::NetworkRisk { profile, argument } => write!(
                f,
                "Argument has network command risk for profile {profile}: {argument}"
            ),
            ArgumentError::DestructiveRisk { profile, argument } => write!(
                f,
                "Argument has destructive command risk for profile {profile}: {argument}"
            ),
            ArgumentError::NotAllowed { profile, argument } => write!(
                f,
                "Argument `{argument}` is not allowed for profile {profile}."
            ),
            ArgumentError::GradleTestsWithoutSelector => {
                f.write_str("Gradle --tests requires a test selector.")
            }
            ArgumentError::CargoPackageWithoutName => {
                f.write_str("Cargo --package requires a package name.")
            }
        }
    }
}

/// Why a screen refused an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    /// The shell marker found, as shown in the refusal (`\n` for a newline).
    ShellSyntax(&'static str),
    Network,
    Destructive,
}

/// Shell operators, in the order they are reported; each pair is (text, as shown). Longer
/// operators come before their prefixes.
const SHELL_MARKERS: [(&str, &str); 13] = [
    (";", ";"),
    ("&&", "&&"),
    ("||", "||"),
    ("|", "|"),
    ("&", "&"),
    (">", ">"),
    ("<", "<"),
    ("`", "`"),
    ("$(", "$("),
    ("${", "${"),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\0", "\\0"),
];

/// Network risk: whole arguments (also before an `=`), contained markers, and whole words.
const NETWORK_ARGUMENTS: [&str; 3] = ["--scan", "invoke-webrequest", "--refresh-dependencies"];
const NETWORK_MARKERS: [&str; 2] = ["://", "git@"];
#[rustfmt::skip]
const NETWORK_WORDS: [&str; 15] = [
    "curl", "wget", "iwr", "fetch", "pull", "push", "publish", "ssh", "scp", "sftp", "rsync",
    "nc", "ncat", "netcat", "telnet",
];

/// Destructive risk: whole arguments (also before an `=`) and whole words.
const DESTRUCTIVE_ARGUMENTS: [&str; 5] = ["--delete", "--force", "--hard", "-rf", "-fr"];
#[rustfmt::skip]
const DESTRUCTIVE_WORDS: [&str; 10] = [
    "clean", "delete", "del", "rm", "rmdir", "remove", "reset", "checkout", "purge", "wipe",
];

/// Where an argument splits into words for the word lists.
const WORD_SEPARATORS: [char; 7] = ['-', '_', '=', ':', '.', '/', ','];

/// The first shell marker `text` contains, as shown in a refusal; any other control
/// character is reported as `control character`.
pub fn shell_marker(text: &str) -> Option<&'static str> {
    SHELL_MARKERS
        .iter()
        .find(|(marker, _)| text.contains(marker))
        .map(|(_, shown)| *shown)
        .or_else(|| {
            text.chars()
                .any(char::is_control)
                .then_some("control character")
        })
}

/// The first screen that refuses `arg`: shell syntax, then network, then destructive.
pub fn screen_argument(arg: &str) -> Option<Screen> {
    if let Some(marker) = shell_marker(arg) {
        return Some(Screen::ShellSyntax(marker));
    }
    let lower = arg.to_lowercase();
    let whole = lower
        .split_once('=')
        .map_or(lower.as_str(), |(head, _)| head);
    let words: Vec<&str> = lower
        .split(|c: char| WORD_SEPARATORS.contains(&c) || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let listed = |arguments: &[&str], list: &[&str]| {
        arguments.contains(&lower.as_str())
            || arguments.contains(&whole)
            || words.iter().any(|w| list.contains(w))
    };
    if NETWORK_MARKERS.iter().any(|m| lower.contains(m))
        || listed(&NETWORK_ARGUMENTS, &NETWORK_WORDS)
    {
        return Some(Screen::Network);
    }
    if listed(&DESTRUCTIVE_ARGUMENTS, &DESTRUCTIVE_WORDS) {
        return Some(Screen::Destructive);
    }
    None
}

/// Checks a call's caller arguments against its profile: the grammar of the profile's kind,
/// after the screens. The error is the refusal detail.
pub(super) fn check_arguments(profile: &Profile, args: &[String]) -> Result<(), ArgumentError> {
    let id = profile.id();
    match profile.kind() {
        ProfileKind::Workspace => {
            if args.is_empty() {
                Ok(())
            } else {
                Err(ArgumentError::WorkspaceFixedArgv)
            }
        }
        ProfileKind::Gradle => screened(id, args).and_then(|()| gradle(id, args)),
        ProfileKind::CargoTest => screened(id, args).and_then(|()| {
            cargo(
                id,
                args,
                CargoForm {
                    filter: true,
                    verbose: true,
                    offline: true,
                    harness: true,
                },
            )
        }),
        ProfileKind::CargoBuild => screened(id, args).and_then(|()| {
            cargo(
                id,
                args,
                CargoForm {
                    filter: false,
                    verbose: true,
                    offline: true,
                    harness: false,
                },
            )
        }),
        ProfileKind::CargoPackageOnly => screened(id, args).and_then(|()| {
            cargo(
                id,
                args,
                CargoForm {
                    filter: false,
                    verbose: false,
                    offline: false,
                    harness: false,
                },
            )
        }),
    }
}

/// Which parts of the Cargo grammar a profile accepts besides `--package`/`-p <name>`.
#[derive(Debug, Clone, Copy)]
struct CargoForm {
    /// One test-name filter.
    filter: bool,
    verbose: bool,
    offline: bool,
    /// A `--` followed only by `--exact` and `--nocapture` (the test harness's flags).
    harness: bool,
}

fn screened(id: &str, args: &[String]) -> Result<(), ArgumentError> {
    for arg in args {
        match screen_argument(arg) {
            None => {}
            Some(Screen::ShellSyntax(marker)) => {
                return Err(ArgumentError::ShellSyntax {
                    profile: id.into(),
                    marker,
                });
            }
            Some(Screen::Network) => {
                return Err(ArgumentError::NetworkRisk {
                    profile: id.into(),
                    argument: arg.clone(),
                });
            }
            Some(Screen::Destructive) => {
                return Err(ArgumentError::DestructiveRisk {
                    profile: id.into(),
                    argument: arg.clone(),
                });
            }
        }
    }
    Ok(())
}

fn not_allowed(id: &str, arg: &str) -> ArgumentError {
    ArgumentError::NotAllowed {
        profile: id.into(),
        argument: arg.into(),
    }
}

/// `--tests <selector>` (the selector present and not a flag), `--stacktrace`, `--info`.
fn gradle(id: &str, args: &[String]) -> Result<(), ArgumentError> {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--stacktrace" | "--info" => {}
            "--tests" => match rest.next() {
                Some(selector) if !selector.trim().is_empty() && !selector.starts_with('-') => {}
                Some(_) | None => return Err(ArgumentError::GradleTestsWithoutSelector),
            },
            other => return Err(not_allowed(id, other)),
        }
    }
    Ok(())
}

fn cargo(id: &str, args: &[String], form: CargoForm) -> Result<(), ArgumentError> {
    let mut rest = args.iter();
    let mut filtered = false;
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--package" | "-p" => match rest.next() {
                Some(name) if is_package_name(name) => {}
                Some(name) if !name.is_empty() && !name.starts_with('-') => {
                    return Err(not_allowed(id, name));
                }
                Some(_) | None => return Err(ArgumentError::CargoPackageWithoutName),
            },
            "--verbose" if form.verbose => {}
            "--offline" if form.offline => {}
            "--" if form.harness => {
                return match rest.find(|h| !matches!(h.as_str(), "--exact" | "--nocapture")) {
                    Some(other) => Err(not_allowed(id, other)),
                    None => Ok(()),
                };
            }
            filter if form.filter && !filtered && is_test_filter(filter) => filtered = true,
            other => return Err(not_allowed(id, other)),
        }
    }
    Ok(())
}

/// A Cargo package name: 1..=64 of `[A-Za-z0-9_-]`, not starting with `-`.
fn is_package_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A Rust test-name filter: 1..=256 of `[A-Za-z0-9_:]` (a test path such as
/// `parser::rejects_empty`), so never a flag.
fn is_test_filter(filter: &str) -> bool {
    (1..=256).contains(&filter.len())
        && filter
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

//! Commands: `talos.run_command` as a plan, never as a shell string. A call names a profile
//! (a built-in Gradle or Cargo verification task, or a trusted `ws:<id>` workspace profile);
//! [`plan`] checks its caller arguments against that profile's grammar and the fixed screens,
//! checks the working directory lexically and the timeout, and returns the argv, the caps and
//! the lines the approval prompt shows. Running it is the daemon's job, and so are the checks
//! that need the disk (the wrapper exists, the cwd does not escape through a symlink).
//!
//! Profiles narrow what Talos launches and with which arguments; they do not contain what the
//! launched program does. The description says so plainly: build scripts are workspace code
//! running with the user's permissions, the host network is not isolated unless the profile
//! asks for isolation, and no checkpoint is taken.
//!
//! Submodules: `profiles` (built-ins and the registry), `grammar` (caller arguments and the
//! screens), `workspace` (`.talos/profiles.yaml` declarations and their trust pin), `output`
//! (secret redaction and the high-entropy check on captured output).

mod grammar;
mod output;
mod profiles;
mod trust;
mod workspace;

pub use grammar::{ArgumentError, Screen, screen_argument, shell_marker};
pub use output::{Redacted, high_entropy, redact_secrets};
pub use profiles::{BUILTIN_IDS, Profile, ProfileKind, ProfileUnavailable, Registry};
pub use trust::TrustState;
pub use workspace::{
    DeclarationError, DeclaredProfile, PinState, ProfileProblem, trust_state, validate_declaration,
};

/// A `talos.run_command` call after normalisation: what was asked for, not yet planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    /// A built-in id (`gradle_test`) or a workspace id (`ws:check`).
    pub profile: String,
    /// Caller arguments, each one argv token.
    pub args: Vec<String>,
    /// Workspace-relative working directory; `.` is the root.
    pub cwd: String,
    /// The caller's timeout; `None` takes the profile's default.
    pub timeout_ms: Option<u64>,
}

/// What the daemon is asked to confine. The daemon verifies what the kernel granted and
/// reports it; a plan only states the request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Isolation {
    /// Run in a new network namespace.
    pub network: bool,
    /// Confine writes to the workspace and a temp dir (Landlock).
    pub writes: bool,
}

/// The program a plan launches. Never a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// The workspace's own wrapper script (`./gradlew`), resolved in the plan's cwd by the
    /// daemon, which refuses the run when it is missing.
    Wrapper(&'static str),
    /// A bare program name found on the daemon's `PATH` (`cargo`).
    OnPath(String),
    /// A path from a trusted declaration: absolute, or relative to the workspace root.
    Path(String),
}

/// A checked command, ready for approval and then for the daemon to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPlan {
    pub profile_id: String,
    pub program: Program,
    /// The full argv after the program: the profile's template with the caller's arguments.
    pub args: Vec<String>,
    /// Workspace-relative and lexically normalised (`.` for the root, no `..`).
    pub cwd: String,
    pub timeout_ms: u64,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
    pub isolation: Isolation,
    pub expected_writes: Vec<String>,
    /// The lines the approval prompt shows, in order.
    pub description: Vec<String>,
}

/// Any of these keys on a `talos.run_command` call is a raw shell command.
pub const RAW_COMMAND_KEYS: [&str; 6] = [
    "command",
    "cmd",
    "shell",
    "executable",
    "argv",
    "command_line",
];

/// The refusal of a raw shell command, whatever else the call holds.
pub const RAW_COMMAND_REFUSAL: &str =
    "Raw shell commands are not supported. Use an approved command profile.";

/// Bytes of stdout, and separately of stderr, kept from one run.
pub const OUTPUT_CAP_BYTES: usize = 65_536;
/// The caller's timeout bounds, inclusive.
pub const MIN_TIMEOUT_MS: u64 = 1_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;

const TIMEOUT_NOT_INTEGER: &str = "timeout_ms must be an integer.";
const TIMEOUT_OUT_OF_RANGE: &str = "timeout_ms must be between 1000 and 600000.";

/// Why a command call's parameters were refused: its text is the refusal detail, which
/// [`refusal`] (or the tool's own "Invalid … call:" prefix) wraps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// `args` was not valid JSON; the parser's message.
    ArgsJson(String),
    ArgsNotArray,
    ArgsNotStrings,
    TimeoutNotInteger,
    TimeoutOutOfRange,
    MissingProfile,
    /// The profile is unknown or not available in this workspace.
    Profile(ProfileUnavailable),
    /// The caller's arguments break the profile's grammar or a screen.
    Arguments(ArgumentError),
    /// The cwd as given (absolute, home-relative, too long or holding a control character).
    InvalidCwd(String),
    /// The cwd as given, which climbs above the workspace root.
    CwdEscapes(String),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::ArgsJson(e) => write!(f, "Invalid args_json: {e}"),
            CommandError::ArgsNotArray => f.write_str("args_json must be a JSON array of strings."),
            CommandError::ArgsNotStrings => f.write_str("args_json values must be strings."),
            CommandError::TimeoutNotInteger => f.write_str(TIMEOUT_NOT_INTEGER),
            CommandError::TimeoutOutOfRange => f.write_str(TIMEOUT_OUT_OF_RANGE),
            CommandError::MissingProfile => f.write_str("Missing required parameter `profile`."),
            CommandError::Profile(unavailable) => write!(f, "{unavailable}"),
            CommandError::Arguments(error) => write!(f, "{error}"),
            CommandError::InvalidCwd(raw) => {
                write!(f, "Invalid command cwd: {}", raw.escape_default())
            }
            CommandError::CwdEscapes(raw) => {
                write!(f, "Command cwd escapes workspace: {}", raw.escape_default())
            }
        }
    }
}

impl std::error::Error for CommandError {}

/// A refused `talos.run_command` plan: the detail wrapped the way every command refusal
/// reads (see [`refusal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRefusal(pub CommandError);

impl std::fmt::Display for CommandRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&refusal(&self.0.to_string()))
    }
}

impl std::error::Error for CommandRefusal {}

impl Program {
    /// How the program is written in the argv line of the approval.
    pub fn as_str(&self) -> &str {
        match self {
            Program::Wrapper(name) => name,
            Program::OnPath(name) | Program::Path(name) => name,
        }
    }
}

impl CommandPlan {
    /// The argv as one line for people: the program then each argument, quoted when it holds
    /// whitespace, a quote or nothing. Display only; nothing ever parses it.
    pub fn argv_line(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .map(display_token)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Wraps a refusal detail the way every command refusal reads.
pub fn refusal(detail: &str) -> String {
    format!(
        "Invalid talos.run_command call: {detail} No approval was requested and no command was executed."
    )
}

/// Parses the `args` parameter: the JSON text of an array of strings (a native array arrives
/// flattened to its JSON text), or any other non-blank text as a single argument. Blank is
/// no arguments. The error is the refusal detail.
pub fn parse_args(text: &str) -> Result<Vec<String>, CommandError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    if !trimmed.starts_with('[') && !trimmed.starts_with('{') {
        return Ok(vec![trimmed.to_string()]);
    }
    let value: serde_json::Value =
        serde_json::from_str(trimmed).map_err(|e| CommandError::ArgsJson(e.to_string()))?;
    let serde_json::Value::Array(items) = value else {
        return Err(CommandError::ArgsNotArray);
    };
    items
        .into_iter()
        .map(|item| match item {
            serde_json::Value::String(s) => Ok(s),
            serde_json::Value::Null
            | serde_json::Value::Bool(_)
            | serde_json::Value::Number(_)
            | serde_json::Value::Array(_)
            | serde_json::Value::Object(_) => Err(CommandError::ArgsNotStrings),
        })
        .collect()
}

/// Parses the caller's `timeout_ms`; the range is checked by [`plan`]. The error is the
/// refusal detail.
pub fn parse_timeout(text: &str) -> Result<u64, CommandError> {
    let trimmed = text.trim();
    let digits = trimmed.strip_prefix(['-', '+']).unwrap_or(trimmed);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CommandError::TimeoutNotInteger);
    }
    if trimmed.starts_with('-') {
        return Err(CommandError::TimeoutOutOfRange);
    }
    digits.parse().map_err(|_| CommandError::TimeoutOutOfRange)
}

/// Checks a request against the registry and builds its plan. Every refusal is already
/// wrapped by [`refusal`]; nothing was asked and nothing ran.
pub fn plan(request: &CommandRequest, registry: &Registry) -> Result<CommandPlan, CommandRefusal> {
    plan_detail(request, registry).map_err(CommandRefusal)
}

fn plan_detail(request: &CommandRequest, registry: &Registry) -> Result<CommandPlan, CommandError> {
    let id = request.profile.trim().to_lowercase();
    if id.is_empty() {
        return Err(CommandError::MissingProfile);
    }
    let profile = registry.lookup(&id).map_err(CommandError::Profile)?;
    grammar::check_arguments(profile, &request.args).map_err(CommandError::Arguments)?;
    let cwd = relative_cwd(&request.cwd)?;
    let timeout_ms = match request.timeout_ms {
        None => profile.default_timeout_ms(),
        Some(ms) if (MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&ms) => ms,
        Some(_) => return Err(CommandError::TimeoutOutOfRange),
    };
    let mut args = profile.argv_prefix().to_vec();
    args.extend(request.args.iter().cloned());
    args.extend(profile.argv_suffix().iter().cloned());
    let mut plan = CommandPlan {
        profile_id: profile.id().to_string(),
        program: profile.program().clone(),
        args,
        cwd,
        timeout_ms,
        stdout_cap: OUTPUT_CAP_BYTES,
        stderr_cap: OUTPUT_CAP_BYTES,
        isolation: profile.isolation(),
        expected_writes: profile.expected_writes().to_vec(),
        description: Vec::new(),
    };
    plan.description = describe(&plan, profile);
    Ok(plan)
}

/// The approval lines: what runs, where, for how long, what it may write, what runs with the
/// user's permissions, and what is and is not isolated or checkpointed.
fn describe(plan: &CommandPlan, profile: &Profile) -> Vec<String> {
    let writes = if plan.expected_writes.is_empty() {
        "none declared".to_string()
    } else {
        plan.expected_writes.join(", ")
    };
    vec![
        format!("command profile: {}", plan.profile_id),
        format!("argv: {}", plan.argv_line()),
        format!("program: {}", profile.program_note()),
        format!("cwd: {}", plan.cwd),
        format!(
            "timeout: {} ms (the process tree is killed when it runs out)",
            plan.timeout_ms
        ),
        format!(
            "output: stdout and stderr each capped at {} bytes",
            plan.stdout_cap
        ),
        format!("expected writes: {writes}"),
        format!("workspace code: {}", profile.code_note()),
        if plan.isolation.network {
            "network: isolated (a new network namespace, if the kernel grants it)".into()
        } else {
            "network: host network is not isolated".into()
        },
        if plan.isolation.writes {
            "writes: confined to the workspace and a temp dir (Landlock, if the kernel grants it)"
                .into()
        } else {
            "writes: not confined (the command can change any file your user can)".into()
        },
        "checkpoint: not taken (commands are not checkpointed)".into(),
        "approval: a remembered file-write approval never covers a command".into(),
    ]
}

/// The working directory, lexically: see [`workspace_relative`]. The daemon checks it again
/// on disk (symlinks) before the run.
fn relative_cwd(raw: &str) -> Result<String, CommandError> {
    workspace_relative(raw).map_err(|problem| match problem {
        Lexical::Invalid => CommandError::InvalidCwd(raw.into()),
        Lexical::Escapes => CommandError::CwdEscapes(raw.into()),
    })
}

/// Why a path was refused lexically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lexical {
    /// Absolute, home-relative, too long, or holding a control character.
    Invalid,
    /// A `..` climbs above the workspace root.
    Escapes,
}

/// A workspace-relative path, lexically: trimmed, `\` read as `/`, `.` and empty segments
/// dropped, `..` resolved without ever climbing above the root; `.` for the root itself.
fn workspace_relative(raw: &str) -> Result<String, Lexical> {
    let text = raw.trim();
    if text.chars().any(char::is_control) || text.len() > 4096 {
        return Err(Lexical::Invalid);
    }
    let slashed = text.replace('\\', "/");
    if slashed.starts_with('/') || slashed.starts_with('~') || has_drive(&slashed) {
        return Err(Lexical::Invalid);
    }
    let segments = crate::text::pathname::segments(&slashed).map_err(|_| Lexical::Escapes)?;
    Ok(crate::text::pathname::joined(&segments))
}

/// `C:` and the like: a Windows drive, absolute or drive-relative, never workspace-relative.
fn has_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

fn display_token(token: &str) -> String {
    if token.is_empty()
        || token
            .chars()
            .any(|c| c.is_whitespace() || c == '"' || c == '\'')
    {
        format!("{token:?}")
    } else {
        token.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves the cwd is normalised lexically and refused when it leaves the root.
    #[test]
    fn cwd_rows() {
        let rows: &[(&str, Result<&str, &str>)] = &[
            ("", Ok(".")),
            (".", Ok(".")),
            ("./", Ok(".")),
            ("app", Ok("app")),
            ("./app/", Ok("app")),
            ("app\\core", Ok("app/core")),
            ("app/../lib", Ok("lib")),
            ("app/..", Ok(".")),
            ("..", Err("Command cwd escapes workspace: ..")),
            (
                "app/../../x",
                Err("Command cwd escapes workspace: app/../../x"),
            ),
            ("/etc", Err("Invalid command cwd: /etc")),
            ("C:\\work", Err("Invalid command cwd: C:\\\\work")),
            ("~/x", Err("Invalid command cwd: ~/x")),
            ("a\nb", Err("Invalid command cwd: a\\nb")),
        ];
        for (raw, expected) in rows {
            assert_eq!(
                relative_cwd(raw).map_err(|e| e.to_string()),
                expected.map(str::to_string).map_err(str::to_string),
                "{raw:?}"
            );
        }
    }

    /// Proves the args parameter: JSON array text, a single string, blank, and the refusals.
    #[test]
    fn args_rows() {
        let ok = |v: &[&str]| Ok(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let parse_args = |text: &str| parse_args(text).map_err(|e| e.to_string());
        assert_eq!(
            parse_args(r#"["--tests", "*ModelTest*"]"#),
            ok(&["--tests", "*ModelTest*"])
        );
        assert_eq!(parse_args(" --info "), ok(&["--info"]));
        assert_eq!(parse_args(""), ok(&[]));
        assert_eq!(parse_args("[]"), ok(&[]));
        assert_eq!(
            parse_args("[1]"),
            Err("args_json values must be strings.".into())
        );
        assert_eq!(
            parse_args(r#"{"a": "b"}"#),
            Err("args_json must be a JSON array of strings.".into())
        );
        assert!(
            parse_args("[\"a\"")
                .unwrap_err()
                .starts_with("Invalid args_json: ")
        );
    }

    /// Proves timeout parsing: integers only; negative and overflowing values are out of range.
    #[test]
    fn timeout_rows() {
        let parse_timeout = |text: &str| parse_timeout(text).map_err(|e| e.to_string());
        assert_eq!(parse_timeout(" 5000 "), Ok(5000));
        assert_eq!(parse_timeout("+5000"), Ok(5000));
        assert_eq!(parse_timeout("5s"), Err(TIMEOUT_NOT_INTEGER.into()));
        assert_eq!(parse_timeout("1.5"), Err(TIMEOUT_NOT_INTEGER.into()));
        assert_eq!(parse_timeout("-"), Err(TIMEOUT_NOT_INTEGER.into()));
        assert_eq!(parse_timeout("-5"), Err(TIMEOUT_OUT_OF_RANGE.into()));
        assert_eq!(
            parse_timeout("99999999999999999999999"),
            Err(TIMEOUT_OUT_OF_RANGE.into())
        );
    }
}

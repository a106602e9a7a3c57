//! Workspace profiles: the values parsed from `.talos/profiles.yaml` (parsing YAML, reading
//! the file and the pin are the daemon's job), checked here into `ws:<id>` profiles, and the
//! trust decision over the declaration's SHA-256 and the pin kept outside the workspace.
//! Any problem refuses the whole declaration with one reason. Only a trusted declaration
//! registers profiles; a corrupt pin fails closed.

use super::grammar::shell_marker;
use super::profiles::{Profile, ProfileKind, WORKSPACE_DEFAULT_TIMEOUT_MS};
use super::trust::TrustState;
use super::{Isolation, Lexical, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, Program, workspace_relative};

/// One profile as the declaration states it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredProfile {
    /// `[a-z0-9_-]{1,32}` after trimming and lower-casing; registered as `ws:<id>`.
    pub id: String,
    /// A bare name (found on `PATH`), an absolute path, or a workspace-relative path.
    pub executable: String,
    /// The fixed argv: at most 32, each non-blank and at most 256 chars.
    pub args: Vec<String>,
    /// Clamped to 1000..=600000; 120000 when absent.
    pub timeout_ms: Option<u64>,
    /// Workspace-relative paths the run is expected to write.
    pub expected_writes: Vec<String>,
    /// What to isolate the run from: `network`, `writes`.
    pub isolate: Vec<String>,
}

/// The pin kept in the Talos home for this workspace, as the daemon read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinState {
    Absent,
    /// Unparseable, the wrong schema or workspace: treated as no pin (fail closed).
    Corrupt,
    /// The pinned SHA-256 (hex) of the declaration's raw bytes.
    Pinned(String),
}

/// Why a declaration registers no profiles: the one reason that refuses the whole of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclarationError {
    /// The file is blank, or declares no profiles.
    Empty,
    /// The file is larger than the daemon reads (the limit in bytes).
    TooLarge(u64),
    /// The YAML parser's message.
    Yaml(String),
    /// How many profiles were declared.
    TooMany(usize),
    /// The 1-based position of a profile whose id is malformed.
    BadId(usize),
    DuplicateId(String),
    BuiltinId(String),
    Profile {
        id: String,
        problem: ProfileProblem,
    },
}

/// What is wrong with one declared profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileProblem {
    MissingExecutable,
    ExecutableTooLong,
    /// The executable as declared.
    ExecutableEscapes(String),
    /// The shell marker found in the executable or an argument.
    ShellSyntax(&'static str),
    /// How many args were declared.
    TooManyArgs(usize),
    /// 1-based.
    BlankArg(usize),
    /// 1-based.
    ArgTooLong(usize),
    WriteEscapes(String),
    UnsupportedIsolation(String),
}

impl std::fmt::Display for DeclarationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeclarationError::Empty => f.write_str("declaration is empty"),
            DeclarationError::TooLarge(limit) => write!(f, "declaration exceeds {limit} bytes"),
            DeclarationError::Yaml(error) => write!(f, "YAML parse failed: {error}"),
            DeclarationError::TooMany(count) => write!(
                f,
                "at most {MAX_PROFILES} profiles may be declared, found {count}"
            ),
            DeclarationError::BadId(position) => {
                write!(f, "profile #{position} id must match [a-z0-9_-]{{1,32}}")
            }
            DeclarationError::DuplicateId(id) => write!(f, "duplicate profile id: {id}"),
            DeclarationError::BuiltinId(id) => {
                write!(f, "workspace profile id collides with a built-in: {id}")
            }
            DeclarationError::Profile { id, problem } => write!(f, "profile `{id}` {problem}"),
        }
    }
}

impl std::fmt::Display for ProfileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileProblem::MissingExecutable => f.write_str("is missing `executable`"),
            ProfileProblem::ExecutableTooLong => {
                write!(f, "executable exceeds {MAX_EXECUTABLE_CHARS} chars")
            }
            ProfileProblem::ExecutableEscapes(executable) => write!(
                f,
                "executable escapes the workspace: {}",
                executable.escape_default()
            ),
            ProfileProblem::ShellSyntax(marker) => write!(f, "contains shell syntax: {marker}"),
            ProfileProblem::TooManyArgs(count) => {
                write!(f, "declares {count} args; at most {MAX_ARGS} are allowed")
            }
            ProfileProblem::BlankArg(position) => write!(f, "arg #{position} is blank"),
            ProfileProblem::ArgTooLong(position) => {
                write!(f, "arg #{position} exceeds {MAX_ARG_CHARS} chars")
            }
            ProfileProblem::WriteEscapes(write) => write!(
                f,
                "expected write escapes the workspace: {}",
                write.escape_default()
            ),
            ProfileProblem::UnsupportedIsolation(value) => write!(
                f,
                "isolate value `{}` is not supported (allowed: network, writes)",
                value.escape_default()
            ),
        }
    }
}

impl std::error::Error for DeclarationError {}

const MAX_PROFILES: usize = 8;
const MAX_ID_CHARS: usize = 32;
const MAX_EXECUTABLE_CHARS: usize = 260;
const MAX_ARGS: usize = 32;
const MAX_ARG_CHARS: usize = 256;

/// The trust decision. `declaration` is the SHA-256 hex of the file's raw bytes with the
/// result of [`validate_declaration`], or `None` when nothing is declared. Trusted only when
/// the declaration is valid and both hashes are well-formed and equal; a pin that is not a
/// SHA-256 hex string counts as corrupt.
pub fn trust_state(
    declaration: Option<(&str, &Result<Vec<Profile>, DeclarationError>)>,
    pin: &PinState,
) -> TrustState {
    let Some((sha, validated)) = declaration else {
        return TrustState::NoneDeclared;
    };
    if let Err(reason) = validated {
        return TrustState::Invalid(reason.to_string());
    }
    match pin {
        PinState::Absent | PinState::Corrupt => TrustState::UntrustedNew,
        PinState::Pinned(pinned) if !is_sha256_hex(pinned) => TrustState::UntrustedNew,
        PinState::Pinned(pinned) if is_sha256_hex(sha) && pinned.eq_ignore_ascii_case(sha) => {
            TrustState::Trusted
        }
        PinState::Pinned(_) => TrustState::UntrustedChanged,
    }
}

/// Checks a parsed declaration into `ws:<id>` profiles, or refuses the whole of it with the
/// first problem. `builtin_ids` are the ids a workspace profile may not take
/// ([`super::BUILTIN_IDS`]). Whether a relative executable exists is the daemon's check.
pub fn validate_declaration(
    profiles: &[DeclaredProfile],
    builtin_ids: &[&str],
) -> Result<Vec<Profile>, DeclarationError> {
    if profiles.is_empty() {
        return Err(DeclarationError::Empty);
    }
    if profiles.len() > MAX_PROFILES {
        return Err(DeclarationError::TooMany(profiles.len()));
    }
    let mut checked: Vec<Profile> = Vec::new();
    for (index, declared) in profiles.iter().enumerate() {
        let id = declared.id.trim().to_lowercase();
        if !is_profile_id(&id) {
            return Err(DeclarationError::BadId(index + 1));
        }
        let registered = format!("ws:{id}");
        if checked.iter().any(|p| p.id == registered) {
            return Err(DeclarationError::DuplicateId(id));
        }
        if builtin_ids.contains(&id.as_str()) || builtin_ids.contains(&registered.as_str()) {
            return Err(DeclarationError::BuiltinId(id));
        }
        let checked_profile = profile(registered, declared)
            .map_err(|problem| DeclarationError::Profile { id, problem })?;
        checked.push(checked_profile);
    }
    Ok(checked)
}

fn profile(registered: String, declared: &DeclaredProfile) -> Result<Profile, ProfileProblem> {
    let executable = declared.executable.trim();
    if executable.is_empty() {
        return Err(ProfileProblem::MissingExecutable);
    }
    if executable.chars().count() > MAX_EXECUTABLE_CHARS {
        return Err(ProfileProblem::ExecutableTooLong);
    }
    if let Some(marker) = shell_marker(executable) {
        return Err(ProfileProblem::ShellSyntax(marker));
    }
    let (program, program_note) = program(executable)?;
    if declared.args.len() > MAX_ARGS {
        return Err(ProfileProblem::TooManyArgs(declared.args.len()));
    }
    for (index, arg) in declared.args.iter().enumerate() {
        if arg.trim().is_empty() {
            return Err(ProfileProblem::BlankArg(index + 1));
        }
        if arg.chars().count() > MAX_ARG_CHARS {
            return Err(ProfileProblem::ArgTooLong(index + 1));
        }
        if let Some(marker) = shell_marker(arg) {
            return Err(ProfileProblem::ShellSyntax(marker));
        }
    }
    let mut expected_writes = Vec::new();
    for write in &declared.expected_writes {
        if write.trim().is_empty() || workspace_relative(write).is_err() {
            return Err(ProfileProblem::WriteEscapes(write.clone()));
        }
        expected_writes.push(write.trim().to_string());
    }
    let mut isolation = Isolation::default();
    for value in &declared.isolate {
        match value.trim().to_lowercase().as_str() {
            "network" => isolation.network = true,
            "writes" => isolation.writes = true,
            other => return Err(ProfileProblem::UnsupportedIsolation(other.into())),
        }
    }
    let code_note = format!(
        "{executable} is declared by this workspace and runs with your user permissions; Talos does not contain what it does"
    );
    Ok(Profile {
        id: registered,
        kind: ProfileKind::Workspace,
        program,
        argv_prefix: declared.args.clone(),
        argv_suffix: Vec::new(),
        default_timeout_ms: declared
            .timeout_ms
            .map_or(WORKSPACE_DEFAULT_TIMEOUT_MS, |t| {
                t.clamp(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS)
            }),
        expected_writes,
        isolation,
        program_note,
        code_note,
    })
}

/// The executable as a program: a bare name on `PATH`, an absolute path as given, or a
/// workspace-relative path normalised lexically (it must not climb above the root).
fn program(executable: &str) -> Result<(Program, String), ProfileProblem> {
    let escapes = || ProfileProblem::ExecutableEscapes(executable.into());
    let slashed = executable.replace('\\', "/");
    let absolute = slashed.starts_with('/') || super::has_drive(&slashed);
    if absolute {
        return Ok((
            Program::Path(executable.to_string()),
            format!("{executable}, an absolute path declared by this workspace"),
        ));
    }
    if !slashed.contains('/') && executable != "." && executable != ".." {
        return Ok((
            Program::OnPath(executable.to_string()),
            format!("{executable}, found on PATH, declared by this workspace"),
        ));
    }
    match workspace_relative(executable) {
        Ok(path) if path != "." => Ok((
            Program::Path(path.clone()),
            format!("{path}, a workspace file declared by this workspace"),
        )),
        Ok(_) | Err(Lexical::Escapes) | Err(Lexical::Invalid) => Err(escapes()),
    }
}

fn is_profile_id(id: &str) -> bool {
    (1..=MAX_ID_CHARS).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.chars().all(|c| c.is_ascii_hexdigit())
}

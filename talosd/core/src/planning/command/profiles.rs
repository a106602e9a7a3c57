//! Command profiles and the registry a turn plans against: the five Gradle verification tasks
//! (each `./gradlew --no-daemon <task>`), their Cargo counterparts (`cargo <subcommand>`), and
//! the `ws:<id>` profiles of a trusted workspace declaration. A profile is built only here or
//! by `validate_declaration`, so every profile in a registry has passed its checks.

use super::trust::TrustState;
use super::{Isolation, Program};

/// Which caller-argument grammar a profile has (see `grammar::check_arguments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    /// The Gradle tasks: `--tests <selector>`, `--stacktrace`, `--info`.
    Gradle,
    /// `cargo_test`: one test-name filter, `--package`/`-p <name>`, `--verbose`, `--offline`,
    /// then optionally `--` followed only by `--exact` and `--nocapture`.
    CargoTest,
    /// `cargo_check`, `cargo_build`: `--package`/`-p <name>`, `--verbose`, `--offline`.
    CargoBuild,
    /// `cargo_clippy`, `cargo_fmt_check`: `--package`/`-p <name>` only.
    CargoPackageOnly,
    /// `ws:<id>`: the declared fixed argv, no caller arguments.
    Workspace,
}

/// One profile: what it launches, its fixed argv around the caller's arguments, its default
/// timeout, what it is expected to write and what it asks to be isolated from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub(super) id: String,
    pub(super) kind: ProfileKind,
    pub(super) program: Program,
    pub(super) argv_prefix: Vec<String>,
    pub(super) argv_suffix: Vec<String>,
    pub(super) default_timeout_ms: u64,
    pub(super) expected_writes: Vec<String>,
    pub(super) isolation: Isolation,
    pub(super) program_note: String,
    pub(super) code_note: String,
}

/// The profiles a plan may name: the built-ins, plus the workspace's when its declaration is
/// trusted. The trust state is kept to explain why a `ws:` profile is not available.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    profiles: Vec<Profile>,
    trust: TrustState,
}

pub use crate::request::task::BUILTIN_IDS;

const GRADLE_TIMEOUT_MS: u64 = 120_000;
const CARGO_TIMEOUT_MS: u64 = 300_000;
const CARGO_FMT_TIMEOUT_MS: u64 = 60_000;
pub(super) const WORKSPACE_DEFAULT_TIMEOUT_MS: u64 = 120_000;

const GRADLE_CODE: &str = "./gradlew and the build scripts it runs are workspace files, executed with your user permissions";
const CARGO_CODE: &str = "build scripts, procedural macros and tests are workspace code, executed with your user permissions";
const CARGO_FMT_CODE: &str =
    "cargo fmt reads the workspace's manifests and sources and runs with your user permissions";

impl Profile {
    pub fn id(&self) -> &str {
        &self.id
    }
    pub fn kind(&self) -> ProfileKind {
        self.kind
    }
    pub fn program(&self) -> &Program {
        &self.program
    }
    /// The fixed arguments before the caller's.
    pub fn argv_prefix(&self) -> &[String] {
        &self.argv_prefix
    }
    /// The fixed arguments after the caller's (`-- -D warnings` for clippy).
    pub fn argv_suffix(&self) -> &[String] {
        &self.argv_suffix
    }
    pub fn default_timeout_ms(&self) -> u64 {
        self.default_timeout_ms
    }
    pub fn expected_writes(&self) -> &[String] {
        &self.expected_writes
    }
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }
    /// Where the program comes from, for the approval.
    pub fn program_note(&self) -> &str {
        &self.program_note
    }
    /// What workspace code the run executes with the user's permissions, for the approval.
    pub fn code_note(&self) -> &str {
        &self.code_note
    }
}

impl Registry {
    /// The built-in profiles; the workspace declares none.
    pub fn builtin() -> Registry {
        Registry::with_trust(TrustState::NoneDeclared, Vec::new())
    }

    /// The built-ins plus a trusted workspace declaration's profiles.
    pub fn with_workspace(profiles: Vec<Profile>) -> Registry {
        Registry::with_trust(TrustState::Trusted, profiles)
    }

    /// The built-ins, plus `profiles` only when `trust` is [`TrustState::Trusted`]; the state
    /// explains a refused `ws:` id. Only workspace-kind profiles are taken from `profiles`.
    pub fn with_trust(trust: TrustState, profiles: Vec<Profile>) -> Registry {
        let mut all = builtin_profiles();
        if trust == TrustState::Trusted {
            all.extend(
                profiles
                    .into_iter()
                    .filter(|p| p.kind == ProfileKind::Workspace),
            );
        }
        Registry {
            profiles: all,
            trust,
        }
    }

    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    pub fn trust(&self) -> &TrustState {
        &self.trust
    }

    pub fn get(&self, id: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.id == id)
    }

    /// The profile for a lower-cased id, or the refusal detail: unknown, or a `ws:` profile
    /// that the workspace's trust state does not make available.
    pub(super) fn lookup(&self, id: &str) -> Result<&Profile, ProfileUnavailable> {
        if let Some(profile) = self.get(id) {
            return Ok(profile);
        }
        if id.starts_with("ws:") {
            let declared: Vec<&str> = self
                .profiles
                .iter()
                .filter(|p| p.kind == ProfileKind::Workspace)
                .map(|p| p.id.as_str())
                .collect();
            return Err(ProfileUnavailable::Workspace(
                self.trust.unavailable(id, &declared),
            ));
        }
        Err(ProfileUnavailable::Unknown(id.into()))
    }
}

/// Why a call's profile is not in the registry; the text is the refusal detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileUnavailable {
    Unknown(String),
    /// A `ws:` profile the workspace's trust state does not make available; the trust
    /// state's explanation.
    Workspace(String),
}

impl std::fmt::Display for ProfileUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProfileUnavailable::Unknown(id) => write!(f, "Unknown command profile: {id}"),
            ProfileUnavailable::Workspace(explanation) => f.write_str(explanation),
        }
    }
}

fn builtin_profiles() -> Vec<Profile> {
    let gradle = |id: &str, task: &str| Profile {
        id: id.into(),
        kind: ProfileKind::Gradle,
        program: Program::Wrapper("./gradlew"),
        argv_prefix: vec!["--no-daemon".into(), task.into()],
        argv_suffix: Vec::new(),
        default_timeout_ms: GRADLE_TIMEOUT_MS,
        expected_writes: vec!["build/".into(), ".gradle/".into()],
        isolation: Isolation::default(),
        program_note: "./gradlew, the workspace's own Gradle wrapper in the working directory"
            .into(),
        code_note: GRADLE_CODE.into(),
    };
    let cargo = |id: &str, kind, prefix: &[&str], suffix: &[&str]| Profile {
        id: id.into(),
        kind,
        program: Program::OnPath("cargo".into()),
        argv_prefix: prefix.iter().map(|s| s.to_string()).collect(),
        argv_suffix: suffix.iter().map(|s| s.to_string()).collect(),
        default_timeout_ms: CARGO_TIMEOUT_MS,
        expected_writes: vec!["target/".into()],
        isolation: Isolation::default(),
        program_note: "cargo, found on PATH".into(),
        code_note: CARGO_CODE.into(),
    };
    use ProfileKind::{CargoBuild, CargoPackageOnly, CargoTest};
    let mut fmt = cargo(
        "cargo_fmt_check",
        CargoPackageOnly,
        &["fmt", "--check"],
        &[],
    );
    fmt.default_timeout_ms = CARGO_FMT_TIMEOUT_MS;
    fmt.expected_writes.clear();
    fmt.code_note = CARGO_FMT_CODE.into();
    vec![
        gradle("gradle_test", "test"),
        gradle("gradle_check", "check"),
        gradle("gradle_build", "build"),
        gradle("gradle_install_dist", "installDist"),
        gradle("gradle_e2e_test", "e2eTest"),
        cargo("cargo_test", CargoTest, &["test"], &[]),
        cargo("cargo_check", CargoBuild, &["check"], &[]),
        cargo("cargo_build", CargoBuild, &["build"], &[]),
        cargo(
            "cargo_clippy",
            CargoPackageOnly,
            &["clippy", "--all-targets"],
            &["--", "-D", "warnings"],
        ),
        fmt,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Proves the built-in registry holds exactly `BUILTIN_IDS`, in order.
    #[test]
    fn the_builtin_ids_are_the_registry() {
        let registry = Registry::builtin();
        let ids: Vec<&str> = registry.profiles().iter().map(Profile::id).collect();
        assert_eq!(ids, BUILTIN_IDS);
    }
}

//! Workspace command profiles: reading `.talos/profiles.yaml` (raw bytes, never through a
//! link, at most 64 KiB), parsing it, and the SHA-256 pins that trust it. Pins live under the
//! Talos home, outside any workspace: `trust/workspace-profiles/<workspaceId>.json`. A pin
//! that cannot be read or parsed counts as corrupt, which is untrusted.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use talos_core::command::{DeclarationError, DeclaredProfile, PinState};

use crate::workspace::{Workspace, WorkspaceError};

pub const DECLARATION: &str = ".talos/profiles.yaml";
const MAX_DECLARATION_BYTES: u64 = 64 * 1024;

/// The declaration as found on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// Lower-case hex SHA-256 of the raw bytes.
    pub sha256: String,
    pub text: String,
    pub parsed: Result<Vec<DeclaredProfile>, DeclarationError>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeclarationFile {
    profiles: Vec<RawProfile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    id: String,
    executable: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    expected_writes: Vec<String>,
    #[serde(default)]
    isolate: Vec<String>,
}

/// Why the declaration could not be read at all (which makes the workspace's trust state
/// invalid).
#[derive(Debug, thiserror::Error)]
pub enum UnreadableDeclaration {
    #[error("{DECLARATION} cannot be read: {0}")]
    Open(WorkspaceError),
    /// The resolver's reason the path is refused.
    #[error("{DECLARATION} cannot be read: {0}")]
    Refused(String),
    #[error("{DECLARATION} is a symlink; Talos reads declarations only from a regular file")]
    Symlink,
    #[error(transparent)]
    Read(WorkspaceError),
}

/// Reads the workspace's declaration. `Ok(None)` when there is none.
pub fn read_declaration(workspace: &Path) -> Result<Option<Declaration>, UnreadableDeclaration> {
    let files = Workspace::open(workspace).map_err(UnreadableDeclaration::Open)?;
    let resolved = files.resolve(DECLARATION);
    let Some(location) = resolved.location.filter(|_| !resolved.facts.escapes) else {
        return Err(UnreadableDeclaration::Refused(
            resolved.facts.problem.unwrap_or_default(),
        ));
    };
    if resolved.final_is_symlink {
        return Err(UnreadableDeclaration::Symlink);
    }
    let bytes = match files.read_limited(&location, DECLARATION, MAX_DECLARATION_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
        Err(WorkspaceError::TooLarge { .. }) => {
            return Ok(Some(Declaration {
                sha256: String::new(),
                text: String::new(),
                parsed: Err(DeclarationError::TooLarge(MAX_DECLARATION_BYTES)),
            }));
        }
        Err(e) => return Err(UnreadableDeclaration::Read(e)),
    };
    let sha256 = talos_core::digest::sha256_hex(&bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let parsed = if text.trim().is_empty() {
        Err(DeclarationError::Empty)
    } else {
        serde_yaml_ng::from_str::<DeclarationFile>(&text)
            .map_err(|e| DeclarationError::Yaml(e.to_string()))
            .map(|file| {
                file.profiles
                    .into_iter()
                    .map(|p| DeclaredProfile {
                        id: p.id,
                        executable: p.executable,
                        args: p.args,
                        timeout_ms: p.timeout_ms,
                        expected_writes: p.expected_writes,
                        isolate: p.isolate,
                    })
                    .collect()
            })
    };
    Ok(Some(Declaration {
        sha256,
        text,
        parsed,
    }))
}

/// Pins under `<home>/trust/workspace-profiles/`.
#[derive(Debug, Clone)]
pub struct PinStore {
    dir: crate::home::Store,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Pin {
    schema_version: u32,
    workspace: String,
    declaration_sha256: String,
    pinned_at_ms: u64,
    profile_count: usize,
}

impl PinStore {
    /// The pins under the home's state folder `home_state`, reached through a handle on it
    /// (`crate::home`; callers holding the daemon's `Home` use [`PinStore::of`]).
    pub fn new(home_state: &Path) -> PinStore {
        PinStore {
            dir: crate::home::Store::new(
                crate::home::Root::new(home_state.to_path_buf()),
                "trust/workspace-profiles",
            ),
        }
    }

    /// The pins of the daemon's home, through its handle opened once.
    pub fn of(home: &crate::paths::Home) -> PinStore {
        PinStore { dir: home.pins() }
    }

    fn name(workspace: &Path) -> String {
        let id = talos_core::digest::sha256_hex(workspace.to_string_lossy().as_bytes());
        format!("{}.json", &id[..32])
    }

    fn path(&self, workspace: &Path) -> PathBuf {
        self.dir.shown(&PinStore::name(workspace))
    }

    /// The pin for `workspace`: absent, corrupt (fails closed), or the pinned hash.
    pub fn load(&self, workspace: &Path) -> PinState {
        // A regular file only, never a link, FIFO or device planted in the home.
        let text = match self.dir.read(&PinStore::name(workspace), 64 * 1024) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return PinState::Absent,
            Err(_) => return PinState::Corrupt,
        };
        match serde_json::from_str::<Pin>(&text) {
            Ok(pin)
                if pin.schema_version == 1
                    && pin.workspace == workspace.display().to_string()
                    && pin.declaration_sha256.len() == 64
                    && pin
                        .declaration_sha256
                        .chars()
                        .all(|c| c.is_ascii_hexdigit()) =>
            {
                PinState::Pinned(pin.declaration_sha256)
            }
            Ok(_) | Err(_) => PinState::Corrupt,
        }
    }

    pub fn pin(
        &self,
        workspace: &Path,
        sha256: &str,
        profile_count: usize,
        now_ms: u64,
    ) -> std::io::Result<()> {
        let pin = Pin {
            schema_version: 1,
            workspace: workspace.display().to_string(),
            declaration_sha256: sha256.to_string(),
            pinned_at_ms: now_ms,
            profile_count,
        };
        let json = serde_json::to_vec_pretty(&pin).map_err(std::io::Error::other)?;
        self.dir.write(
            &PinStore::name(workspace),
            &json,
            crate::home::Durability::Full,
        )
    }

    pub fn revoke(&self, workspace: &Path) -> std::io::Result<bool> {
        match self.dir.remove_file(&PinStore::name(workspace)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// For tests and tooling: where the pin of `workspace` lives.
    pub fn pin_path(&self, workspace: &Path) -> PathBuf {
        self.path(workspace)
    }
}

/// What the daemon knows about a workspace's profiles right now.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub declaration: Option<Declaration>,
    pub validated: Option<Result<Vec<talos_core::command::Profile>, DeclarationError>>,
    pub trust: talos_core::command::TrustState,
    pub registry: talos_core::command::Registry,
}

/// Reads the declaration and the pin and decides trust; every call reads the disk again, so
/// trust is checked at planning and again just before execution.
pub fn snapshot(workspace: &Path, pins: &PinStore) -> Snapshot {
    use talos_core::command::{
        BUILTIN_IDS, Registry, TrustState, trust_state, validate_declaration,
    };
    let declaration = match read_declaration(workspace) {
        Ok(d) => d,
        Err(reason) => {
            let trust = TrustState::Invalid(reason.to_string());
            return Snapshot {
                declaration: None,
                validated: None,
                registry: Registry::with_trust(trust.clone(), Vec::new()),
                trust,
            };
        }
    };
    let validated = declaration.as_ref().map(|d| {
        d.parsed
            .clone()
            .and_then(|profiles| validate_declaration(&profiles, &BUILTIN_IDS))
    });
    let pin = pins.load(workspace);
    let trust = match (&declaration, &validated) {
        (Some(d), Some(v)) => trust_state(Some((d.sha256.as_str(), v)), &pin),
        _ => trust_state(None, &pin),
    };
    let profiles = validated.clone().and_then(Result::ok).unwrap_or_default();
    let registry = Registry::with_trust(trust.clone(), profiles);
    Snapshot {
        declaration,
        validated,
        trust,
        registry,
    }
}

pub fn state_name(trust: &talos_core::command::TrustState) -> &'static str {
    use talos_core::command::TrustState;
    match trust {
        TrustState::NoneDeclared => "none_declared",
        TrustState::Invalid(_) => "invalid",
        TrustState::UntrustedNew => "untrusted_new",
        TrustState::UntrustedChanged => "untrusted_changed",
        TrustState::Trusted => "trusted",
    }
}

/// A profile as the protocol lists it.
pub fn info(profile: &talos_core::command::Profile) -> talos_protocol::ProfileInfo {
    use talos_core::command::{ProfileKind, Program};
    let program = match profile.program() {
        Program::Wrapper(w) => (*w).to_string(),
        Program::OnPath(name) | Program::Path(name) => name.clone(),
    };
    let mut argv = vec![program];
    argv.extend(profile.argv_prefix().iter().cloned());
    argv.extend(profile.argv_suffix().iter().cloned());
    let isolation = profile.isolation();
    let isolate = [(isolation.network, "network"), (isolation.writes, "writes")]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| n.to_string())
        .collect();
    let source = match profile.kind() {
        ProfileKind::Workspace => "workspace",
        ProfileKind::Gradle
        | ProfileKind::CargoTest
        | ProfileKind::CargoBuild
        | ProfileKind::CargoPackageOnly => "builtin",
    };
    talos_protocol::ProfileInfo {
        id: profile.id().to_string(),
        source: source.into(),
        argv,
        timeout_ms: profile.default_timeout_ms(),
        isolate,
    }
}

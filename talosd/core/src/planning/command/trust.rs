//! Where a workspace's profile declaration stands (none, invalid, untrusted, trusted) and how
//! that reads. Below both the registry, which registers only a trusted declaration's
//! profiles, and the declaration checks, which decide the state.

/// Where a workspace declaration stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// No declaration file, or an empty one.
    NoneDeclared,
    /// The declaration was refused, for this reason; nothing registers.
    Invalid(String),
    /// Valid, and never pinned (or the pin is unreadable).
    UntrustedNew,
    /// Valid, and its bytes differ from the pinned ones.
    UntrustedChanged,
    /// Valid, and its bytes are the pinned ones.
    Trusted,
}

impl TrustState {
    /// The state as `/profiles list` shows it.
    pub fn label(&self) -> String {
        match self {
            TrustState::NoneDeclared => "none declared".into(),
            TrustState::Invalid(reason) => format!("invalid - {reason}"),
            TrustState::UntrustedNew => "declared, untrusted (never pinned)".into(),
            TrustState::UntrustedChanged => {
                "declared, untrusted (file changed since the last pin)".into()
            }
            TrustState::Trusted => "trusted".into(),
        }
    }

    /// Why `ws:` profile `profile` cannot be planned in this state; `declared` lists the
    /// registered workspace ids (only a trusted state has any).
    pub fn unavailable(&self, profile: &str, declared: &[&str]) -> String {
        match self {
            TrustState::NoneDeclared => format!(
                "Workspace profile {profile} is not available: this workspace declares no verification profiles (.talos/profiles.yaml)."
            ),
            TrustState::Invalid(reason) => format!(
                "Workspace profile {profile} is not available: the declaration is invalid - {reason} Nothing was registered."
            ),
            TrustState::UntrustedNew | TrustState::UntrustedChanged => format!(
                "Workspace profile {profile} is not available: the workspace declaration is untrusted or has changed. Review and pin it with /profiles trust, then retry."
            ),
            TrustState::Trusted => format!(
                "Unknown workspace profile {profile}. Declared: {}.",
                if declared.is_empty() {
                    "(none)".to_string()
                } else {
                    declared.join(", ")
                }
            ),
        }
    }
}

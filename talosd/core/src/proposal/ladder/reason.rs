//! The ladder's reason codes: one closed set, one code per rung, each spelled on the trace
//! wire exactly as before (`as_str`).

/// Why the ladder decided what it did: one code per rung. The trace carries `as_str()`, so the
/// wire stays the string it always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonCode {
    /// The path resolves outside the workspace.
    WorkspaceEscape,
    /// A change to a protected path.
    ProtectedPathDeny,
    /// A configured rule denies.
    ConfigDeny,
    /// A read of a protected path.
    ProtectedPathAsk,
    /// A read of a regular file with more than one link (its bytes may live outside).
    HardLinkAsk,
    /// A configured rule asks.
    ConfigAsk,
    /// A configured rule allows.
    ConfigAllow,
    /// A read-only tool.
    DefaultReadAllow,
    /// A write the session remembered approving.
    SessionRememberAllow,
    /// A destructive call (delete, or a batch that deletes).
    DefaultDestructiveAsk,
    /// Any other change.
    DefaultWriteAsk,
    /// An allowed write that would change the file's line endings, BOM or final newline.
    FormatChangeAsk,
    /// A `pre_call` hook denied (or failed, which denies).
    HookDeny,
    /// A `pre_call` hook asked about a call the ladder allowed.
    HookAsk,
    /// A call to an MCP server's tool with no rule about it.
    McpDefaultAsk,
    /// An MCP call naming a path outside the workspace, or a protected one, that a rule
    /// allowed: it asks instead.
    McpPathAsk,
}

impl ReasonCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::WorkspaceEscape => "WORKSPACE_ESCAPE",
            ReasonCode::ProtectedPathDeny => "PROTECTED_PATH_DENY",
            ReasonCode::ConfigDeny => "CONFIG_DENY",
            ReasonCode::ProtectedPathAsk => "PROTECTED_PATH_ASK",
            ReasonCode::HardLinkAsk => "HARD_LINK_ASK",
            ReasonCode::ConfigAsk => "CONFIG_ASK",
            ReasonCode::ConfigAllow => "CONFIG_ALLOW",
            ReasonCode::DefaultReadAllow => "DEFAULT_READ_ALLOW",
            ReasonCode::SessionRememberAllow => "SESSION_REMEMBER_ALLOW",
            ReasonCode::DefaultDestructiveAsk => "DEFAULT_DESTRUCTIVE_ASK",
            ReasonCode::DefaultWriteAsk => "DEFAULT_WRITE_ASK",
            ReasonCode::FormatChangeAsk => "FORMAT_CHANGE_ASK",
            ReasonCode::HookDeny => "HOOK_DENY",
            ReasonCode::HookAsk => "HOOK_ASK",
            ReasonCode::McpDefaultAsk => "MCP_DEFAULT_ASK",
            ReasonCode::McpPathAsk => "MCP_PATH_ASK",
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The trace and the events carry the code as its string.
impl From<ReasonCode> for String {
    fn from(code: ReasonCode) -> String {
        code.as_str().to_string()
    }
}

//! Session modes: `agent`, `ask`, `plan`, `auto` and `private`, with their aliases;
//! the posture each implies; and the structural commands `auto` answers with a deterministic
//! viewer instead of the model (`ls`, `list src`, `show settings.py`).

use std::fmt;

use crate::planning::posture::Posture;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionMode {
    Agent,
    Ask,
    Plan,
    Auto,
    Private,
}

/// Why a mode name was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeError {
    /// A name kept for a mode that does not exist yet (`web`).
    Reserved(String),
    Unknown(String),
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeError::Reserved(name) => write!(
                f,
                "Mode '{name}' is reserved and not yet available. Available: agent, ask, plan, auto, private."
            ),
            ModeError::Unknown(name) => write!(
                f,
                "Unknown mode '{name}'. Available: agent, ask, plan, auto, private."
            ),
        }
    }
}

impl std::error::Error for ModeError {}

impl SessionMode {
    /// A mode by name, with the aliases `chat`, `unified` and `dev` for `agent`. `web` is
    /// reserved and refused with a message that lists what is available.
    pub fn from_name(name: &str) -> Result<SessionMode, ModeError> {
        match name.trim().to_lowercase().as_str() {
            "agent" | "chat" | "unified" | "dev" => Ok(SessionMode::Agent),
            "ask" => Ok(SessionMode::Ask),
            "plan" => Ok(SessionMode::Plan),
            "auto" => Ok(SessionMode::Auto),
            "private" => Ok(SessionMode::Private),
            "web" => Err(ModeError::Reserved("web".into())),
            other => Err(ModeError::Unknown(other.into())),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SessionMode::Agent => "agent",
            SessionMode::Ask => "ask",
            SessionMode::Plan => "plan",
            SessionMode::Auto => "auto",
            SessionMode::Private => "private",
        }
    }

    /// The ceiling the mode puts on every contract.
    pub fn posture(self) -> Posture {
        match self {
            SessionMode::Agent | SessionMode::Auto | SessionMode::Private => Posture::Agent,
            SessionMode::Ask => Posture::AskReadOnly,
            SessionMode::Plan => Posture::PlanReadOnly,
        }
    }

    /// Protected content the person approves is shown to them and withheld from the model.
    pub fn private(self) -> bool {
        match self {
            SessionMode::Private => true,
            SessionMode::Agent | SessionMode::Ask | SessionMode::Plan | SessionMode::Auto => false,
        }
    }

    /// Whether structural commands are answered without the model.
    pub fn routes_structural(self) -> bool {
        match self {
            SessionMode::Auto => true,
            SessionMode::Agent | SessionMode::Ask | SessionMode::Plan | SessionMode::Private => {
                false
            }
        }
    }
}

/// A structural command, answered by the deterministic viewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Structural {
    List { path: String },
    Show { path: String },
}

/// `ls`, `dir`, `ls PATH`, `list PATH`, `open|view|show|cat FILE`, `show me FILE`: one verb
/// and at most one path token, nothing else.
pub fn structural_command(request: &str) -> Option<Structural> {
    let words: Vec<&str> = request.split_whitespace().collect();
    let (verb, rest) = words.split_first()?;
    let verb = verb.to_lowercase();
    let rest: Vec<&str> = match (verb.as_str(), rest) {
        ("show", [me, tail @ ..]) if me.eq_ignore_ascii_case("me") => tail.to_vec(),
        _ => rest.to_vec(),
    };
    match (verb.as_str(), rest.as_slice()) {
        ("ls" | "dir", []) => Some(Structural::List { path: ".".into() }),
        ("ls" | "dir" | "list", [path]) if looks_like_path(path) => {
            Some(Structural::List { path: clean(path) })
        }
        ("open" | "view" | "show" | "cat", [path]) if looks_like_path(path) => {
            Some(Structural::Show { path: clean(path) })
        }
        _ => None,
    }
}

fn looks_like_path(token: &str) -> bool {
    !token.is_empty()
        && token
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '~' | '\\'))
        && !matches!(
            token.to_lowercase().as_str(),
            "files" | "everything" | "all" | "it" | "this"
        )
}

fn clean(token: &str) -> String {
    token.trim_end_matches(['?', '!', ',']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names_and_aliases() {
        for (name, mode) in [
            ("agent", SessionMode::Agent),
            ("CHAT", SessionMode::Agent),
            ("unified", SessionMode::Agent),
            ("dev", SessionMode::Agent),
            ("ask", SessionMode::Ask),
            ("plan", SessionMode::Plan),
            ("auto", SessionMode::Auto),
            ("private", SessionMode::Private),
        ] {
            assert_eq!(SessionMode::from_name(name), Ok(mode), "{name}");
        }
        assert!(
            SessionMode::from_name("web")
                .unwrap_err()
                .to_string()
                .starts_with("Mode 'web' is reserved")
        );
        assert!(SessionMode::from_name("yolo").is_err());
        assert!(SessionMode::Ask.posture().read_only() && SessionMode::Plan.posture().read_only());
        assert!(!SessionMode::Private.posture().read_only() && SessionMode::Private.private());
    }

    #[test]
    fn structural_rows() {
        let list = |p: &str| Some(Structural::List { path: p.into() });
        let show = |p: &str| Some(Structural::Show { path: p.into() });
        let rows: &[(&str, Option<Structural>)] = &[
            ("ls", list(".")),
            ("dir", list(".")),
            ("ls src", list("src")),
            ("list src/", list("src/")),
            ("show settings.py", show("settings.py")),
            ("show me settings.py", show("settings.py")),
            ("open README.md", show("README.md")),
            ("cat ../etc/passwd", show("../etc/passwd")),
            ("list files", None),
            ("show me what changed", None),
            ("In settings.py, change TIMEOUT from 30 to 60.", None),
            ("ls; rm -rf /", None),
            ("", None),
        ];
        for (request, expected) in rows {
            assert_eq!(&structural_command(request), expected, "{request:?}");
        }
    }
}

//! Custom commands (issue 28): `.talos/commands/NAME.md` in the workspace and `commands/NAME.md`
//! in the Talos config dir become `/NAME [args]`. A command is only text: the file's text, with
//! `$ARGUMENTS` replaced by what follows the name, becomes the request, and the turn is planned
//! from it like any typed request. It cannot set a mode, a surface or a rule: a front-matter
//! block may give a `description` (shown in listings); every other key in it is ignored, and
//! the listing says which. Which commands exist is decided here from what the daemon read.

/// Where a command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The user's config dir: wins a name both have.
    User,
    /// The workspace's `.talos/commands/`: text someone else may have written.
    Workspace,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Workspace => "workspace",
        }
    }
}

/// Largest command file read.
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// The interactive session's own commands, which a custom command never replaces.
pub const RESERVED: [&str; 15] = [
    "help",
    "mode",
    "new",
    "status",
    "model",
    "grants",
    "profiles",
    "checkpoints",
    "checkpoint",
    "restore",
    "undo",
    "trace",
    "exit",
    "quit",
    "commands",
];

/// One command as listed and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub source: Source,
    pub description: String,
    /// The request text, `$ARGUMENTS` still in it.
    pub body: String,
    /// Front-matter keys that were ignored (`mode`, `allowed-tools`, ...).
    pub ignored: Vec<String>,
}

/// A command name from a file name: `review.md` gives `review`; `None` when the file is not a
/// usable command (`a-z`, `0-9`, `_` and `-`, at most 32, and not one of [`RESERVED`]).
pub fn name_of(file_name: &str) -> Option<String> {
    let stem = file_name.strip_suffix(".md")?;
    let usable = (1..=32).contains(&stem.len())
        && stem
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    (usable && !RESERVED.contains(&stem)).then(|| stem.to_string())
}

/// Whether a workspace command file may be read: inside the workspace, not hard-linked, and
/// not a secret. `.talos/` itself is protected from the model's changes (a control path), not
/// from the person's own commands being read for them.
pub fn admit_path(path: &str, facts: &crate::text::protected::PathFacts) -> Result<String, String> {
    let shown = facts.relative.clone().unwrap_or_else(|| path.to_string());
    if facts.escapes {
        let problem = facts.problem.as_deref().unwrap_or("outside the workspace");
        return Err(format!("command {shown} not read: {problem}"));
    }
    if facts.protected == Some(crate::text::protected::ProtectedKind::Secret) {
        return Err(format!("command {shown} not read: it is a protected path"));
    }
    if facts.shares_bytes() {
        return Err(format!(
            "command {shown} not read: it is a hard link ({} names share its bytes, which may belong to a file outside the workspace)",
            facts.hard_links
        ));
    }
    Ok(shown)
}

/// The command in `text`, or why it cannot be one.
pub fn parse(name: &str, source: Source, text: &str) -> Result<Command, String> {
    if text.len() > MAX_COMMAND_BYTES {
        return Err(format!(
            "/{name} is larger than {MAX_COMMAND_BYTES} bytes and is not offered"
        ));
    }
    let (front, body) = split_front_matter(text);
    let mut description = String::new();
    let mut ignored = Vec::new();
    for line in front.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (key, value) = line.split_once(':').unwrap_or((line, ""));
        let key = key.trim();
        if key == "description" {
            description = value.trim().trim_matches('"').to_string();
        } else {
            ignored.push(crate::text::deceptive::escaped(
                &key.chars().take(40).collect::<String>(),
            ));
        }
    }
    let body = body.trim().to_string();
    if body.is_empty() {
        return Err(format!("/{name} has no text and is not offered"));
    }
    if description.is_empty() {
        description = body
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(80)
            .collect();
    }
    Ok(Command {
        name: name.to_string(),
        source,
        description: crate::text::deceptive::escaped(&description),
        body,
        ignored,
    })
}

/// `---` lines around the start of the file, if there are.
fn split_front_matter(text: &str) -> (&str, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return ("", text);
    };
    match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            let after = after.strip_prefix('\r').unwrap_or(after);
            (&rest[..end], after.strip_prefix('\n').unwrap_or(after))
        }
        None => ("", text),
    }
}

/// The request a command makes with `arguments`: each `$ARGUMENTS` replaced; when there is
/// none and arguments were given, they follow the text on a line of their own.
pub fn expand(command: &Command, arguments: &str) -> String {
    let arguments = arguments.trim();
    if command.body.contains("$ARGUMENTS") {
        return command.body.replace("$ARGUMENTS", arguments);
    }
    if arguments.is_empty() {
        command.body.clone()
    } else {
        format!("{}\n\n{arguments}", command.body)
    }
}

/// The commands as offered: the user's win a name both have (a workspace cannot redefine the
/// user's `/review`), sorted by name; each one left out is told why.
pub fn merge(found: Vec<Command>, problems: Vec<String>) -> (Vec<Command>, Vec<String>) {
    let mut problems = problems;
    let mut sorted = found;
    sorted.sort_by(|a, b| (&a.name, a.source).cmp(&(&b.name, b.source)));
    let mut offered: Vec<Command> = Vec::new();
    for command in sorted {
        if offered.last().is_some_and(|c| c.name == command.name) {
            problems.push(format!(
                "the workspace's /{} is not offered: the user's command of that name is",
                command.name
            ));
            continue;
        }
        offered.push(command);
    }
    (offered, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_plain_md_files_and_never_replace_the_sessions_own() {
        let rows = [
            ("review.md", Some("review")),
            ("fix-bug_2.md", Some("fix-bug_2")),
            ("Review.md", None),
            ("review.txt", None),
            ("help.md", None),
            ("status.md", None),
            ("a b.md", None),
            ("\u{202e}dm.md", None),
            (".md", None),
        ];
        for (file, expected) in rows {
            assert_eq!(name_of(file).as_deref(), expected, "{file}");
        }
    }

    #[test]
    fn front_matter_gives_a_description_and_nothing_else() {
        let text = "---\ndescription: Review the change\nmode: agent\nallowed-tools: [talos.write_file]\n---\nReview $ARGUMENTS carefully.\n";
        let command = parse("review", Source::Workspace, text).unwrap();
        assert_eq!(command.description, "Review the change");
        assert_eq!(command.ignored, vec!["mode", "allowed-tools"]);
        assert_eq!(
            expand(&command, " src/lib.rs "),
            "Review src/lib.rs carefully."
        );
        let plain = parse("explain", Source::User, "Explain the code.").unwrap();
        assert_eq!(plain.description, "Explain the code.");
        assert_eq!(expand(&plain, "main.rs"), "Explain the code.\n\nmain.rs");
        assert_eq!(expand(&plain, ""), "Explain the code.");
    }

    #[test]
    fn empty_or_huge_files_are_not_commands() {
        assert!(parse("x", Source::User, "---\ndescription: d\n---\n  \n").is_err());
        assert!(parse("x", Source::User, &"a".repeat(MAX_COMMAND_BYTES + 1)).is_err());
    }

    #[test]
    fn the_users_command_wins_a_name_the_workspace_also_has() {
        let make = |source| parse("review", source, "text").unwrap();
        let (offered, problems) = merge(vec![make(Source::Workspace), make(Source::User)], vec![]);
        assert_eq!(offered.len(), 1);
        assert_eq!(offered[0].source, Source::User);
        assert_eq!(problems.len(), 1);
    }
}

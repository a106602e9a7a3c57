//! The interactive session's slash commands: what a line that starts with `/` asks for, and
//! for an unknown one the closest command, so a typo gets a one-line answer naming it.

use talos_protocol::Mode;

/// What a slash line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Help,
    Mode(Mode),
    New,
    Status,
    /// `/model`: the models and their state; `/model NAME`: use NAME for the next turns.
    Model(Option<String>),
    Grants {
        revoke: bool,
    },
    Profiles {
        trust: bool,
    },
    Checkpoints,
    CheckpointShow(String),
    Restore(String),
    Undo,
    Trace(Option<String>),
    /// The custom commands (`.talos/commands/`, and the user's).
    Commands,
    /// `/NAME [args]` for a name that is none of the session's own: a custom command.
    Custom {
        name: String,
        arguments: String,
    },
    Exit,
}

/// Every command with its arguments and what it does, as `/help` shows them.
pub const COMMANDS: [(&str, &str, &str); 16] = [
    ("/help", "", "this list"),
    (
        "/mode",
        "<agent|ask|plan|auto|private>",
        "continue the conversation in that mode (grants do not carry over)",
    ),
    ("/new", "", "start a fresh session in the current mode"),
    (
        "/status",
        "",
        "what the daemon reports about itself, and the last turn's context use",
    ),
    (
        "/model",
        "[NAME]",
        "the models and their state, or use NAME for this session's next turns",
    ),
    (
        "/grants",
        "[revoke]",
        "what this session remembers (\"yes for session\"), or forget it",
    ),
    (
        "/profiles",
        "[trust]",
        "the workspace's command profiles, or pin them after review",
    ),
    (
        "/checkpoints",
        "",
        "the workspace's checkpoints, newest first",
    ),
    (
        "/checkpoint",
        "show <id>",
        "what a checkpoint holds against the files now",
    ),
    (
        "/restore",
        "<id>",
        "restore a checkpoint (asked like any change)",
    ),
    (
        "/undo",
        "",
        "restore everything this session's last changing turn wrote",
    ),
    ("/trace", "[id]", "recent turns, or one turn's record"),
    (
        "/commands",
        "",
        "the custom commands (.talos/commands/NAME.md, and yours), run as /NAME [args]",
    ),
    ("/exit", "", "leave (Ctrl-D does too)"),
    ("/quit", "", "the same as /exit"),
    ("/?", "", "the same as /help"),
];

/// Why a slash line cannot run, as one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashError(pub String);

/// Reads a line that starts with `/`.
pub fn parse(line: &str) -> Result<Slash, SlashError> {
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or("/");
    let args: Vec<&str> = words.collect();
    let none = |slash: Slash| -> Result<Slash, SlashError> {
        match args.as_slice() {
            [] => Ok(slash),
            extra => Err(SlashError(format!(
                "{command} takes no arguments (got {})",
                extra.join(" ")
            ))),
        }
    };
    match command {
        "/help" | "/?" => none(Slash::Help),
        "/new" => none(Slash::New),
        "/status" => none(Slash::Status),
        "/model" => match args.as_slice() {
            [] => Ok(Slash::Model(None)),
            [name] => Ok(Slash::Model(Some((*name).to_string()))),
            _ => Err(usage("/model")),
        },
        "/checkpoints" => none(Slash::Checkpoints),
        "/commands" => none(Slash::Commands),
        "/undo" => none(Slash::Undo),
        "/exit" | "/quit" => none(Slash::Exit),
        "/mode" => match args.as_slice() {
            [mode] => mode_named(mode).map(Slash::Mode),
            _ => Err(usage("/mode")),
        },
        "/grants" => match args.as_slice() {
            [] => Ok(Slash::Grants { revoke: false }),
            ["revoke"] => Ok(Slash::Grants { revoke: true }),
            _ => Err(usage("/grants")),
        },
        "/profiles" => match args.as_slice() {
            [] => Ok(Slash::Profiles { trust: false }),
            ["trust"] => Ok(Slash::Profiles { trust: true }),
            _ => Err(usage("/profiles")),
        },
        "/checkpoint" => match args.as_slice() {
            ["show", id] => Ok(Slash::CheckpointShow((*id).to_string())),
            _ => Err(usage("/checkpoint")),
        },
        "/restore" => match args.as_slice() {
            [id] => Ok(Slash::Restore((*id).to_string())),
            _ => Err(usage("/restore")),
        },
        "/trace" => match args.as_slice() {
            [] => Ok(Slash::Trace(None)),
            [id] => Ok(Slash::Trace(Some((*id).to_string()))),
            _ => Err(usage("/trace")),
        },
        _ if crate::custom::split(line).is_some() => {
            let (name, arguments) = crate::custom::split(line).unwrap_or_default();
            Ok(Slash::Custom {
                name: name.to_string(),
                arguments: arguments.to_string(),
            })
        }
        unknown => Err(SlashError(unknown_message(unknown))),
    }
}

/// What an unknown command is answered with: the session's own command it is nearest to.
pub fn unknown_message(unknown: &str) -> String {
    match closest(unknown) {
        Some(near) => format!("unknown command {unknown}; did you mean {near}? (/help lists them)"),
        None => format!("unknown command {unknown}; /help lists the commands"),
    }
}

fn usage(command: &str) -> SlashError {
    let args = COMMANDS
        .iter()
        .find(|(name, _, _)| *name == command)
        .map_or("", |(_, args, _)| *args);
    SlashError(format!("usage: {command} {args}"))
}

fn mode_named(name: &str) -> Result<Mode, SlashError> {
    match name {
        "agent" | "chat" | "unified" | "dev" => Ok(Mode::Agent),
        "ask" => Ok(Mode::Ask),
        "plan" => Ok(Mode::Plan),
        "auto" => Ok(Mode::Auto),
        "private" => Ok(Mode::Private),
        other => Err(SlashError(format!(
            "unknown mode {other}; the modes are agent, ask, plan, auto and private"
        ))),
    }
}

/// The command nearest to `typed` by edit distance, when it is near enough to be a typo.
pub fn closest(typed: &str) -> Option<&'static str> {
    let (distance, name) = COMMANDS
        .iter()
        .map(|(name, _, _)| (edit_distance(typed, name), *name))
        .min()?;
    let allowed = (name.len() / 3).max(2);
    (distance <= allowed).then_some(name)
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The `/help` text.
pub fn help() -> String {
    let mut text = String::from(
        "Type a request and press Enter. End a line with \\ to continue on the next line; \
         pasted text keeps its lines.\nCtrl-C cancels a running turn (the session stays) or \
         clears the line; Ctrl-D leaves.\n",
    );
    for (name, args, what) in COMMANDS {
        let usage = if args.is_empty() {
            name.to_string()
        } else {
            format!("{name} {args}")
        };
        text.push_str(&format!("  {usage:<44} {what}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves every command parses with its arguments, and wrong arguments get the usage.
    #[test]
    fn slash_lines_parse_rows() {
        let rows: &[(&str, Result<Slash, &str>)] = &[
            ("/help", Ok(Slash::Help)),
            ("/?", Ok(Slash::Help)),
            ("/mode ask", Ok(Slash::Mode(Mode::Ask))),
            ("/mode   private ", Ok(Slash::Mode(Mode::Private))),
            ("/mode chat", Ok(Slash::Mode(Mode::Agent))),
            ("/mode", Err("usage: /mode <agent|ask|plan|auto|private>")),
            (
                "/mode yolo",
                Err("unknown mode yolo; the modes are agent, ask, plan, auto and private"),
            ),
            ("/new", Ok(Slash::New)),
            ("/new now", Err("/new takes no arguments (got now)")),
            ("/status", Ok(Slash::Status)),
            ("/model", Ok(Slash::Model(None))),
            ("/model gpu", Ok(Slash::Model(Some("gpu".into())))),
            ("/model gpu small", Err("usage: /model [NAME]")),
            ("/grants", Ok(Slash::Grants { revoke: false })),
            ("/grants revoke", Ok(Slash::Grants { revoke: true })),
            ("/grants all", Err("usage: /grants [revoke]")),
            ("/profiles", Ok(Slash::Profiles { trust: false })),
            ("/profiles trust", Ok(Slash::Profiles { trust: true })),
            ("/checkpoints", Ok(Slash::Checkpoints)),
            (
                "/checkpoint show cp-1",
                Ok(Slash::CheckpointShow("cp-1".into())),
            ),
            ("/checkpoint cp-1", Err("usage: /checkpoint show <id>")),
            ("/restore cp-1", Ok(Slash::Restore("cp-1".into()))),
            ("/restore", Err("usage: /restore <id>")),
            ("/undo", Ok(Slash::Undo)),
            ("/trace", Ok(Slash::Trace(None))),
            ("/trace trc-1", Ok(Slash::Trace(Some("trc-1".into())))),
            ("/exit", Ok(Slash::Exit)),
            ("/quit", Ok(Slash::Exit)),
        ];
        for (line, want) in rows {
            let got = parse(line).map_err(|e| e.0);
            let want = want.clone().map_err(str::to_string);
            assert_eq!(got, want, "{line}");
        }
    }

    /// Proves an unknown command is answered in one line naming the closest command, and a
    /// word too far from any command is not guessed at.
    #[test]
    fn unknown_commands_name_the_closest_rows() {
        let rows: &[(&str, &str)] = &[
            (
                "/undp",
                "unknown command /undp; did you mean /undo? (/help lists them)",
            ),
            (
                "/chekpoints",
                "unknown command /chekpoints; did you mean /checkpoints? (/help lists them)",
            ),
            (
                "/stauts",
                "unknown command /stauts; did you mean /status? (/help lists them)",
            ),
            (
                "/exti",
                "unknown command /exti; did you mean /exit? (/help lists them)",
            ),
            (
                "/frobnicate",
                "unknown command /frobnicate; /help lists the commands",
            ),
        ];
        for (line, want) in rows {
            // A name a custom command could have is the daemon's to answer first.
            let name = line.trim_start_matches('/').to_string();
            assert_eq!(
                parse(line),
                Ok(Slash::Custom {
                    name,
                    arguments: String::new()
                })
            );
            let got = unknown_message(line);
            assert_eq!(got, *want, "{line}");
            assert!(!got.contains('\n'));
        }
        assert_eq!(
            parse("/Frob").map_err(|e| e.0),
            Err("unknown command /Frob; /help lists the commands".into())
        );
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn help_lists_every_command() {
        let text = help();
        for (name, _, _) in COMMANDS {
            assert!(text.contains(name), "{name}");
        }
    }
}

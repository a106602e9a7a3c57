//! A mistyped subcommand is answered with the subcommand nearest by edit distance. clap's own
//! tip ranks by a similarity that favours long shared runs, so `talos rn` was pointed at
//! `grants` rather than `run`; a person who dropped a letter wants the word they meant.

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The message for an unknown subcommand, or `None` when the error is another one.
pub fn message<C: CommandFactory>(error: &clap::Error) -> Option<String> {
    if error.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    let Some(ContextValue::String(typed)) = error.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    let command = C::command();
    let names: Vec<String> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .flat_map(|c| {
            std::iter::once(c.get_name().to_string()).chain(c.get_all_aliases().map(str::to_string))
        })
        .collect();
    let mut out = format!("error: unrecognized subcommand '{typed}'\n");
    if let Some(near) = nearest(typed, &names) {
        out.push_str(&format!("\n  tip: a similar subcommand exists: '{near}'\n"));
    }
    out.push_str(&format!(
        "\nUsage: {} [OPTIONS] [COMMAND]\n\nFor more information, try '--help'.",
        command.get_name()
    ));
    Some(out)
}

/// The name nearest to `typed`, when near enough to be a typo of it (a third of its length,
/// at least two edits).
fn nearest<'a>(typed: &str, names: &'a [String]) -> Option<&'a str> {
    let (distance, name) = names
        .iter()
        .map(|n| {
            (
                crate::interactive::slash::edit_distance(typed, n),
                n.as_str(),
            )
        })
        .min()?;
    (distance <= (name.len() / 3).max(2)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::nearest;

    /// Proves a dropped, doubled or swapped letter names the subcommand meant.
    #[test]
    fn nearest_subcommand_rows() {
        let names: Vec<String> = ["run", "grants", "status", "stop", "undo", "checkpoints"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for (typed, want) in [
            ("rn", Some("run")),
            ("runn", Some("run")),
            ("stauts", Some("status")),
            ("checkpionts", Some("checkpoints")),
            ("frobnicate", None),
        ] {
            assert_eq!(nearest(typed, &names), want, "{typed}");
        }
    }
}

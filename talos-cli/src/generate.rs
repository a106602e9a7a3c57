//! `talos generate completions <SHELL>` and `talos generate man <DIR>`: shell completion scripts
//! and man pages made from the clap definitions, for the release tarball and the .deb
//! (`packaging/release.sh`). Hidden commands (`generate` itself) are in neither. A page's date
//! is `SOURCE_DATE_EPOCH`'s (the release's commit time), so two builds of one commit give the
//! same bytes; pages are finished by `talos_protocol::manpage` (one-line NAME, EXIT STATUS,
//! ENVIRONMENT, FILES, SEE ALSO).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Subcommand, ValueEnum};
use talos_protocol::manpage::{self, Section};

use crate::failure::Failure;

mod sections;

/// What `talos generate` writes.
#[derive(Debug, Subcommand)]
pub enum GenerateAction {
    /// Print the completion script for a shell to stdout.
    Completions {
        /// The shell: bash, zsh or fish.
        #[arg(value_enum, value_name = "SHELL")]
        shell: ShellArg,
    },
    /// Write talos.1 and one page per subcommand (talos-run.1, ...) into a directory.
    Man {
        /// The directory to write the pages into (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// The shells Talos ships completions for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

/// The manual section name every page carries (the man page's title line).
const MANUAL: &str = "Talos Manual";

/// Runs `talos generate`: `command` is the whole `talos` command as clap knows it.
pub fn run(action: GenerateAction, command: clap::Command) -> Result<u8, Failure> {
    match action {
        GenerateAction::Completions { shell } => {
            let script = completions(shell, command);
            std::io::stdout()
                .write_all(&script)
                .map_err(Failure::from_output)?;
            Ok(0)
        }
        GenerateAction::Man { dir } => {
            let written = man_pages(command, &dir)?;
            let mut stdout = std::io::stdout();
            for path in written {
                writeln!(stdout, "{}", path.display()).map_err(Failure::from_output)?;
            }
            Ok(0)
        }
    }
}

/// The completion script for `shell`, as bytes (rendered in memory so a closed stdout is a quiet
/// stop, not a panic inside the generator). Hidden subcommands are left out: clap_complete
/// offers them otherwise.
pub fn completions(shell: ShellArg, command: clap::Command) -> Vec<u8> {
    let mut command = without_hidden(&command);
    let shell = match shell {
        ShellArg::Bash => clap_complete::Shell::Bash,
        ShellArg::Zsh => clap_complete::Shell::Zsh,
        ShellArg::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "talos", &mut script);
    script
}

/// `command` without its hidden subcommands, at every level: a copy of its name, about,
/// version, arguments and visible subcommands (clap has no way to remove one), enough for the
/// completion generators, which read nothing else.
fn without_hidden(command: &clap::Command) -> clap::Command {
    let mut kept = clap::Command::new(command.get_name().to_string())
        .args(command.get_arguments().cloned())
        .subcommands(
            command
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .map(without_hidden),
        );
    if let Some(about) = command.get_about() {
        kept = kept.about(about.clone());
    }
    if let Some(version) = command.get_version() {
        kept = kept.version(version.to_string());
    }
    kept
}

/// Writes `talos.1` and a page for every visible subcommand, nested ones included
/// (`talos-model-status.1`), into `dir`; returns the files written, sorted.
pub fn man_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|error| Failure::Usage(format!("cannot create {}: {error}", dir.display())))?;
    let mut command = command.disable_help_subcommand(true);
    command.build();
    // Every page's source is the program and its version ("talos 0.1.0"); clap_mangen would give
    // a subcommand page its own name and no version.
    let source = format!(
        "{} {}",
        command.get_name(),
        command.get_version().unwrap_or_default()
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(0));
    let epoch = std::env::var("SOURCE_DATE_EPOCH").ok();
    let page = Page {
        source,
        date: manpage::page_date(epoch.as_deref(), now),
    };
    let mut written = Vec::new();
    write_pages(command, &page, dir, &mut written)?;
    written.sort();
    Ok(written)
}

/// What every page shares: its `.TH` source and date.
struct Page {
    source: String,
    date: String,
}

fn write_pages(
    command: clap::Command,
    page: &Page,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<(), Failure> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub.clone(), page, dir, written)?;
    }
    let about = command
        .get_about()
        .map(ToString::to_string)
        .unwrap_or_default();
    let man = clap_mangen::Man::new(command)
        .manual(MANUAL)
        .source(page.source.clone())
        .date(page.date.clone());
    let file = man.get_filename();
    let name = file.trim_end_matches(".1").to_string();
    let path = dir.join(&file);
    let mut bytes = Vec::new();
    man.title(name.to_uppercase())
        .render(&mut bytes)
        .and_then(|()| {
            let text = String::from_utf8_lossy(&bytes);
            let sections: Vec<Section> = sections::for_page(&name);
            std::fs::write(
                &path,
                manpage::finish(&text, &name, &manpage::summary(&about), &sections),
            )
        })
        .map_err(|error| Failure::Usage(format!("cannot write {}: {error}", path.display())))?;
    written.push(path);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_leave_hidden_subcommands_out_at_every_level() {
        let command = clap::Command::new("t")
            .arg(clap::Arg::new("socket").long("socket").global(true))
            .subcommand(clap::Command::new("run"))
            .subcommand(clap::Command::new("secret").hide(true))
            .subcommand(
                clap::Command::new("model")
                    .subcommand(clap::Command::new("status"))
                    .subcommand(clap::Command::new("inner").hide(true)),
            );
        let kept = without_hidden(&command);
        let names = |c: &clap::Command| {
            c.get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&kept), ["run", "model"]);
        assert_eq!(names(kept.find_subcommand("model").unwrap()), ["status"]);
        assert!(kept.get_arguments().any(|a| a.get_id() == "socket"));
    }
}

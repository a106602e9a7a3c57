//! `talos generate completions <SHELL>` and `talos generate man <DIR>`: shell completion scripts
//! and man pages made from the clap definitions, for the release tarball and the .deb
//! (`packaging/release.sh`). The output carries no date, so two builds of one commit give the
//! same bytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Subcommand, ValueEnum};

use crate::failure::Failure;

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
/// stop, not a panic inside the generator).
pub fn completions(shell: ShellArg, mut command: clap::Command) -> Vec<u8> {
    let shell = match shell {
        ShellArg::Bash => clap_complete::Shell::Bash,
        ShellArg::Zsh => clap_complete::Shell::Zsh,
        ShellArg::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "talos", &mut script);
    script
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
    let mut written = Vec::new();
    write_pages(command, &source, dir, &mut written)?;
    written.sort();
    Ok(written)
}

fn write_pages(
    command: clap::Command,
    source: &str,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<(), Failure> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub.clone(), source, dir, written)?;
    }
    let page = clap_mangen::Man::new(command).manual(MANUAL).source(source);
    let path = dir.join(page.get_filename());
    let mut bytes = Vec::new();
    page.render(&mut bytes)
        .and_then(|()| std::fs::write(&path, with_empty_date(&bytes)))
        .map_err(|error| Failure::Usage(format!("cannot write {}: {error}", path.display())))?;
    written.push(path);
    Ok(())
}

/// clap_mangen writes an empty date as nothing at all in the `.TH` line (`.TH talos 1  "talos
/// 0.1.0"`), which moves the source into the date's place; this writes it as `""`. No date keeps
/// the page reproducible.
pub fn with_empty_date(page: &[u8]) -> String {
    String::from_utf8_lossy(page).replacen(" 1  \"", " 1 \"\" \"", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_date_stays_in_its_place() {
        let page = b".ie x\n.TH talos 1  \"talos 0.1.0\" \"Talos Manual\"\n.SH NAME\n";
        assert_eq!(
            with_empty_date(page),
            ".ie x\n.TH talos 1 \"\" \"talos 0.1.0\" \"Talos Manual\"\n.SH NAME\n"
        );
    }
}

//! The `talos` command: argument parsing, dispatch to the commands (`dispatch.rs`), and exit codes
//! (0 success, 1 a turn that did not complete, 2 usage and connection errors, 3 a socket that is
//! not the user's own). It is a thin, blocking client of `talosd`; it never runs a model or
//! touches files itself.

// Tests may unwrap: a panic there is a failed test, not a crashed CLI. The non-test build is
// still linted with `unwrap_used` / `expect_used`.

mod acp;
mod approval;
mod checkpoints;
mod choice;
mod client;
mod config_cmd;
mod control;
mod custom;
mod dispatch;
mod doctor;
mod failure;
mod generate;
mod index;
mod interactive;
mod interrupt;
mod profiles;
mod render;
mod sessions;
mod socket;
mod spelling;
mod trace_view;
mod traces;
mod turn;
mod unknown_command;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use talos_protocol::{CompletionStatus, Mode};

use crate::failure::{EXIT_USAGE_OR_CONNECTION, Failure};
use crate::render::Output;
use crate::turn::{Format, RunRequest};

/// Talos: a local coding assistant. With no command, an interactive session on the current
/// directory's workspace; `talos run` sends one request. The `talosd` daemon is started if
/// needed.
#[derive(Debug, Parser)]
#[command(name = "talos", version)]
struct Cli {
    /// The daemon's socket (default: $TALOS_HOME/run/talosd.sock, else
    /// $XDG_RUNTIME_DIR/talos/talosd.sock, else /tmp/talos-<uid>/talosd.sock).
    #[arg(long, global = true, value_name = "PATH")]
    socket: Option<PathBuf>,
    #[command(flatten)]
    interactive: InteractiveArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The interactive session's options (`talos` with no command).
#[derive(Debug, Args)]
struct InteractiveArgs {
    /// The workspace root (default: the current directory).
    #[arg(long = "workspace", value_name = "DIR", id = "session_workspace")]
    workspace: Option<PathBuf>,
    /// The session's mode, as for `talos run` (default: agent); `/mode` changes it.
    #[arg(long, value_enum, id = "session_mode")]
    mode: Option<ModeArg>,
}

impl InteractiveArgs {
    /// The session's options may not stand before another command, where they would be
    /// silently ignored.
    fn check_unused(&self, command: &Option<Command>) -> Result<(), Failure> {
        let given = self.workspace.is_some() || self.mode.is_some();
        if given && command.is_some() {
            return Err(Failure::Usage(
                "--workspace and --mode before a command are the interactive session's; \
                 put them after the command (talos run --workspace DIR ...)"
                    .into(),
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one request in a workspace.
    Run(RunArgs),
    /// Serve the Agent Client Protocol on stdin and stdout, for ACP editors (Zed, JetBrains,
    /// Neovim, Emacs); starts the daemon on demand. The settings for each editor are in
    /// /usr/share/doc/talos/docs/editors.md (docs/editors.md in the tarball and the source).
    Acp,
    /// Show what the running daemon reports about itself.
    Status {
        /// Print the raw status as one JSON line, with `"running": true`; `{"running": false}`
        /// when no daemon answers.
        #[arg(long)]
        json: bool,
    },
    /// Ask the running daemon to shut down (exit status 0 when none is running).
    Stop,
    /// The model server: `talos model status`.
    Model {
        #[command(subcommand)]
        action: ModelAction,
    },
    /// List the command profiles of a workspace and their trust state; `trust` pins them.
    Profiles {
        #[command(subcommand)]
        action: Option<ProfilesAction>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR", global = true)]
        workspace: Option<PathBuf>,
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// List what the daemon's sessions on a workspace remember ("yes for session"), or revoke it.
    Grants {
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Only the session of this mode.
        #[arg(long, value_enum)]
        mode: Option<ModeArg>,
        /// Forget every remembered approval.
        #[arg(long)]
        revoke: bool,
        /// Print the daemon's results as JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// List the workspace's checkpoints, newest first.
    Checkpoints {
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// One checkpoint: `talos checkpoint show ID`.
    Checkpoint {
        #[command(subcommand)]
        action: CheckpointAction,
    },
    /// Restore a checkpoint (asks first; takes a safety checkpoint so it can be undone).
    Restore {
        /// The checkpoint id (`chk-...`), from `talos checkpoints`.
        #[arg(value_name = "ID")]
        id: String,
        /// Also replace files changed by someone else since the checkpoint (shown as
        /// conflicts in the approval); without it they are kept.
        #[arg(long)]
        overwrite_conflicts: bool,
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// Undo everything the last turn that changed files wrote, as one unit (asks first).
    Undo {
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// As for `talos restore`.
        #[arg(long)]
        overwrite_conflicts: bool,
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// Recent turns on a workspace (time, trace id, status, first line of the request);
    /// `show ID` renders one.
    Trace {
        #[command(subcommand)]
        action: Option<TraceAction>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// At most this many turns.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print the daemon's result (with `show`, the trace record) as one JSON line.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Check what a turn needs (config, socket, daemon, containment, chromium), with fixes.
    Doctor {
        /// Print the checks as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The configuration file: where it is, and whether it is valid (no daemon needed).
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Remove traces, turn logs and checkpoints past the retention limits now, and report it.
    Gc {
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// The workspace's search index: `talos index status` (the default) or `talos index rebuild`.
    Index {
        #[command(subcommand)]
        action: Option<IndexAction>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR", global = true)]
        workspace: Option<PathBuf>,
        /// Print the daemon's result as one JSON line.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Ranked places in the workspace for a query, from the index, without the model.
    Search {
        /// Words or identifiers to look for.
        #[arg(value_name = "QUERY")]
        query: String,
        /// Hits to show (default 8, at most 20).
        #[arg(long)]
        limit: Option<usize>,
        /// The workspace (default: the current directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
    /// Completion scripts and man pages from these definitions (for packagers; see the README's
    /// install section).
    #[command(hide = true)]
    Generate {
        #[command(subcommand)]
        action: generate::GenerateAction,
    },
}

/// `talos index` actions.
#[derive(Debug, Clone, Copy, Subcommand)]
enum IndexAction {
    /// Files, chunks, bytes, last update and state.
    Status,
    /// Build the index again from nothing.
    Rebuild,
}

#[derive(Debug, Subcommand)]
enum ConfigAction {
    /// Print the configuration file in use.
    Path,
    /// Validate a configuration file (default: the one in use) with the daemon's own loader:
    /// the same errors, with line numbers. Exit status 0 when it is valid, 1 when not.
    Check {
        /// The file to check.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum CheckpointAction {
    /// Show what a checkpoint captured against the disk now, with diffs.
    Show {
        /// The checkpoint id (`chk-...`).
        #[arg(value_name = "ID")]
        id: String,
        /// Print the daemon's result as one JSON line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum TraceAction {
    /// One turn for a person: request, contract, plan and surface, each call and what decided
    /// it, approvals, checkpoints, verification, outcome and answer.
    Show {
        /// The trace id (`trc-…`), as `talos trace` lists it.
        #[arg(value_name = "ID")]
        id: String,
    },
}

#[derive(Debug, Subcommand)]
enum ModelAction {
    /// Show the model server's state (managed or connect_only), pid, port and last error.
    Status {
        /// Print the raw result as one JSON line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ProfilesAction {
    /// Show `.talos/profiles.yaml` and its hash, and pin it on an explicit yes.
    Trust {
        /// Pin without asking (for scripts; review the file first).
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// `agent` may change files (with approval); `ask` and `plan` are read-only; `auto` answers
    /// `ls` and `show FILE` without the model; `private` keeps approved protected reads on your
    /// screen and away from the model. `chat`, `unified` and `dev` mean `agent`.
    #[arg(long, value_enum, default_value_t = ModeArg::Agent)]
    mode: ModeArg,
    /// Pin a workspace file into the turn's context (repeatable). The model sees it as
    /// untrusted reference data; pinning grants no permission.
    #[arg(long = "pin", value_name = "FILE")]
    pins: Vec<String>,
    /// Print events, approval requests and the outcome as JSON lines.
    #[arg(long)]
    json: bool,
    /// Start a new session instead of continuing this workspace's session in this mode.
    #[arg(long)]
    new_session: bool,
    /// The model to use, by its name in config.yaml's `models:` (`talos model status` lists
    /// them); the session keeps it for its later turns.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The request, in words.
    #[arg(value_name = "REQUEST", required = true, num_args = 1..)]
    request: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    #[value(alias = "chat", alias = "unified", alias = "dev")]
    Agent,
    Ask,
    Plan,
    Auto,
    Private,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            if let Some(message) = unknown_command::message::<Cli>(&error) {
                eprintln!("{message}");
                return ExitCode::from(EXIT_USAGE_OR_CONNECTION);
            }
            // `--help` and `--version` print to stdout and succeed; usage errors exit 2.
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                EXIT_USAGE_OR_CONNECTION
            } else {
                0
            });
        }
    };
    let output = Output::detect();
    match dispatch::run(cli, &output) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            let message = failure.to_string();
            if !message.is_empty() {
                output.err_line(&message);
            }
            ExitCode::from(failure.exit_code())
        }
    }
}

fn mode_of(mode: ModeArg) -> Mode {
    match mode {
        ModeArg::Agent => Mode::Agent,
        ModeArg::Ask => Mode::Ask,
        ModeArg::Plan => Mode::Plan,
        ModeArg::Auto => Mode::Auto,
        ModeArg::Private => Mode::Private,
    }
}

/// Checks the run arguments before any daemon is involved.
fn run_request(args: RunArgs) -> Result<RunRequest, Failure> {
    let prompt = args.request.join(" ");
    if prompt.trim().is_empty() {
        return Err(Failure::Usage("the request is empty".into()));
    }
    Ok(RunRequest {
        workspace: workspace_or_current(args.workspace)?,
        mode: mode_of(args.mode),
        new_session: args.new_session,
        model: args.model,
        pins: args.pins,
        prompt,
        format: if args.json {
            Format::Json
        } else {
            Format::Human
        },
    })
}

/// The given workspace, else the current directory, made canonical.
fn workspace_or_current(dir: Option<PathBuf>) -> Result<String, Failure> {
    let dir = match dir {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|error| {
            Failure::Usage(format!("cannot read the current directory: {error}"))
        })?,
    };
    canonical_workspace(&dir)
}

/// The workspace as an absolute path with symlinks resolved; it must be a directory.
pub(crate) fn canonical_workspace(dir: &Path) -> Result<String, Failure> {
    let canonical = dir
        .canonicalize()
        .map_err(|error| Failure::Usage(format!("workspace {}: {error}", dir.display())))?;
    if !canonical.is_dir() {
        return Err(Failure::Usage(format!(
            "workspace {} is not a directory",
            dir.display()
        )));
    }
    canonical.into_os_string().into_string().map_err(|path| {
        Failure::Usage(format!(
            "workspace {} is not valid UTF-8",
            path.to_string_lossy()
        ))
    })
}

/// 0 for a complete turn, 1 for any other status.
fn turn_exit_code(status: CompletionStatus) -> u8 {
    match status {
        CompletionStatus::Complete => 0,
        CompletionStatus::Partial
        | CompletionStatus::Blocked
        | CompletionStatus::AdvisoryOnly
        | CompletionStatus::Failed
        | CompletionStatus::Cancelled => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_complete_turn_exits_zero() {
        for (status, expected) in [
            (CompletionStatus::Complete, 0),
            (CompletionStatus::Partial, 1),
            (CompletionStatus::Blocked, 1),
            (CompletionStatus::AdvisoryOnly, 1),
            (CompletionStatus::Failed, 1),
            (CompletionStatus::Cancelled, 1),
        ] {
            assert_eq!(turn_exit_code(status), expected, "{status:?}");
        }
    }

    /// `talos rn` names `run`, the subcommand a dropped letter away (clap's own tip said `grants`).
    #[test]
    fn a_mistyped_subcommand_names_the_one_meant() {
        for (typed, meant) in [("rn", "'run'"), ("stauts", "'status'"), ("udno", "'undo'")] {
            let error = Cli::try_parse_from(["talos", typed]).unwrap_err();
            let message = crate::unknown_command::message::<Cli>(&error).unwrap();
            assert!(message.contains(meant), "{typed}: {message}");
        }
    }

    #[test]
    fn arguments_parse_with_the_socket_flag_before_or_after_the_command() {
        let cli = Cli::try_parse_from([
            "talos", "--socket", "/s", "run", "--mode", "plan", "fix", "it",
        ])
        .unwrap();
        assert_eq!(cli.socket, Some(PathBuf::from("/s")));
        let Some(Command::Run(args)) = cli.command else {
            panic!("not run")
        };
        assert_eq!(
            (args.mode, args.request.join(" ")),
            (ModeArg::Plan, "fix it".to_string())
        );
        let cli = Cli::try_parse_from(["talos", "status", "--json", "--socket", "/s"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Status { json: true })));
        assert_eq!(cli.socket, Some(PathBuf::from("/s")));
    }

    #[test]
    fn bad_usage_is_a_clap_error_with_exit_code_two() {
        for argv in [
            vec!["talos", "run", "--mode", "yolo", "x"],
            vec!["talos", "run"],
            vec!["talos", "frobnicate"],
            vec!["talos", "--mode", "yolo"],
        ] {
            let error = Cli::try_parse_from(&argv).unwrap_err();
            assert!(error.use_stderr(), "{argv:?}");
            assert_eq!(error.exit_code(), 2, "{argv:?}");
        }
    }

    /// Proves `talos` alone, or with the session's options, is the interactive session.
    #[test]
    fn no_command_is_the_interactive_session() {
        let cli = Cli::try_parse_from(["talos"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.interactive.mode, None);
        let cli = Cli::try_parse_from([
            "talos",
            "--workspace",
            "/w",
            "--mode",
            "ask",
            "--socket",
            "/s",
        ])
        .unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.interactive.workspace, Some(PathBuf::from("/w")));
        assert_eq!(cli.interactive.mode, Some(ModeArg::Ask));
        assert_eq!(cli.socket, Some(PathBuf::from("/s")));
        assert!(cli.interactive.check_unused(&cli.command).is_ok());
        let cli = Cli::try_parse_from(["talos", "--workspace", "/w", "status"]).unwrap();
        let failure = cli.interactive.check_unused(&cli.command).unwrap_err();
        assert!(matches!(failure, Failure::Usage(_)), "{failure:?}");
    }

    #[test]
    fn a_missing_workspace_is_a_usage_error() {
        let failure = canonical_workspace(Path::new("/nonexistent-talos-workspace")).unwrap_err();
        assert!(matches!(failure, Failure::Usage(_)));
        assert_eq!(failure.exit_code(), 2);
        assert!(
            canonical_workspace(Path::new("."))
                .unwrap()
                .starts_with('/')
        );
    }
}

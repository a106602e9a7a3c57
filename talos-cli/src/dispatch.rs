//! The command table: one arm per `talos` subcommand, each connecting as that command needs
//! (starting the daemon or not, with the `initialize` handshake or not) and calling the module
//! that owns the work; the exit code each earned.

use std::path::PathBuf;

use clap::CommandFactory;

use crate::client::Client;
use crate::failure::Failure;
use crate::render::Output;
use crate::socket::{self, AutoStart, SocketTarget};
use crate::{
    CheckpointAction, Cli, Command, ConfigAction, IndexAction, ModeArg, ModelAction,
    ProfilesAction, RunArgs, TraceAction, mode_of, run_request, turn_exit_code,
    workspace_or_current,
};
use crate::{
    acp, approval, checkpoints, config_cmd, control, doctor, generate, index, interactive,
    profiles, sessions, traces, turn,
};

/// Runs the chosen command and returns the exit code it earned.
pub fn run(cli: Cli, output: &Output) -> Result<u8, Failure> {
    let target = SocketTarget::resolve(cli.socket.as_deref(), &socket::socket_env_from_process());
    cli.interactive.check_unused(&cli.command)?;
    let Some(command) = cli.command else {
        let start = interactive::Start {
            workspace: workspace_or_current(cli.interactive.workspace)?,
            mode: mode_of(cli.interactive.mode.unwrap_or(ModeArg::Agent)),
        };
        return interactive::run(&target, start, output);
    };
    let target = &target;
    match command {
        Command::Run(args) => run_turn(target, args, output),
        Command::Status { json } => status(target, json, output),
        Command::Grants {
            workspace,
            mode,
            revoke,
            json,
        } => grants(target, workspace, mode, revoke, json, output),
        Command::Profiles {
            action,
            workspace,
            json,
        } => profiles(target, action, workspace, json, output),
        Command::Trace {
            action,
            workspace,
            limit,
            json,
        } => trace(target, action, workspace, limit, json, output),
        Command::Acp => acp::run(target),
        Command::Index {
            action,
            workspace,
            json,
        } => index(target, action, workspace, json, output),
        Command::Search {
            query,
            limit,
            workspace,
            json,
        } => search(target, &query, limit, workspace, json, output),
        Command::Doctor { json } => doctor::run(target, json, output),
        Command::Generate { action } => generate::run(action, Cli::command()),
        Command::Config { action } => config(action),
        Command::Gc { json } => {
            traces::gc(&mut connect(target, AutoStart::Start)?, json, output).map(done)
        }
        Command::Model {
            action: ModelAction::Status { json },
        } => control::model_status(&mut connect(target, AutoStart::Never)?, json, output).map(done),
        Command::Checkpoints { workspace, json } => checkpoints(target, workspace, json, output),
        Command::Checkpoint {
            action: CheckpointAction::Show { id, json },
        } => checkpoints::show(
            &mut connect_initialized(target, AutoStart::Start)?,
            &id,
            json,
            output,
        )
        .map(done),
        Command::Restore {
            id,
            overwrite_conflicts,
            json,
        } => restore(target, &id, overwrite_conflicts, json, output),
        Command::Undo {
            workspace,
            overwrite_conflicts,
            json,
        } => undo(target, workspace, overwrite_conflicts, json, output),
        Command::Stop => stop(target, output),
    }
}

/// A client on the daemon's socket, started first when `auto` says so.
fn connect(target: &SocketTarget, auto: AutoStart) -> Result<Client, Failure> {
    Client::new(socket::connect(target, auto)?)
}

/// A client that has done the `initialize` handshake.
fn connect_initialized(target: &SocketTarget, auto: AutoStart) -> Result<Client, Failure> {
    let mut client = connect(target, auto)?;
    client.initialize()?;
    Ok(client)
}

/// The exit code of a command that succeeded.
fn done(_: ()) -> u8 {
    0
}

/// `talos run`: one turn, its exit code from how it ended.
fn run_turn(target: &SocketTarget, args: RunArgs, output: &Output) -> Result<u8, Failure> {
    let request = run_request(args)?;
    let mut client = connect(target, AutoStart::Start)?;
    // Without a terminal (or with `--json`) nobody can choose a reading: the daemon is told,
    // and ends such a turn CONTRACT_AMBIGUOUS instead of asking.
    let declines: &[&str] = if crate::choice::can_ask(request.format == turn::Format::Human) {
        &[]
    } else {
        &crate::choice::DECLINED_WITHOUT_A_TERMINAL
    };
    client.initialize_declining(declines)?;
    let status = turn::run(&mut client, &request, output, Some(target))?;
    Ok(turn_exit_code(status))
}

/// `talos status`: the daemon's status; with `--json`, a JSON value even when none runs.
fn status(target: &SocketTarget, json: bool, output: &Output) -> Result<u8, Failure> {
    match socket::connect(target, AutoStart::Never) {
        // A machine asking gets a JSON value either way (issue 29, item 4).
        Err(Failure::NotRunning(_)) if json => {
            output.out(&format!("{}\n", control::NOT_RUNNING_JSON))?;
            Ok(0)
        }
        connected => control::status(&mut Client::new(connected?)?, json, output).map(done),
    }
}

/// `talos profiles [trust]`: the workspace's command profiles, or pinning them.
fn profiles(
    target: &SocketTarget,
    action: Option<ProfilesAction>,
    workspace: Option<PathBuf>,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let workspace = workspace_or_current(workspace)?;
    let mut client = connect(target, AutoStart::Start)?;
    match action {
        None => profiles::show(&mut client, &workspace, json, output)?,
        Some(ProfilesAction::Trust { yes }) => {
            profiles::trust(&mut client, &workspace, yes, output)?
        }
    }
    Ok(0)
}

/// `talos trace [show ID]`: the workspace's recent turns, or one trace.
fn trace(
    target: &SocketTarget,
    action: Option<TraceAction>,
    workspace: Option<PathBuf>,
    limit: usize,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let mut client = connect(target, AutoStart::Start)?;
    match action {
        Some(TraceAction::Show { id }) => traces::show(&mut client, &id, json, output)?,
        None => {
            let workspace = workspace_or_current(workspace)?;
            traces::list(&mut client, &workspace, limit, json, output)?
        }
    }
    Ok(0)
}

/// `talos index [status|rebuild]`.
fn index(
    target: &SocketTarget,
    action: Option<IndexAction>,
    workspace: Option<PathBuf>,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let workspace = workspace_or_current(workspace)?;
    let mut client = connect(target, AutoStart::Start)?;
    match action.unwrap_or(IndexAction::Status) {
        IndexAction::Status => index::status(&mut client, &workspace, json, output)?,
        IndexAction::Rebuild => index::rebuild(&mut client, &workspace, json, output)?,
    }
    Ok(0)
}

/// `talos grants [--revoke]`: what the workspace's session remembers, or forgetting it.
fn grants(
    target: &SocketTarget,
    workspace: Option<PathBuf>,
    mode: Option<ModeArg>,
    revoke: bool,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let workspace = workspace_or_current(workspace)?;
    let mut client = connect(target, AutoStart::Never)?;
    let mode = mode.map(mode_of);
    sessions::grants(&mut client, &workspace, mode, revoke, json, output).map(done)
}

/// `talos search QUERY`: ranked places from the index, without the model.
fn search(
    target: &SocketTarget,
    query: &str,
    limit: Option<usize>,
    workspace: Option<PathBuf>,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let workspace = workspace_or_current(workspace)?;
    let mut client = connect(target, AutoStart::Start)?;
    index::search(&mut client, &workspace, query, limit, json, output).map(done)
}

/// `talos checkpoints`: the workspace's checkpoints.
fn checkpoints(
    target: &SocketTarget,
    workspace: Option<PathBuf>,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let workspace = workspace_or_current(workspace)?;
    let mut client = connect_initialized(target, AutoStart::Start)?;
    checkpoints::list(&mut client, &workspace, json, output).map(done)
}

/// `talos restore ID`: puts a checkpoint's files back, after the person's approval.
fn restore(
    target: &SocketTarget,
    id: &str,
    overwrite_conflicts: bool,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let mut client = connect_initialized(target, AutoStart::Start)?;
    let ask = &mut approval::ask;
    checkpoints::restore(&mut client, id, overwrite_conflicts, json, output, ask)
}

/// `talos undo`: restores the last turn's checkpoint of the workspace's session.
fn undo(
    target: &SocketTarget,
    workspace: Option<PathBuf>,
    overwrite_conflicts: bool,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let workspace = workspace_or_current(workspace)?;
    let mut client = connect_initialized(target, AutoStart::Never)?;
    checkpoints::undo(&mut client, &workspace, overwrite_conflicts, json, output)
}

/// `talos config path|check`: the daemon's own loader, no daemon contacted.
fn config(action: ConfigAction) -> Result<u8, Failure> {
    match action {
        ConfigAction::Path => config_cmd::run(&["--config-path".into()]),
        ConfigAction::Check { file } => {
            let mut args = vec![std::ffi::OsString::from("--check-config")];
            if let Some(file) = file {
                args.extend(["--config-file".into(), file.into_os_string()]);
            }
            config_cmd::run(&args)
        }
    }
}

/// `talos stop`: asks the daemon to stop; none running is not a failure.
fn stop(target: &SocketTarget, output: &Output) -> Result<u8, Failure> {
    match socket::connect(target, AutoStart::Never) {
        // Nothing to stop is not a failure: the daemon is not running, as asked.
        Err(Failure::NotRunning(socket)) => {
            output.out(&format!(
                "talosd is not running (socket: {}); nothing to stop\n",
                socket.display()
            ))?;
            Ok(0)
        }
        connected => control::stop(&mut Client::new(connected?)?, output).map(done),
    }
}

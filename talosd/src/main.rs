//! The `talosd` binary: resolves the home, the config and the socket, then serves. Without
//! `--foreground` it starts a detached copy of itself and returns once that copy's socket
//! accepts connections.
// std::fs here: the daemon's log folder and socket, not workspace files.
#![allow(clippy::disallowed_methods)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{CommandFactory, Parser};
use talosd::config::Config;
use talosd::paths::Home;

#[derive(Debug, Parser)]
#[command(
    name = "talosd",
    version,
    about = "The Talos daemon: sessions, policy, model engine, checkpoints and traces"
)]
struct Args {
    /// Socket path (default: $TALOS_HOME/run/talosd.sock, else $XDG_RUNTIME_DIR/talos/talosd.sock).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Stay attached to the terminal and log to stderr.
    #[arg(long)]
    foreground: bool,
    /// Print the configuration file in use and exit (what `talos config path` shows).
    #[arg(long)]
    config_path: bool,
    /// Validate the configuration file (the one in use, or --config-file) with the daemon's own
    /// loader and exit, starting nothing (what `talos config check` runs).
    #[arg(long)]
    check_config: bool,
    /// Print, as one JSON object, the checks that need the configuration (llama-server, the
    /// model file, the port, the home's disk use) and exit, starting nothing (`talos doctor`).
    #[arg(long)]
    doctor: bool,
    /// The file --check-config validates instead of the one in use.
    #[arg(long, value_name = "FILE", requires = "check_config")]
    config_file: Option<PathBuf>,
    /// Write the man page talosd.1 into DIR and exit (for packagers).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_man: Option<PathBuf>,
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().collect();
    if raw.get(1).map(String::as_str) == Some(talosd::contain::SHIM_FLAG) {
        let code = talosd::contain::shim_main(&raw[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if raw.get(1).map(String::as_str) == Some(talosd::documents::FLAG) {
        let code = talosd::documents::child_main(&raw[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let args = Args::parse();
    if let Some(dir) = &args.generate_man {
        return generate_man(dir);
    }
    let talos_home = std::env::var("TALOS_HOME").ok();
    let home = Home::resolve(talos_home.as_deref());
    let socket = args.socket.clone().unwrap_or_else(|| {
        talos_protocol::socket::default_socket_path(&talos_protocol::socket::SocketEnv {
            talos_home: talos_home.clone(),
            xdg_runtime_dir: std::env::var("XDG_RUNTIME_DIR").ok(),
            temp_dir: std::env::temp_dir(),
            uid: talosd::socket::my_uid(),
        })
    });
    if args.doctor {
        let report = talosd::doctor::report(&home, &home.config_file);
        let _ = writeln!(std::io::stdout(), "{report}");
        return ExitCode::SUCCESS;
    }
    if args.config_path || args.check_config {
        return config_command(&home, args.config_path, args.config_file);
    }
    let result = if args.foreground {
        serve(home, socket)
    } else {
        detach(&home, &socket, args.socket.is_some())
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: on a closed or full stderr it would panic and exit 101.
            let _ = writeln!(std::io::stderr(), "talosd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `--config-path` and `--check-config`: the daemon's loader, no daemon.
fn config_command(home: &Home, path: bool, check: Option<PathBuf>) -> ExitCode {
    if path {
        let _ = writeln!(std::io::stdout(), "{}", home.config_file.display());
        return ExitCode::SUCCESS;
    }
    let file = check.unwrap_or_else(|| home.config_file.clone());
    let missing = std::fs::symlink_metadata(&file).is_err();
    match Config::load(&file) {
        Ok(_) if missing => {
            let _ = writeln!(
                std::io::stdout(),
                "{}: no such file; the defaults apply",
                file.display()
            );
            ExitCode::SUCCESS
        }
        Ok(_) => {
            let _ = writeln!(std::io::stdout(), "{}: valid", file.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "configuration error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--generate-man DIR`: talosd.1 from these definitions, dated `SOURCE_DATE_EPOCH` (the
/// release's commit time, so the page is reproducible).
fn generate_man(dir: &std::path::Path) -> ExitCode {
    let path = dir.join("talosd.1");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(0));
    let epoch = std::env::var("SOURCE_DATE_EPOCH").ok();
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| talosd::man_page::render(Args::command(), epoch.as_deref(), now))
        .and_then(|page| std::fs::write(&path, page));
    match written {
        Ok(()) => {
            let _ = writeln!(std::io::stdout(), "{}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "talosd: cannot write {}: {e}",
                path.display()
            );
            ExitCode::FAILURE
        }
    }
}

fn serve(home: Home, socket: PathBuf) -> anyhow::Result<()> {
    talosd::logging::init();
    for place in home.move_old_places() {
        tracing::info!("{place}");
    }
    let open_files = talosd::limits::raise_open_files();
    tracing::debug!(?open_files, "open-file limit");
    let config = Config::load(&home.config_file);
    if let Err(e) = &config {
        tracing::error!(error = %e, "configuration error: turns are refused until it is fixed");
    }
    // Before any thread: it clears LISTEN_PID and LISTEN_FDS (systemd socket activation).
    let passed = talosd::activation::passed_listener()?;
    home.prepare()
        .with_context(|| format!("cannot prepare {}", home.state.display()))?;
    let home_lock = talosd::recovery::sweep_at_start(&home);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let activated = passed.is_some();
        let bound = match passed {
            Some(listener) => talosd::socket::adopt(listener, &socket)
                .with_context(|| format!("cannot take the socket systemd passed for {}", socket.display()))?,
            None => talosd::socket::bind(&socket).with_context(|| format!("cannot listen on {}", socket.display()))?,
        };
        tracing::info!(socket = %socket.display(), home = %home.root.display(), pid = std::process::id(), activated, "talosd listening");
        talosd::activation::notify_ready(&socket);
        let daemon = talosd::Daemon::new(talosd::DaemonSettings { config, home, socket_path: socket.clone() });
        talosd::run(daemon, bound.listener, shutdown_signal()).await;
        talosd::activation::notify_stopping();
        // A socket systemd bound stays: the .socket unit owns it and starts talosd again.
        if !activated {
            let _ = std::fs::remove_file(&socket);
        }
        drop(bound.lock);
        drop(home_lock);
        tracing::info!("talosd stopped");
        Ok(())
    })
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot install signal handlers; stop talosd with daemon/shutdown");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
    }
}

fn detach(home: &Home, socket: &PathBuf, explicit_socket: bool) -> anyhow::Result<()> {
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        let _ = writeln!(
            std::io::stdout(),
            "talosd is already running (socket: {})",
            socket.display()
        );
        return Ok(());
    }
    // Before the log folder is made, or the old one would never move.
    let moved = home.move_old_places();
    let logs = home.logs();
    let log_path = logs.shown("talosd.log");
    // Through the home's handle: the logs folder and the log are never followed out of it.
    let mut log = logs
        .open_append("talosd.log")
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    for place in moved {
        let _ = writeln!(log, "talosd: {place}");
    }
    let exe = std::env::current_exe().context("cannot find the talosd executable")?;
    let mut command = Command::new(exe);
    command.arg("--foreground");
    if explicit_socket {
        command.arg("--socket").arg(socket);
    }
    use std::os::unix::process::CommandExt;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("cannot start talosd")?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::os::unix::net::UnixStream::connect(socket).is_ok() {
            let _ = writeln!(
                std::io::stdout(),
                "talosd started (pid {}, socket {})",
                child.id(),
                socket.display()
            );
            return Ok(());
        }
        if let Some(status) = child.try_wait().context("cannot watch talosd")? {
            anyhow::bail!(
                "talosd exited during start-up ({status}); see {}",
                log_path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    anyhow::bail!(
        "talosd did not open {} within 10 s; see {}",
        socket.display(),
        log_path.display()
    )
}

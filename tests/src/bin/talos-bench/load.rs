//! `talos-bench load`: the load benchmark of issue 11. At each level N it starts a fresh real
//! daemon (`e2e-talosd`) on its own home, opens N sessions spread over connections (one
//! connection per session unless `--per-connection` says otherwise), runs K governed edit turns
//! in every session at the same time (each approved at once) against the instant fake model,
//! and prints, as a table, turns per second, p50 and p99 turn time, the daemon's resident memory
//! (idle, after the turns, and its peak, from `/proc/<pid>/status`) and its open file
//! descriptors. The driver is `talos_tests::load`, the same one the load case in
//! `tests/tests/daemon/load.rs` runs: every turn's events, trace and file are checked here too, and
//! broken promises are counted in the table and printed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use talos_tests::fake_llama::FakeLlama;
use talos_tests::harness::{Client, TestDaemon, timeout_workspace};
use talos_tests::load::{self, LoadRun, LoadShape};

/// How the load runs: the session counts to measure, turns per session, sessions per connection.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LoadArgs {
    levels: Vec<usize>,
    turns_per_session: usize,
    sessions_per_connection: usize,
}

/// One level's figures.
struct Level {
    shape: LoadShape,
    run: LoadRun,
    idle_kib: u64,
    after_kib: u64,
    peak_kib: u64,
    /// The daemon's open file descriptors after the turns, its sessions still open.
    open_fds: usize,
    violations: Vec<String>,
}

const USAGE: &str =
    "usage: talos-bench load [--turns K] [--per-connection S] [LEVELS...] (default: 16 64 256)";

/// Runs the load benchmark with the arguments after `load`.
pub async fn main(args: Vec<String>) -> anyhow::Result<()> {
    let args = parse_args(&args)?;
    let llama = FakeLlama::start(true, load::edit_model()).await;
    println!(
        "talos-bench load: {} edit turns per session, {} session(s) per connection, approvals answered at once, instant fake model (release={})",
        args.turns_per_session,
        args.sessions_per_connection,
        !cfg!(debug_assertions)
    );
    let mut levels = Vec::new();
    for &sessions in &args.levels {
        if sessions % args.sessions_per_connection != 0 {
            bail!(
                "{sessions} sessions do not split into connections of {}",
                args.sessions_per_connection
            );
        }
        let shape = LoadShape {
            connections: sessions / args.sessions_per_connection,
            sessions_per_connection: args.sessions_per_connection,
            turns_per_session: args.turns_per_session,
        };
        let level = run_level(&llama.url, shape).await?;
        for violation in level.violations.iter().take(20) {
            println!("  broken promise: {violation}");
        }
        levels.push(level);
    }
    print_table(&levels);
    // Other work on the machine moves these figures; say how busy it was.
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!(
            "load average after the run (1, 5, 15 min): {}",
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    if levels.iter().any(|l| !l.violations.is_empty()) {
        bail!("the load broke the protocol's promises (see above)");
    }
    Ok(())
}

fn parse_args(args: &[String]) -> anyhow::Result<LoadArgs> {
    let mut parsed = LoadArgs {
        levels: Vec::new(),
        turns_per_session: 20,
        sessions_per_connection: 1,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> anyhow::Result<usize> {
            let value = args
                .next()
                .with_context(|| format!("{name} needs a value"))?;
            value
                .parse()
                .with_context(|| format!("{name} {value}: not a count"))
        };
        match arg.as_str() {
            "--turns" => parsed.turns_per_session = value("--turns")?,
            "--per-connection" => parsed.sessions_per_connection = value("--per-connection")?,
            level => parsed.levels.push(
                level
                    .parse()
                    .with_context(|| format!("{level}: not a session count\n{USAGE}"))?,
            ),
        }
    }
    if parsed.levels.is_empty() {
        parsed.levels = vec![16, 64, 256];
    }
    if parsed.turns_per_session == 0
        || parsed.sessions_per_connection == 0
        || parsed.levels.contains(&0)
    {
        bail!("counts must be at least 1\n{USAGE}");
    }
    Ok(parsed)
}

/// One level on a fresh daemon: start it, open the sessions, run the turns, check the traces
/// and files, read its memory, stop it.
async fn run_level(model_url: &str, shape: LoadShape) -> anyhow::Result<Level> {
    let home = tempfile::Builder::new()
        .prefix("tbload")
        .tempdir_in("/tmp")?;
    std::fs::write(
        home.path().join("config.yaml"),
        TestDaemon::config_for(model_url, true),
    )?;
    let (mut daemon, socket) = start_daemon(home.path()).await?;
    let pid = daemon.id();
    let idle_kib = super::rss_kib(pid)?;
    let dirs: Vec<_> = (0..shape.sessions()).map(|_| timeout_workspace()).collect();
    let workspaces: Vec<PathBuf> = dirs.iter().map(|d| d.path().to_path_buf()).collect();
    let run = load::run(&socket, shape, &workspaces, Duration::from_secs(120)).await;
    let after_kib = super::rss_kib(pid)?;
    let peak_kib = super::peak_kib(pid)?;
    let open_fds = std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("fd"))?.count();
    let mut violations = run.violations.clone();
    violations.extend(load::check_traces(home.path(), &run.turns));
    violations.extend(load::check_workspaces(&workspaces, shape.turns_per_session));
    let mut client = Client::connect(&socket).await;
    client.call("daemon/shutdown", serde_json::json!({})).await;
    let _ = daemon.wait();
    Ok(Level {
        shape,
        run,
        idle_kib,
        after_kib,
        peak_kib,
        open_fds,
        violations,
    })
}

/// Starts `e2e-talosd` (built beside this binary) on `home` and waits until its socket accepts.
async fn start_daemon(home: &Path) -> anyhow::Result<(Child, PathBuf)> {
    let daemon = Command::new(super::sibling("e2e-talosd")?)
        .arg("--foreground")
        .env("TALOS_HOME", home)
        .env("TALOS_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    let socket = home.join("run").join("talosd.sock");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if Instant::now() > deadline {
            bail!("talosd did not start on {}", socket.display());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok((daemon, socket))
}

fn print_table(levels: &[Level]) {
    let mib = |kib: u64| kib as f64 / 1024.0;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{:>8} {:>5} {:>6} {:>7} {:>8} {:>9} {:>9} {:>9} {:>10} {:>9} {:>5} {:>6}",
        "sessions",
        "conns",
        "turns",
        "wall s",
        "turns/s",
        "p50 ms",
        "p99 ms",
        "idle MiB",
        "after MiB",
        "peak MiB",
        "fds",
        "broken"
    );
    for level in levels {
        println!(
            "{:>8} {:>5} {:>6} {:>7.2} {:>8.0} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>9.1} {:>5} {:>6}",
            level.shape.sessions(),
            level.shape.connections,
            level.run.turns.len(),
            level.run.elapsed.as_secs_f64(),
            level.run.turns_per_second(),
            ms(level.run.percentile(50)),
            ms(level.run.percentile(99)),
            mib(level.idle_kib),
            mib(level.after_kib),
            mib(level.peak_kib),
            level.open_fds,
            level.violations.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `args` and compares with `expected` (`None`: refused).
    fn check(args: &[&str], expected: Option<(&[usize], usize, usize)>) {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let got = parse_args(&args).ok().map(|a| {
            (
                a.levels.clone(),
                a.turns_per_session,
                a.sessions_per_connection,
            )
        });
        let expected = expected.map(|(l, t, s)| (l.to_vec(), t, s));
        assert_eq!(got, expected, "{args:?}");
    }

    /// Proves the load mode's arguments: defaults, levels, options, and refusals.
    #[test]
    fn load_arguments_parse() {
        check(&[], Some((&[16, 64, 256], 20, 1)));
        check(&["8", "32"], Some((&[8, 32], 20, 1)));
        check(&["--turns", "5", "64"], Some((&[64], 5, 1)));
        check(&["--per-connection", "4", "256"], Some((&[256], 20, 4)));
        check(&["--turns"], None);
        check(&["--turns", "0"], None);
        check(&["many"], None);
        check(&["0"], None);
    }
}

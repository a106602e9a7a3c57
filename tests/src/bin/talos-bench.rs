//! talos-bench: the harness's own cost, measured through the real socket against an instant
//! fake model. Runs the real `talosd` binary (built beside this one as `e2e-talosd`), drives
//! many governed edit turns (propose, check, approve, checkpoint, write, verify, trace), and
//! prints per-turn p50/p99, `daemon/status` round-trips per second, and the daemon's idle and
//! busy resident memory.
//!
//! Run: `cargo run --release -p talos-tests --bin talos-bench [-- TURNS STATUS_CALLS]`; the
//! load benchmark (`-- load [LEVELS...]`) is in `talos-bench/load.rs`, the ACP bridge's
//! (`-- acp [RUNS]`) in `talos-bench/acp.rs`.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;
use talos_protocol::{Classification, TurnOutcome};
use talos_tests::fake_llama::{FakeLlama, Reply, read_call, scripted};
use talos_tests::harness::{Client, TestDaemon, approve_all};

#[path = "talos-bench/acp.rs"]
mod acp;
#[path = "talos-bench/load.rs"]
mod load;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!(
            "talos-bench: the harness's own cost against an instant fake model\n\nusage:\n  talos-bench [TURNS [STATUS_CALLS]]   governed edit turns (default 300) and daemon/status calls (default 5000)\n  talos-bench load [LEVELS...]        the load benchmark (default levels 16 64 256)\n  talos-bench acp [RUNS]              the ACP bridge against the daemon's protocol (default 200 runs)\n  talos-bench --help                  this text\n\nNeeds e2e-talosd beside this binary: cargo build --release -p talos-tests"
        );
        return Ok(());
    }
    if std::env::args().nth(1).as_deref() == Some("load") {
        return load::main(args.skip(1).collect()).await;
    }
    let bench_acp = std::env::args().nth(1).as_deref() == Some("acp");
    let acp_args: Vec<String> = std::env::args().skip(2).collect();
    if bench_acp {
        args.next();
    }
    let turns: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()
        .context("TURNS must be a number (see --help)")?
        .unwrap_or(300);
    let status_calls: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()
        .context("STATUS_CALLS must be a number (see --help)")?
        .unwrap_or(5000);
    let model = scripted(vec![
        read_call("settings.py"),
        Reply::ToolCalls(vec![(
            "talos.edit_file".into(),
            r#"{"path":"settings.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 60"}"#
                .into(),
        )]),
        Reply::Text("Done.".into()),
    ]);
    let llama = FakeLlama::start(true, model).await;
    let home = tempfile::Builder::new()
        .prefix("tbench")
        .tempdir_in("/tmp")?;
    std::fs::write(
        home.path().join("config.yaml"),
        TestDaemon::config_for(&llama.url, true),
    )?;
    let daemon_exe = sibling("e2e-talosd")?;
    let mut daemon = Command::new(&daemon_exe)
        .arg("--foreground")
        .env("TALOS_HOME", home.path())
        .env("TALOS_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    let socket = home.path().join("run").join("talosd.sock");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if Instant::now() > deadline {
            bail!("talosd did not start");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let idle_rss = rss_kib(daemon.id())?;
    if bench_acp {
        let talos = sibling("e2e-talos")?;
        let result = acp::main(acp_args, &socket, home.path(), &daemon_exe, &talos).await;
        let _ = daemon.kill();
        let _ = daemon.wait();
        return result;
    }

    let ws = tempfile::tempdir()?;
    let settings = ws.path().join("settings.py");
    let mut client = Client::connect(&socket).await;
    let session = client.open_session(ws.path(), "agent").await;
    let mut per_turn = Vec::with_capacity(turns);
    // Where each of the first eleven turns' requests begin, for the prompt-prefix figure.
    let mut turn_starts = Vec::new();
    for i in 0..turns {
        if i < 11 {
            turn_starts.push(llama.requests().len());
        }
        let started = Instant::now();
        edit_turn(&mut client, &session, &settings, EDIT).await?;
        per_turn.push(started.elapsed());
    }
    let prefix = prefix_reuse(&llama.requests(), &turn_starts);
    let busy_rss = rss_kib(daemon.id())?;
    // Model calls per governed edit (issue 12, item 5): the runtime writes the summary once the
    // edit is read back; a request that asks for an explanation still gets the model's answer,
    // which is the loop every edit turn ran before.
    let edit_calls = llama.requests().len() as f64 / turns as f64;
    let explained = turns.min(100);
    let before = llama.requests().len();
    let mut per_explained = Vec::with_capacity(explained);
    for _ in 0..explained {
        let started = Instant::now();
        edit_turn(&mut client, &session, &settings, EXPLAINED).await?;
        per_explained.push(started.elapsed());
    }
    let explained_calls = (llama.requests().len() - before) as f64 / explained as f64;
    let syncs = fsyncs_per_edit_turn(daemon.id(), &mut client, &session, &settings).await;

    let mut per_status = Vec::with_capacity(status_calls);
    let started = Instant::now();
    for _ in 0..status_calls {
        let t = Instant::now();
        client.call("daemon/status", json!({})).await;
        per_status.push(t.elapsed());
    }
    let status_elapsed = started.elapsed();
    let peak = peak_kib(daemon.id())?;
    client.call("daemon/shutdown", json!({})).await;
    let _ = daemon.wait();

    per_turn.sort();
    per_explained.sort();
    per_status.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "talos-bench: {turns} governed edit turns, {status_calls} daemon/status calls (release={})",
        !cfg!(debug_assertions)
    );
    println!(
        "edit turn (socket round trip incl. the model calls, a read, approval, checkpoint, write, verify, trace):"
    );
    println!(
        "  p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms",
        ms(pct(&per_turn, 50)),
        ms(pct(&per_turn, 99)),
        ms(*per_turn.last().unwrap_or(&Duration::ZERO))
    );
    println!(
        "model calls per governed edit: {edit_calls:.2} (runtime summary after the verified edit)   \
         {explained_calls:.2} when the request asks for an explanation ({explained} turns; every \
         edit turn before issue 12)   p50 {:.2} ms vs {:.2} ms against an instant fake model; \
         on a local model each call saved is a full prompt evaluation and generation",
        ms(pct(&per_turn, 50)),
        ms(pct(&per_explained, 50)),
    );
    println!(
        "daemon/status: {:.0} round-trips/s   p50 {:.1} us   p99 {:.1} us",
        status_calls as f64 / status_elapsed.as_secs_f64(),
        us(pct(&per_status, 50)),
        us(pct(&per_status, 99))
    );
    println!("talosd RSS: idle {idle_rss} KiB   after turns {busy_rss} KiB   peak {peak} KiB");
    println!(
        "prompt prefix kept from the request before (what a server's prompt cache reuses), turns 2-10 of one session: median {:.2} of each request's bytes, {:.2} on each turn's first request",
        median(&prefix.all),
        median(&prefix.first)
    );
    match syncs {
        Ok((per_turn, by_place)) => println!(
            "fsyncs per governed edit turn (strace -f of talosd, {SYNC_TURNS} turns): {per_turn:.1}   by what was synced: {by_place}"
        ),
        Err(e) => println!("fsyncs per governed edit turn: not measured ({e})"),
    }
    web_checks();
    durability(home.path())?;
    Ok(())
}

/// Edit turns watched for their syncs.
const SYNC_TURNS: usize = 5;

/// The `fsync`, `fdatasync` and `syncfs` calls talosd makes per governed edit turn, counted by
/// `strace` attached to the daemon (issue 26, defect 10), with what each synced (from
/// `strace -y`'s descriptor paths, the home's and the workspace's parts named).
async fn fsyncs_per_edit_turn(
    pid: u32,
    client: &mut Client,
    session: &str,
    settings: &Path,
) -> anyhow::Result<(f64, String)> {
    let log = tempfile::NamedTempFile::new()?;
    let mut strace = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-y",
            "-e",
            "trace=fsync,fdatasync,syncfs",
            "-o",
        ])
        .arg(log.path())
        .args(["-p", &pid.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("strace (Debian's strace package) is not installed")?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for _ in 0..SYNC_TURNS {
        edit_turn(client, session, settings, EDIT).await?;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = Command::new("kill")
        .arg("-INT")
        .arg(strace.id().to_string())
        .status();
    let _ = strace.wait();
    let text = std::fs::read_to_string(log.path())?;
    let calls: Vec<&str> = text
        .lines()
        .filter(|l| {
            ["fsync(", "fdatasync(", "syncfs("]
                .iter()
                .any(|c| l.contains(c))
        })
        .collect();
    let workspace = settings
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut places = std::collections::BTreeMap::<String, usize>::new();
    for call in &calls {
        let path = call.split(['<', '>']).nth(1).unwrap_or("?");
        let place = [
            "checkpoints",
            "traces",
            "sessions",
            "pending",
            "state",
            "index",
        ]
        .into_iter()
        .find(|p| path.contains(&format!("/{p}")))
        .unwrap_or(if !workspace.is_empty() && path.starts_with(&workspace) {
            "workspace"
        } else {
            "other"
        });
        *places.entry(place.to_string()).or_default() += 1;
    }
    let by_place = places
        .iter()
        .map(|(k, v)| format!("{k} {:.1}", *v as f64 / SYNC_TURNS as f64))
        .collect::<Vec<_>>()
        .join(", ");
    Ok((calls.len() as f64 / SYNC_TURNS as f64, by_place))
}

/// Shares of each request that repeat, byte for byte from the start, the request before it.
struct PrefixReuse {
    all: Vec<f64>,
    first: Vec<f64>,
}

/// For the requests of turns 2 to 10 (`starts[i]` is where turn i+1's requests begin, for the
/// first eleven turns): how much of each, rendered as the server sees it (tools, then each
/// message's role and content), is a prefix it shares with the request before it.
fn prefix_reuse(requests: &[serde_json::Value], starts: &[usize]) -> PrefixReuse {
    let render = |r: &serde_json::Value| {
        let mut text = r["tools"].to_string();
        for m in r["messages"].as_array().into_iter().flatten() {
            text.push_str(m["role"].as_str().unwrap_or(""));
            text.push_str(&m["content"].to_string());
        }
        text
    };
    let share = |prev: &serde_json::Value, next: &serde_json::Value| {
        let (a, b) = (render(prev), render(next));
        let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        common as f64 / b.len().max(1) as f64
    };
    let mut reuse = PrefixReuse {
        all: Vec::new(),
        first: Vec::new(),
    };
    let (Some(&from), Some(&to)) = (starts.get(1), starts.get(10)) else {
        return reuse;
    };
    for i in from..to.min(requests.len()) {
        let value = share(&requests[i - 1], &requests[i]);
        reuse.all.push(value);
        if starts.contains(&i) {
            reuse.first.push(value);
        }
    }
    reuse
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

const EDIT: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const EXPLAINED: &str = "In settings.py, change TIMEOUT from 30 to 60 and explain what changed.";

/// One governed edit turn of `settings.py`, approved; it must end COMPLETED_VERIFIED.
async fn edit_turn(
    client: &mut Client,
    session: &str,
    settings: &Path,
    prompt: &str,
) -> anyhow::Result<()> {
    std::fs::write(settings, "TIMEOUT = 30\nRETRIES = 3\n")?;
    let (response, _) = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": prompt}),
            approve_all("approve"),
        )
        .await
        .context("turn")?;
    let result: TurnOutcome =
        serde_json::from_value(response.result.context("turn result")?).context("turn result")?;
    if result.classification != Classification::CompletedVerified {
        bail!("unexpected outcome {result:?}");
    }
    Ok(())
}

/// What syncing the folder after each rename costs (issue 11, defect 9): 200 replacements of
/// a 4 KiB record in the bench's home, with and without the folder sync.
fn durability(dir: &Path) -> anyhow::Result<()> {
    use talosd::home::{Durability, Root, Store};
    let store = Store::new(Root::new(dir.to_path_buf()), ".");
    let bytes = vec![b'x'; 4096];
    let time = |sync: Durability| -> anyhow::Result<Vec<Duration>> {
        let mut runs = (0..200)
            .map(|_| {
                let t = Instant::now();
                store
                    .write("durability-probe.json", &bytes, sync)
                    .map(|()| t.elapsed())
            })
            .collect::<Result<Vec<_>, _>>()?;
        runs.sort();
        Ok(runs)
    };
    let without = time(Durability::FileOnly)?;
    let with = time(Durability::Full)?;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "durable record write (4 KiB, file synced, renamed): p50 {:.0} us without the folder sync, {:.0} us with it ({:.2}x); p99 {:.0} / {:.0} us",
        us(pct(&without, 50)),
        us(pct(&with, 50)),
        us(pct(&with, 50)) / us(pct(&without, 50)).max(1e-9),
        us(pct(&without, 99)),
        us(pct(&with, 99)),
    );
    Ok(())
}

/// The static web verifier on a three-file site, how it scales with the site around a changed
/// page, and the interaction check in headless
/// chromium when it is installed.
fn web_checks() {
    /// An edit of index.html in a site with 2,000 other pages against a 10-file site: the check
    /// of the whole site (as before issue 12) and of the changed page and what it links (now),
    /// reads included; medians over 21 runs.
    fn site_scaling() {
        let page = |title: &str| {
            format!(
                "<!doctype html><html><head><title>{title}</title><link rel=\"stylesheet\" href=\"s.css\"></head><body><h1 class=\"t\">{title}</h1><button id=\"go\">Go</button><p id=\"out\">idle</p><script src=\"a.js\"></script></body></html>\n"
            )
        };
        let site = |others: usize| -> Option<(tempfile::TempDir, talosd::workspace::Workspace)> {
            let dir = tempfile::tempdir().ok()?;
            let write = |name: &str, content: &str| std::fs::write(dir.path().join(name), content);
            write("index.html", &page("Home")).ok()?;
            write("s.css", ".t { color: navy }\n#out { margin: 0 }\n").ok()?;
            write("a.js", "document.getElementById('go').addEventListener('click', () => { document.getElementById('out').textContent = 'clicked'; });\n").ok()?;
            for i in 0..others {
                write(&format!("page-{i}.html"), &page(&format!("Page {i}"))).ok()?;
            }
            let workspace = talosd::workspace::Workspace::open(dir.path()).ok()?;
            Some((dir, workspace))
        };
        let median = |workspace: &talosd::workspace::Workspace, focus: &[String]| {
            let mut runs: Vec<Duration> = (0..21)
                .map(|_| {
                    let t = Instant::now();
                    let files = talosd::webcheck::site_files(workspace, focus);
                    let _ = talosd::webcheck::check(&files, &talos_webcheck::Request::default());
                    t.elapsed()
                })
                .collect();
            runs.sort();
            runs[10]
        };
        let (Some((_small_dir, small)), Some((_large_dir, large))) = (site(7), site(2000)) else {
            println!("site scaling: cannot build the sample sites, not measured");
            return;
        };
        let edit = ["index.html".to_string()];
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        for (what, focus) in [
            ("whole site (before)", &[][..]),
            ("changed files (now)", &edit[..]),
        ] {
            let (s, l) = (median(&small, focus), median(&large, focus));
            println!(
                "web check of an index.html edit, {what}: 10-file site {:.2} ms, 2,000 other pages {:.2} ms, ratio {:.1}x",
                ms(s),
                ms(l),
                l.as_secs_f64() / s.as_secs_f64().max(1e-9)
            );
        }
    }

    let files: std::collections::BTreeMap<String, String> = [
        ("index.html", "<!doctype html><html><head><link rel=\"stylesheet\" href=\"s.css\"></head><body><button id=\"go\">Go</button><p id=\"out\">idle</p><script src=\"a.js\"></script></body></html>"),
        ("s.css", "#out { color: red }\n.btn:hover { color: blue }\n"),
        ("a.js", "document.getElementById('go').addEventListener('click', () => { document.getElementById('out').textContent = 'clicked'; });\n"),
    ]
    .into_iter()
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .collect();
    let time = |request: &talos_webcheck::Request, runs: usize| {
        let mut runs: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let _ = talosd::webcheck::check(&files, request);
                t.elapsed()
            })
            .collect();
        runs.sort();
        runs
    };
    // The facts the contract gives "make the button show a message": none the checks read.
    let static_runs = time(&talos_webcheck::Request::default(), 1000);
    println!(
        "static web check (3 files): p50 {:.1} us   p99 {:.1} us",
        static_runs[500].as_secs_f64() * 1e6,
        pct(&static_runs, 99).as_secs_f64() * 1e6
    );
    site_scaling();
    if Path::new("/usr/bin/chromium").exists() {
        // The facts the contract gives "clicking #go updates #out".
        let clicking = talos_webcheck::Request {
            asks_for_behaviour: true,
            mentions_todo: false,
            interaction: Some(talos_webcheck::Interaction {
                trigger: "go".to_string(),
                target: "out".to_string(),
            }),
        };
        let browser = time(&clicking, 5);
        println!(
            "interaction check in headless chromium: median {:.0} ms over 5 runs (min {:.0} ms, max {:.0} ms)",
            browser[2].as_secs_f64() * 1000.0,
            browser[0].as_secs_f64() * 1000.0,
            browser[4].as_secs_f64() * 1000.0
        );
    } else {
        println!("interaction check: /usr/bin/chromium not installed, not measured");
    }
}

fn pct(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) * p) / 100]
}

fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let path = exe.parent().map(|d| d.join(name)).context("no parent")?;
    if !path.exists() {
        bail!(
            "{} not found; build it with `cargo build --release -p talos-tests`",
            path.display()
        );
    }
    Ok(path)
}

fn status_field(pid: u32, field: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .with_context(|| format!("{field} missing"))?;
    Ok(line.split_whitespace().nth(1).context("value")?.parse()?)
}

fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    status_field(pid, "VmRSS:")
}

fn peak_kib(pid: u32) -> anyhow::Result<u64> {
    status_field(pid, "VmHWM:")
}

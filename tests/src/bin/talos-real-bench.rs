//! talos-real-bench: Talos against the real llama-server and small model that
//! `packaging/get-llama.sh` installs. Runs the real `talosd` (built beside this binary as
//! `e2e-talosd`) in managed mode under a temporary `TALOS_HOME`, and per repetition runs a
//! session's first and second turn of a read-only question and one denied edit. Prints medians
//! of: time to first token (the first `stream_chunk` event) for turns 1 and 2 and their ratio
//! (prompt-cache reuse), prompt and cached tokens per surface, and the daemon's overhead (a
//! turn's wall time minus llama-server's own prompt and generation time: from timings in the
//! trace when it records them, else from llama-server's `print_timing` lines in the log the
//! daemon keeps for it, else estimated from the token counts at speeds measured on the same
//! server). Other load on the machine inflates wall times but not the overhead, unless the
//! estimate had to be used.
//!
//! Run: `cargo run --release -p talos-tests --bin talos-real-bench [-- REPETITIONS]`
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use talos_protocol::Message;
use talos_tests::harness::{Answer, Client};
use talos_tests::managed::{ManagedConfig, alive, free_port, wait_gone};
use talos_tests::real_llama::{RealParts, threads};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[path = "talos-real-bench/phrasings.rs"]
mod phrasings;
#[path = "talos-real-bench/session.rs"]
mod session;
#[path = "talos-real-bench/tasks.rs"]
mod tasks;

const QUESTION: &str = "What does settings.py configure?";
const EDIT_REQUEST: &str = "In settings.py, change TIMEOUT from 30 to 60.";
const SETTINGS: &str = "TIMEOUT = 30\nRETRIES = 3\n";

/// One turn as measured from the client.
struct Measured {
    wall: Duration,
    first_token: Option<Duration>,
    calls: Vec<Value>,
    /// What llama-server's log says it spent on this turn's requests.
    logged: Option<ServerTime>,
}

/// Sums of llama-server's `print_timing` lines for some requests.
#[derive(Debug, Default, Clone, Copy)]
struct ServerTime {
    total_ms: f64,
    eval_ms: f64,
    eval_tokens: f64,
}

/// Where llama-server's time per turn came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Trace,
    ServerLog,
    Estimate,
}

/// llama-server's own speed on this machine, from one uncached request.
#[derive(Clone, Copy)]
struct Rates {
    prompt_per_second: f64,
    predicted_per_second: f64,
}

/// The daemon, and the server it launched once known. Dropped on any way out: SIGTERM first,
/// so that the daemon stops its server (a SIGKILLed daemon leaves llama-server running), then
/// SIGKILL for whatever is left.
struct Daemon {
    child: Child,
    server_pid: Option<u32>,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            signal("TERM", self.child.id());
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(pid) = self.server_pid.filter(|pid| alive(*pid)) {
            signal("KILL", pid);
        }
    }
}

fn signal(name: &str, pid: u32) {
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .stderr(Stdio::null())
        .status();
}

const HELP: &str = "talos-real-bench: Talos against the real llama-server and model of packaging/get-llama.sh

usage:
  talos-real-bench [REPETITIONS]     first-token times, cache reuse, prompt sizes, overhead (default 3)
  talos-real-bench tasks [--set original|phrasings|all] [--limit N] [--only N,M] [LEVEL...]
                                     the task-success bench: the fixed tasks of the set (default
                                     original; the first N of each set, or the numbered ones) through the whole
                                     pipeline, approvals answered yes, per model.constrain level
                                     (default: off strict, in the same run); done, verified and
                                     false successes per set and level
  talos-real-bench tasks --check     no model: each task's own check fails on the untouched
                                     workspace and passes on a correct result
  talos-real-bench session [TURNS]   one session of TURNS turns (default 10): time to the first
                                     event and to the first sign of the model, and cached tokens per
                                     prompt token on turns 2 onwards
  talos-real-bench --help            this text

Needs e2e-talosd beside this binary: cargo build --release -p talos-tests";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return Ok(());
    }
    if args.first().map(String::as_str) == Some("tasks") && args.iter().any(|a| a == "--check") {
        return tasks::check();
    }
    let parts = match RealParts::find() {
        Ok(parts) => parts,
        Err(missing) => {
            eprintln!("talos-real-bench: {missing}");
            std::process::exit(2);
        }
    };
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let work = async {
        if args.first().map(String::as_str) == Some("tasks") {
            let mut rest = &args[1..];
            let mut limit = usize::MAX;
            let mut sets = vec![tasks::Set::Original];
            let mut only: Vec<usize> = Vec::new();
            while let [flag, value, more @ ..] = rest {
                match flag.as_str() {
                    "--limit" => {
                        limit = value.parse().context("--limit takes a number of tasks")?
                    }
                    "--set" => sets = tasks::Set::parse(value)?,
                    "--only" => {
                        only = value
                            .split(',')
                            .map(str::parse)
                            .collect::<Result<_, _>>()
                            .context("--only takes task numbers, as 3,12")?
                    }
                    _ => break,
                }
                rest = more;
            }
            let levels: Vec<String> = match rest {
                [] => vec!["off".into(), "strict".into()],
                given => given.to_vec(),
            };
            return tasks::run(&parts, &sets, &levels, (limit, &only)).await;
        }
        if args.first().map(String::as_str) == Some("session") {
            let turns: usize = args
                .get(1)
                .map(|a| a.parse())
                .transpose()
                .context("TURNS must be a number (see --help)")?
                .unwrap_or(10)
                .max(2);
            return session::run(&parts, turns).await;
        }
        let repetitions: usize = args
            .first()
            .map(|a| a.parse())
            .transpose()
            .context("REPETITIONS must be a number (see --help)")?
            .unwrap_or(3)
            .max(1);
        run(parts.clone(), repetitions).await
    };
    // On SIGINT or SIGTERM the run is dropped, and with it the daemon, which stops its server.
    tokio::select! {
        result = work => result,
        _ = tokio::signal::ctrl_c() => bail!("interrupted"),
        _ = terminate.recv() => bail!("terminated"),
    }
}

/// A running daemon with its managed server, and a client connected to it.
struct Started {
    daemon: Daemon,
    client: Client,
    home: tempfile::TempDir,
    port: u16,
    to_ready: Duration,
    server_pid: Option<u32>,
}

/// Starts `e2e-talosd` in managed mode under a fresh `TALOS_HOME`; `extra` is appended to the
/// `model:` section of its config (more model keys, then other sections).
async fn start(parts: &RealParts, extra: &str) -> anyhow::Result<Started> {
    let home = tempfile::Builder::new()
        .prefix("trbench")
        .tempdir_in("/tmp")?;
    let port = free_port();
    let mut config = ManagedConfig::new(&parts.server, &parts.model, port);
    config.ctx = 8192;
    config.slots = 2;
    config.threads = threads();
    config.chat_template_file = Some(parts.template.clone());
    config.start_timeout_secs = 120;
    config.extra = extra.into();
    std::fs::write(home.path().join("config.yaml"), config.to_yaml())?;

    let launched = Instant::now();
    let mut daemon = Daemon {
        child: Command::new(sibling("e2e-talosd")?)
            .arg("--foreground")
            .env("TALOS_HOME", home.path())
            .env("TALOS_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(home.path().join("talosd.stderr"))?)
            .spawn()?,
        server_pid: None,
    };
    let socket = home.path().join("run").join("talosd.sock");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        if Instant::now() > deadline {
            bail!("talosd did not start; see {}", home.path().display());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut client = Client::connect(&socket).await;
    // A real model on two cores can think for a while between two messages.
    client.read_timeout = Duration::from_secs(300);
    let ready = wait_ready(&mut client).await?;
    let to_ready = launched.elapsed();
    let server_pid = ready["pid"].as_u64().and_then(|p| u32::try_from(p).ok());
    daemon.server_pid = server_pid;
    Ok(Started {
        daemon,
        client,
        home,
        port,
        to_ready,
        server_pid,
    })
}

/// Shuts the daemon down and checks that its server went with it.
async fn stop(started: Started) -> anyhow::Result<()> {
    let Started {
        daemon,
        mut client,
        server_pid,
        home,
        ..
    } = started;
    client.call("daemon/shutdown", json!({})).await;
    let mut daemon = daemon;
    let exited = tokio::task::spawn_blocking(move || daemon.child.wait().map(|_| daemon)).await?;
    drop(exited?);
    // TALOS_BENCH_KEEP_HOME=1 keeps the daemon's home (traces, turn logs) to look into a task.
    if std::env::var_os("TALOS_BENCH_KEEP_HOME").is_some() {
        eprintln!("kept the daemon's home: {}", home.keep().display());
    } else {
        drop(home);
    }
    if let Some(pid) = server_pid
        && !wait_gone(&[pid], Duration::from_secs(8)).await.is_empty()
    {
        bail!("llama-server {pid} outlived the daemon");
    }
    Ok(())
}

async fn run(parts: RealParts, repetitions: usize) -> anyhow::Result<()> {
    let mut started = start(
        &parts,
        "  max_tokens: 128\nturn:\n  max_model_calls: 4\napproval:\n  timeout_secs: 30\n",
    )
    .await?;
    let (port, to_ready) = (started.port, started.to_ready);
    let home = started.home.path().to_path_buf();
    let client = &mut started.client;

    let ws = tempfile::tempdir()?;
    let settings = ws.path().join("settings.py");
    let mut log = ServerLog {
        path: home.join("logs").join("llama-server.log"),
        offset: 0,
    };
    log.since();
    let (mut first, mut second, mut edits) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..repetitions {
        std::fs::write(&settings, SETTINGS)?;
        let session = client.open_session(ws.path(), "agent").await;
        first.push(measure(client, &session, QUESTION, &home, &mut log).await?);
        second.push(measure(client, &session, QUESTION, &home, &mut log).await?);
        let session = client.open_session(ws.path(), "agent").await;
        edits.push(measure(client, &session, EDIT_REQUEST, &home, &mut log).await?);
        if std::fs::read_to_string(&settings)? != SETTINGS {
            bail!("a denied edit changed settings.py");
        }
    }
    let rates = calibrate(port).await?;
    stop(started).await?;

    report(
        &parts,
        repetitions,
        to_ready,
        rates,
        [&first, &second, &edits],
    );
    Ok(())
}

fn report(
    parts: &RealParts,
    repetitions: usize,
    to_ready: Duration,
    rates: Rates,
    [first, second, edits]: [&Vec<Measured>; 3],
) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let first_tokens = |turns: &[Measured]| -> Vec<f64> {
        turns.iter().filter_map(|t| t.first_token.map(ms)).collect()
    };
    let call0 = |turns: &[Measured], key: &str| -> Vec<f64> {
        turns
            .iter()
            .filter_map(|t| t.calls.first()?.get(key)?.as_f64())
            .collect()
    };
    let (ttft1, ttft2) = (first_tokens(first), first_tokens(second));
    // The cache ratio: the run's one cold turn (empty prompt cache) against the cached turns
    // (every later turn, whose prompt prefix the server already holds).
    let cold = first.first().and_then(|t| t.first_token.map(ms));
    let cached: Vec<f64> = first
        .iter()
        .skip(1)
        .chain(second.iter())
        .filter_map(|t| t.first_token.map(ms))
        .collect();
    let all = || {
        [first, second, edits]
            .into_iter()
            .flat_map(|turns| turns.iter())
    };
    let source = if all()
        .flat_map(|t| &t.calls)
        .all(|c| c.get("promptMs").is_some() && c.get("predictedMs").is_some())
    {
        Source::Trace
    } else if all().all(|t| t.logged.is_some()) {
        Source::ServerLog
    } else {
        Source::Estimate
    };
    let overhead = |turns: &[Measured]| -> Vec<f64> {
        turns
            .iter()
            .map(|t| ms(t.wall) - server_ms(t, source, rates))
            .collect()
    };
    let generation = |turns: &[Measured]| -> Vec<f64> {
        turns
            .iter()
            .filter_map(|t| t.logged)
            .filter(|l| l.eval_ms > 0.0)
            .map(|l| 1000.0 * l.eval_tokens / l.eval_ms)
            .collect()
    };
    let calls =
        |turns: &[Measured]| -> Vec<f64> { turns.iter().map(|t| t.calls.len() as f64).collect() };
    let walls = |turns: &[Measured]| -> Vec<f64> { turns.iter().map(|t| ms(t.wall)).collect() };

    println!(
        "talos-real-bench: {repetitions} repetitions, {} with {} threads (release={})",
        parts
            .model
            .file_name()
            .unwrap_or_default()
            .to_string_lossy(),
        threads(),
        !cfg!(debug_assertions)
    );
    println!("daemon start to model ready: {:.0} ms", ms(to_ready));
    println!(
        "llama-server speed (one uncached request): prompt {:.0} tok/s, generation {:.0} tok/s",
        rates.prompt_per_second, rates.predicted_per_second
    );
    if let Some(cold) = first.first() {
        println!(
            "first turn of the run (empty cache): first token {} ms, prompt {} tokens, {} cached, wall {:.0} ms",
            fmt(cold.first_token.map(ms)),
            cold.calls
                .first()
                .map_or(Value::Null, |c| c["promptTokens"].clone()),
            cold.calls
                .first()
                .map_or(Value::Null, |c| c["cachedTokens"].clone()),
            ms(cold.wall)
        );
    }
    println!("medians                              read-only t1   read-only t2   denied edit");
    // t1 is each repetition's first turn of a new session: only the run's very first is cold.
    row(
        "time to first token (ms)",
        &[ttft1.clone(), ttft2.clone(), first_tokens(edits)],
    );
    println!(
        "  cache: cold first turn {} ms to first token, cached turns median {} ms, cached / cold {}   (turns without a streamed token: {})",
        fmt(cold),
        fmt(median(&cached)),
        fmt(cold.zip(median(&cached)).map(|(c, w)| w / c)),
        3 * first.len() - ttft1.len() - ttft2.len() - first_tokens(edits).len()
    );
    row(
        "prompt tokens, first call",
        &[
            call0(first, "promptTokens"),
            call0(second, "promptTokens"),
            call0(edits, "promptTokens"),
        ],
    );
    row(
        "cached tokens, first call",
        &[
            call0(first, "cachedTokens"),
            call0(second, "cachedTokens"),
            call0(edits, "cachedTokens"),
        ],
    );
    row(
        "model calls per turn",
        &[calls(first), calls(second), calls(edits)],
    );
    row(
        "turn wall time (ms)",
        &[walls(first), walls(second), walls(edits)],
    );
    row(
        if source == Source::Trace {
            "daemon overhead (ms)"
        } else {
            "daemon overhead, upper bound (ms)"
        },
        &[overhead(first), overhead(second), overhead(edits)],
    );
    if source == Source::ServerLog {
        row(
            "generation in turns (tok/s)",
            &[generation(first), generation(second), generation(edits)],
        );
    }
    println!(
        "  overhead = wall time - llama-server time, {}{}",
        if source == Source::Trace {
            ""
        } else {
            "an upper bound (llama-server's own work is not separated from the daemon's in the trace): "
        },
        match source {
            Source::Trace => "llama-server time from the trace's timings",
            Source::ServerLog => "llama-server time from its log's print_timing lines",
            Source::Estimate =>
                "llama-server time estimated from each call's uncached prompt and completion tokens at the speeds above",
        }
    );
}

fn row(label: &str, columns: &[Vec<f64>; 3]) {
    println!(
        "  {label:<33} {:>12} {:>14} {:>13}",
        fmt(median(&columns[0])),
        fmt(median(&columns[1])),
        fmt(median(&columns[2]))
    );
}

fn fmt(value: Option<f64>) -> String {
    value.map_or("n/a".into(), |v| {
        if v.abs() < 10.0 && v.fract() != 0.0 {
            format!("{v:.2}")
        } else {
            format!("{v:.0}")
        }
    })
}

fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[n / 2]),
        n => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// llama-server's time for one turn, from `source`.
fn server_ms(turn: &Measured, source: Source, rates: Rates) -> f64 {
    match (source, turn.logged) {
        (Source::Trace, _) => turn
            .calls
            .iter()
            .map(|c| {
                let field = |key: &str| c.get(key).and_then(Value::as_f64).unwrap_or(0.0);
                field("promptMs") + field("predictedMs")
            })
            .sum(),
        (Source::ServerLog, Some(logged)) => logged.total_ms,
        (Source::ServerLog | Source::Estimate, _) => turn
            .calls
            .iter()
            .map(|c| {
                let tokens = |key: &str| c.get(key).and_then(Value::as_f64).unwrap_or(0.0);
                let uncached = (tokens("promptTokens") - tokens("cachedTokens")).max(0.0);
                1000.0
                    * (uncached / rates.prompt_per_second
                        + tokens("completionTokens") / rates.predicted_per_second)
            })
            .sum(),
    }
}

/// llama-server's log, read from where the last read stopped.
struct ServerLog {
    path: PathBuf,
    offset: usize,
}

impl ServerLog {
    /// The `print_timing` sums of the lines written since the last call; `None` without any.
    fn since(&mut self) -> Option<ServerTime> {
        let text = std::fs::read(&self.path).ok()?;
        // Whole lines only: a line still being written is read next time.
        let complete = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let new = String::from_utf8_lossy(text.get(self.offset..complete)?).into_owned();
        self.offset = complete;
        let number_after = |line: &str, marker: &str| -> Option<f64> {
            let rest = &line[line.find(marker)? + marker.len()..];
            rest.split_whitespace().next()?.parse().ok()
        };
        let mut time = ServerTime::default();
        let mut tasks = 0;
        for line in new.lines().filter(|l| l.contains("print_timing")) {
            if line.contains("prompt eval time =") {
                continue;
            } else if line.contains("total time =") {
                time.total_ms += number_after(line, "total time =").unwrap_or(0.0);
                tasks += 1;
            } else if line.contains("eval time =") {
                time.eval_ms += number_after(line, "eval time =").unwrap_or(0.0);
                time.eval_tokens += number_after(line, "ms /").unwrap_or(0.0);
            }
        }
        (tasks > 0).then_some(time)
    }
}

async fn wait_ready(client: &mut Client) -> anyhow::Result<Value> {
    let deadline = Instant::now() + Duration::from_secs(150);
    loop {
        let (response, _) = client
            .call_with("model/status", json!({}), |_| Answer::Ignore)
            .await
            .context("daemon closed the connection")?;
        if let Some(error) = response.error {
            bail!("model/status: {}", error.message);
        }
        let status = response.result.unwrap_or_default();
        match status["state"].as_str() {
            Some("ready") => return Ok(status),
            Some("failed") => bail!("the model server failed: {}", status["lastError"]),
            _ if Instant::now() > deadline => bail!("the model server is not ready: {status}"),
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Runs one turn, denying every approval, and reads its trace's model calls.
async fn measure(
    client: &mut Client,
    session: &str,
    prompt: &str,
    home: &Path,
    log: &mut ServerLog,
) -> anyhow::Result<Measured> {
    let started = Instant::now();
    let mut first_token = None;
    let (response, _) = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": prompt}),
            |m: &Message| {
                if m.method.as_deref() == Some("approval/request") {
                    return Answer::Result(json!({"decision": "deny"}));
                }
                if first_token.is_none()
                    && m.method.as_deref() == Some("turn/event")
                    && m.params
                        .as_ref()
                        .is_some_and(|p| p["event"]["kind"] == "stream_chunk")
                {
                    first_token = Some(started.elapsed());
                }
                Answer::Ignore
            },
        )
        .await
        .context("daemon closed the connection")?;
    let wall = started.elapsed();
    let outcome = response.result.context("turn/start failed")?;
    let trace_path = outcome["tracePath"]
        .as_str()
        .map(PathBuf::from)
        .or_else(|| find_trace(home, outcome["traceId"].as_str()?))
        .with_context(|| format!("no trace for {outcome}"))?;
    let trace: Value = serde_json::from_slice(&std::fs::read(&trace_path)?)?;
    // llama-server logs a request's timings as it finishes it; give the lines a moment.
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(Measured {
        wall,
        first_token,
        calls: trace["modelCalls"].as_array().cloned().unwrap_or_default(),
        logged: log.since(),
    })
}

fn find_trace(home: &Path, trace_id: &str) -> Option<PathBuf> {
    std::fs::read_dir(home.join("traces"))
        .ok()?
        .flatten()
        .flat_map(|session| {
            std::fs::read_dir(session.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|file| file.path())
        .find(|path| {
            path.extension().is_some_and(|e| e == "json")
                && path.to_string_lossy().contains(trace_id)
        })
}

/// One uncached request straight to the managed server, for its prompt and generation speed.
async fn calibrate(port: u16) -> anyhow::Result<Rates> {
    let body = json!({
        "messages": [{"role": "user", "content": format!("Summarise this list: {}", "apples pears plums cherries ".repeat(60))}],
        "max_tokens": 64,
        "temperature": 0,
        "cache_prompt": false,
    })
    .to_string();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(60),
        stream.read_to_string(&mut response),
    )
    .await
    .context("calibration request timed out")??;
    let json_start = response
        .find('{')
        .context("no JSON in the calibration reply")?;
    let json_end = response
        .rfind('}')
        .context("no JSON in the calibration reply")?;
    let reply: Value = serde_json::from_str(&response[json_start..=json_end])?;
    let rate = |key: &str| {
        reply["timings"][key]
            .as_f64()
            .filter(|r| *r > 0.0)
            .with_context(|| format!("no timings.{key} in {reply}"))
    };
    Ok(Rates {
        prompt_per_second: rate("prompt_per_second")?,
        predicted_per_second: rate("predicted_per_second")?,
    })
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

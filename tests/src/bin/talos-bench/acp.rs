//! `talos-bench acp [RUNS]`: the cost of the ACP bridge. Medians, in one run, of: `initialize`
//! and `session/new` round trips through `talos acp` (a bridge process kept open, as an editor
//! keeps it), the same two through the daemon's own protocol, and a cold start (spawning
//! `talos acp` until its `initialize` answer). Peers measured here: codex-acp `initialize`
//! 86 ms, Gemini CLI 2.2 s (cold, process start included).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use talos_tests::harness::Client;

struct Acp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Acp {
    fn spawn(talos: &Path, home: &Path, daemon: &Path) -> anyhow::Result<Acp> {
        let mut child = Command::new(talos)
            .arg("acp")
            .env("TALOS_HOME", home)
            .env("TALOS_DAEMON", daemon)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        Ok(Acp {
            child,
            stdin,
            stdout,
            next: 1,
        })
    }

    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        )?;
        self.stdin.flush()?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("talos acp closed its stdout");
            }
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == id {
                if message.get("error").is_some() {
                    bail!("{method}: {message}");
                }
                return Ok(message["result"].clone());
            }
        }
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn main(
    args: Vec<String>,
    socket: &Path,
    home: &Path,
    daemon: &Path,
    talos: &Path,
) -> anyhow::Result<()> {
    let runs: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let ws = tempfile::tempdir()?;
    let cwd = ws.path().canonicalize()?;
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let new = json!({"cwd": cwd, "mcpServers": []});

    let mut acp = Acp::spawn(talos, home, daemon)?;
    acp.call("initialize", init.clone())?;
    acp.call("session/new", new.clone())?; // the bridge's first daemon connection
    let (mut acp_init, mut acp_new) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        acp.call("initialize", init.clone())?;
        acp_init.push(t.elapsed());
        let t = Instant::now();
        acp.call("session/new", new.clone())?;
        acp_new.push(t.elapsed());
    }
    drop(acp);

    let (mut own_init, mut own_new) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        // As the bridge does per request: a fresh connection, initialize, then the call.
        let t = Instant::now();
        let mut client = Client::connect(socket).await;
        client
            .call("initialize", json!({"clientName": "talos-bench"}))
            .await;
        own_init.push(t.elapsed());
        let t = Instant::now();
        client
            .call("session/new", json!({"workspace": cwd, "mode": "agent"}))
            .await;
        own_new.push(t.elapsed());
    }

    let cold_runs = runs.clamp(1, 20);
    let mut cold = Vec::new();
    for _ in 0..cold_runs {
        let t = Instant::now();
        let mut acp = Acp::spawn(talos, home, daemon)?;
        acp.call("initialize", init.clone())?;
        cold.push(t.elapsed());
    }

    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1000.0
    };
    println!(
        "talos-bench acp: {runs} runs each (release={})",
        !cfg!(debug_assertions)
    );
    println!(
        "  initialize   talos acp {:.3} ms   talosd protocol (connect + initialize) {:.3} ms",
        med(&mut acp_init),
        med(&mut own_init)
    );
    let mut own_fresh: Vec<Duration> = own_init
        .iter()
        .zip(&own_new)
        .map(|(a, b)| *a + *b)
        .collect();
    println!(
        "  session/new  talos acp {:.3} ms   talosd protocol {:.3} ms on an open connection, {:.3} ms with its own connection as the bridge opens one",
        med(&mut acp_new),
        med(&mut own_new),
        med(&mut own_fresh)
    );
    println!(
        "  cold start   spawn talos acp until its initialize answer: {:.2} ms (median of {cold_runs}; peers: codex-acp 86 ms, Gemini CLI 2.2 s)",
        med(&mut cold)
    );
    Ok(())
}

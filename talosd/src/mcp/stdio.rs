//! Starting a stdio MCP server: the program resolved on talosd's own `PATH`, wrapped for the
//! containment the machine grants (`crate::contain`, as for command profiles), started by the
//! runner with exactly the environment it is given, in the workspace, in its own process group.
//! Its standard error is drained into the daemon log, capped; its standard output is pumped to
//! the MCP transport one line at a time, and a line longer than [`LINE_CAP`] or one that is not
//! JSON ends the connection with that reason instead of growing memory or hanging a call.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::runner::{self, ServerSpec};

/// The longest message line a server may send.
pub const LINE_CAP: usize = 4 * 1024 * 1024;
/// How much of a server's standard error reaches the log, per connection.
const STDERR_CAP: usize = 64 * 1024;

/// Why a connection ended, once it has; shared between the pumps and the calls.
pub type Broken = Arc<Mutex<Option<String>>>;

/// How many bytes of an unfinished line the pump holds (0 between messages): a call that times
/// out while a message is half sent leaves the connection unusable, so it is closed.
pub type Partial = Arc<std::sync::atomic::AtomicUsize>;

/// Records the first reason a connection ended.
pub fn mark(broken: &Broken, reason: String) {
    if let Ok(mut slot) = broken.lock()
        && slot.is_none()
    {
        *slot = Some(reason);
    }
}

/// A started server: its process, the ends of the transport, and what containment it got.
pub struct Started {
    pub child: crate::runner::ServerChild,
    pub pid: u32,
    pub read: tokio::io::DuplexStream,
    pub write: crate::runner::ServerStdin,
    /// Containment asked for and not granted, said plainly (empty when none was asked or all
    /// was granted).
    pub uncontained: String,
}

/// Starts `argv` for the server `name` in `workspace` with `env` as its whole environment.
pub fn start(
    name: &str,
    argv: &[String],
    env: Vec<(String, String)>,
    isolation: talos_core::command::Isolation,
    workspace: &Path,
    (broken, partial): (&Broken, &Partial),
) -> Result<Started, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err(format!("mcp.{name}: no command to start"));
    };
    let resolved = runner::resolve_on_path(program).ok_or_else(|| {
        format!("mcp.{name}: cannot start it: `{program}` is not on talosd's PATH")
    })?;
    let wrapped = crate::contain::wrap(&resolved, args, isolation, workspace);
    let mut missing = Vec::new();
    if isolation.network && !wrapped.network_isolated {
        missing.push("network (no usable network namespace)");
    }
    if isolation.writes && !wrapped.writes_confined {
        missing.push("writes (Landlock is not enforced)");
    }
    let uncontained = missing.join(", ");
    if !uncontained.is_empty() {
        tracing::warn!(server = name, uncontained = %uncontained, "MCP server started uncontained");
    }
    let program =
        runner::resolve_on_path(&wrapped.program.display().to_string()).unwrap_or(wrapped.program);
    let spec = ServerSpec {
        program,
        args: wrapped.args,
        cwd: workspace.to_path_buf(),
        env,
    };
    let mut child = runner::spawn_server(&spec)
        .map_err(|e| format!("mcp.{name}: cannot start `{}`: {e}", spec.program.display()))?;
    let pid = child.id().unwrap_or(0);
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(write), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
        runner::kill_group(pid);
        return Err(format!("mcp.{name}: its pipes could not be opened"));
    };
    let (transport_end, pump_end) = tokio::io::duplex(256 * 1024);
    let ends = (broken.clone(), partial.clone());
    tokio::spawn(pump(name.to_string(), stdout, pump_end, ends));
    tokio::spawn(drain_stderr(name.to_string(), stderr));
    Ok(Started {
        child,
        pid,
        read: transport_end,
        write,
        uncontained,
    })
}

/// The environment of a configured server: the `allowed` variables of talosd's own.
pub fn allowed_env(allowed: &[String]) -> Vec<(String, String)> {
    allowed
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| (name.clone(), v)))
        .collect()
}

/// Copies whole JSON lines from the server to the transport; stops, saying why, at the first
/// line that is too long or not JSON, or at the end of the output.
async fn pump(
    name: String,
    stdout: crate::runner::ServerStdout,
    mut to_transport: tokio::io::DuplexStream,
    (broken, partial): (Broken, Partial),
) {
    use std::sync::atomic::Ordering;
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    let reason = loop {
        let available = match reader.fill_buf().await {
            Ok([]) => break format!("the server `{name}` closed its output (it exited)"),
            Ok(bytes) => bytes,
            Err(e) => break format!("the server `{name}`'s output could not be read: {e}"),
        };
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if line.len() + take > LINE_CAP {
            break format!(
                "the server `{name}` sent a message larger than {} MiB; the connection was closed",
                LINE_CAP / (1024 * 1024)
            );
        }
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        if newline.is_none() {
            partial.store(line.len(), Ordering::Relaxed);
            continue;
        }
        partial.store(0, Ordering::Relaxed);
        let trimmed = line.trim_ascii();
        if !trimmed.is_empty() {
            if serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_err() {
                break format!(
                    "the server `{name}` sent a line that is not JSON; the connection was closed"
                );
            }
            if to_transport.write_all(&line).await.is_err() {
                break format!("the connection to `{name}` was closed");
            }
        }
        line.clear();
    };
    mark(&broken, reason);
    let _ = to_transport.shutdown().await;
}

/// Logs the server's standard error, escaped, up to [`STDERR_CAP`] bytes, a chunk at a time (a
/// flood without newlines never grows memory); reads the rest away.
async fn drain_stderr(name: String, mut stderr: crate::runner::ServerStderr) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 8192];
    let mut logged = 0usize;
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if logged >= STDERR_CAP {
            continue;
        }
        logged += n;
        let text = String::from_utf8_lossy(&buf[..n]);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            tracing::info!(server = %name, "mcp stderr: {}", super::output::escape_controls(line));
        }
        if logged >= STDERR_CAP {
            tracing::info!(server = %name, "mcp stderr: further output is not logged");
        }
    }
}

//! One connected MCP server: the rmcp client service over its transport (the pumped pipes of a
//! stdio child, or streamable HTTP), the tool listing taken when it connected, and its calls,
//! each bounded by the server's timeout and the turn's cancellation. A call that times out or is
//! cancelled is dropped, which makes rmcp send `notifications/cancelled`. Dropping a connection
//! kills the child's whole process group.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use tokio_util::sync::CancellationToken;

use super::stdio::{self, Broken, Partial};
use super::{Listing, McpOutput, ServerDef, Transport};

/// A live connection.
pub struct Live {
    service: RunningService<RoleClient, super::notices::Notices>,
    pub listing: Listing,
    broken: Broken,
    /// The unfinished line a stdio server's pump holds.
    partial: Partial,
    pid: Option<u32>,
    _child: Option<crate::runner::ServerChild>,
    /// The key sent to an HTTP server, to withhold from every message.
    key: Option<String>,
    /// Containment asked for and not granted (empty: none missing).
    pub uncontained: String,
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            crate::runner::kill_group(pid);
        }
    }
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Live(pid {:?}, {} tools)",
            self.pid,
            self.listing.tools.len()
        )
    }
}

/// A running rmcp client, the child's pid and process, the key withheld from messages, and the
/// containment not granted.
type Opened = (
    RunningService<RoleClient, super::notices::Notices>,
    Option<u32>,
    Option<crate::runner::ServerChild>,
    Option<String>,
    String,
);

/// Connects `def` (in `workspace`, for a stdio server), initialises and lists its tools, all
/// within the server's timeout.
pub async fn connect(def: &ServerDef, workspace: &std::path::Path) -> Result<Live, String> {
    let broken: Broken = Broken::default();
    let partial: Partial = Partial::default();
    let name = def.name.as_str();
    let limit = def.timeout;
    let (service, pid, child, key, uncontained) = match &def.transport {
        Transport::Stdio { .. } => open_stdio(def, workspace, (&broken, &partial)).await?,
        Transport::Http { url, key, headers } => {
            let key = super::http::key(name, key)?;
            let (transport, key) = super::http::transport(url, key.as_deref(), headers)?;
            let service =
                match bounded(limit, super::notices::Notices::new(name).serve(transport)).await {
                    Some(Ok(service)) => service,
                    failed => {
                        let failed = failed.map(|r| r.err());
                        return Err(start_failure(name, limit, failed, &broken, key.as_deref()));
                    }
                };
            (service, None, None, key, String::new())
        }
    };
    let mut live = Live {
        service,
        listing: Listing::default(),
        broken,
        partial,
        pid,
        _child: child,
        key,
        uncontained,
    };
    let tools = match bounded(limit, live.service.peer().list_all_tools()).await {
        Some(Ok(tools)) => tools,
        Some(Err(e)) => {
            return Err(live.failure(
                &format!("mcp.{name}: listing its tools failed"),
                &e.to_string(),
            ));
        }
        None => {
            return Err(format!(
                "mcp.{name}: listing its tools timed out after {} s",
                limit.as_secs()
            ));
        }
    };
    live.listing = super::output::listing(name, tools);
    Ok(live)
}

/// Starts a stdio server and initialises it within its timeout.
async fn open_stdio(
    def: &ServerDef,
    workspace: &std::path::Path,
    (broken, partial): (&Broken, &Partial),
) -> Result<Opened, String> {
    let Transport::Stdio {
        argv,
        env,
        isolation,
    } = &def.transport
    else {
        return Err(format!("mcp.{}: not a stdio server", def.name));
    };
    let (name, limit) = (def.name.as_str(), def.timeout);
    let started = stdio::start(
        name,
        argv,
        env.clone(),
        *isolation,
        workspace,
        (broken, partial),
    )?;
    let transport =
        rmcp::transport::async_rw::AsyncRwTransport::new_client(started.read, started.write)
            .with_max_line_length(stdio::LINE_CAP + 1);
    let pid = started.pid;
    let service = match bounded(limit, super::notices::Notices::new(name).serve(transport)).await {
        Some(Ok(service)) => service,
        failed => {
            crate::runner::kill_group(pid);
            let failed = failed.map(|r| r.err());
            return Err(start_failure(name, limit, failed, broken, None));
        }
    };
    let child = Some(started.child);
    Ok((service, Some(pid), child, None, started.uncontained))
}

/// The reason a start failed: timed out, refused, or the pump's reason.
fn start_failure(
    name: &str,
    limit: Duration,
    failed: Option<Option<rmcp::service::ClientInitializeError>>,
    broken: &Broken,
    key: Option<&str>,
) -> String {
    let why = broken.lock().ok().and_then(|b| b.clone());
    let text = match (failed, why) {
        (None, _) => format!("it did not answer within {} s", limit.as_secs()),
        (Some(_), Some(why)) => why,
        (Some(Some(e)), None) => e.to_string(),
        (Some(None), None) => "it did not start".into(),
    };
    let text = crate::engine::auth::redact(&super::output::escape_controls(&text), key);
    format!("mcp.{name}: cannot connect: {}", cap(text))
}

impl Live {
    /// Whether the connection can still carry calls.
    pub fn alive(&self) -> bool {
        !self.service.is_closed() && self.broken.lock().map(|b| b.is_none()).unwrap_or(false)
    }

    /// Calls `tool`; the result, or an error naming `mcp.SERVER.TOOL`.
    pub async fn call(
        &self,
        def: &ServerDef,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        cancel: &CancellationToken,
    ) -> Result<McpOutput, String> {
        let shown = format!("mcp.{}.{tool}", def.name);
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let peer = self.service.peer().clone();
        let call = peer.call_tool(params);
        tokio::select! {
            result = call => match result {
                Ok(result) => Ok(super::output::output(&result, def.max_output)),
                Err(e) => Err(self.failure(&format!("{shown} failed"), &e.to_string())),
            },
            () = tokio::time::sleep(def.timeout) => {
                let secs = def.timeout.as_secs();
                let unfinished = self.partial.load(std::sync::atomic::Ordering::Relaxed);
                if unfinished == 0 {
                    return Err(format!("{shown} timed out after {secs} s"));
                }
                // What follows would be read after the half message: the connection is closed
                // (and the next use starts the server again).
                stdio::mark(&self.broken, format!("the server `{}` left a message unfinished ({unfinished} bytes)", def.name));
                Err(format!("{shown} timed out after {secs} s with a message from the server unfinished ({unfinished} bytes); the connection was closed"))
            }
            () = cancel.cancelled() => Err(format!("{shown} was cancelled")),
        }
    }

    /// `what: why`, where why is the reason the connection ended when it has, else `error`;
    /// escaped, capped and with the key withheld.
    fn failure(&self, what: &str, error: &str) -> String {
        let why = self.broken.lock().ok().and_then(|b| b.clone());
        let why = match why {
            Some(why) => why,
            None if self.service.is_closed() => format!("the connection closed ({error})"),
            None => error.to_string(),
        };
        let why =
            crate::engine::auth::redact(&super::output::escape_controls(&why), self.key.as_deref());
        format!("{what}: {}", cap(why))
    }

    /// Closes the connection and ends the child.
    pub async fn close(&self) {
        self.service.cancellation_token().cancel();
        if let Some(pid) = self.pid {
            crate::runner::kill_group(pid);
        }
    }
}

/// `future` within `limit`; `None` when it did not finish.
async fn bounded<F: std::future::Future>(limit: Duration, future: F) -> Option<F::Output> {
    tokio::time::timeout(limit, future).await.ok()
}

/// An error text without rmcp's type names, cut to 500 bytes (a server's error message is
/// untrusted and may be huge).
fn cap(text: String) -> String {
    let mut text = match (text.find("Transport ["), text.find("] error: ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &text[..start], &text[end + "] error: ".len()..])
        }
        _ => text,
    };
    if super::output::cap_text(&mut text, 500) {
        text.push_str("...");
    }
    text
}

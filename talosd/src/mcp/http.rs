//! Streamable-HTTP MCP servers: the key read from `api_key_env` (as for the model, never shown:
//! rmcp sends it with `bearer_auth`, a header value marked sensitive, and every message that
//! could echo it goes through `engine::auth::redact`), the editor's headers, and rmcp's client
//! transport over its own reqwest client. Every body read from the server is capped as a stdio
//! line is (a JSON answer or an SSE event at [`super::stdio::LINE_CAP`], an error's text at
//! [`ERROR_CAP`]) before it is parsed; a body that never ends is bounded in time by the call's
//! timeout, which drops the request.

use std::collections::HashMap;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};

/// The most of an HTTP error's body kept for its message.
pub const ERROR_CAP: usize = 64 * 1024;

/// Where an HTTP server's key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// No key.
    None,
    /// The environment variable named by `mcp.servers.NAME.api_key_env`.
    Env(String),
}

/// The key, read now; `Err` names the setting, never the key.
pub fn key(name: &str, source: &KeySource) -> Result<Option<String>, String> {
    match source {
        KeySource::None => Ok(None),
        KeySource::Env(var) => match std::env::var(var) {
            Ok(secret) if !secret.trim().is_empty() => Ok(Some(secret.trim().to_string())),
            _ => Err(format!(
                "mcp.servers.{name}.api_key_env {var}: the environment variable is not set for talosd (or is empty)"
            )),
        },
    }
}

/// The transport to `url` with `key` (or the editor's `Authorization` header) as the bearer
/// token and the other `headers` on every request; and the token, to withhold from messages.
pub fn transport(
    url: &str,
    key: Option<&str>,
    headers: &[(String, String)],
) -> Result<
    (
        StreamableHttpClientTransport<impl StreamableHttpClient>,
        Option<String>,
    ),
    String,
> {
    let mut custom = HashMap::new();
    let mut bearer = key.map(str::to_string);
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization") {
            // The editor's own key: sent the way rmcp sends one, never as a custom header.
            bearer = Some(value.strip_prefix("Bearer ").unwrap_or(value).to_string());
            continue;
        }
        let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("the header name `{}` is not usable", name.escape_default()))?;
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header `{name}` is not usable"))?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    config.max_json_response_size = super::stdio::LINE_CAP;
    config.max_sse_event_size = super::stdio::LINE_CAP;
    config.max_error_response_size = ERROR_CAP;
    if let Some(bearer) = &bearer {
        config = config.auth_header(bearer.clone());
    }
    if !custom.is_empty() {
        config = config.custom_headers(custom);
    }
    Ok((StreamableHttpClientTransport::from_config(config), bearer))
}

//! `trace/list` and `trace/get` over the stored traces: the params checked (ids by their exact
//! shape, before the disk is looked at), then `listing` reads.

use std::path::Path;

use talos_protocol::{
    ErrorCode, RpcError, TraceGetParams, TraceGetResult, TraceListParams, TraceListResult,
};

use super::listing::{self, Filter};
use crate::home::Store;

/// `trace/list` without `limit`.
pub const DEFAULT_LIMIT: usize = 20;
/// The most `trace/list` returns.
pub const MAX_LIMIT: usize = 1_000;

/// `trace/list`: `workspace` is the canonical root of `p.workspace`, when given.
pub fn list(
    traces_root: &Store,
    p: &TraceListParams,
    workspace: Option<&Path>,
) -> Result<TraceListResult, RpcError> {
    if p.session_id.is_none() && workspace.is_none() {
        return Err(invalid("trace/list needs sessionId or workspace".into()));
    }
    if let Some(id) = &p.session_id
        && !listing::valid_id("ses", id)
    {
        return Err(invalid(format!("invalid sessionId {}", shown(id))));
    }
    let filter = Filter {
        session_id: p.session_id.clone(),
        workspace_hash: workspace
            .map(|root| talos_core::digest::sha256(root.to_string_lossy().as_bytes())),
    };
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT);
    Ok(TraceListResult {
        traces: listing::list(traces_root, &filter, limit),
    })
}

/// `trace/get`.
pub fn get(traces_root: &Store, p: &TraceGetParams) -> Result<TraceGetResult, RpcError> {
    if !listing::valid_id("trc", &p.trace_id) {
        return Err(invalid(format!("invalid traceId {}", shown(&p.trace_id))));
    }
    listing::get(traces_root, &p.trace_id)
        .ok_or_else(|| invalid(format!("no trace {}", p.trace_id)))
}

fn invalid(message: String) -> RpcError {
    RpcError::new(ErrorCode::InvalidParams, message)
}

/// An id from a request as it may appear in a message: quoted, escaped, cut at 80 characters.
fn shown(id: &str) -> String {
    let cut: String = id.chars().take(80).collect();
    format!("{cut:?}")
}

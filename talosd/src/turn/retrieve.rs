//! The runtime's own retrieval (issue 16): on a workspace question that names no file, the
//! index is searched before the first model request and the top files are offered for
//! reading. Whether: `talos_core::retrieval::retrieves_first`; what the model is told:
//! `retrieval::hint`. Nothing here counts as evidence; only reads do.

use serde_json::{Value, json};
use talos_core::retrieval;
use talos_core::tools::ToolId;

use super::context::TurnCtx;

/// The user message offering the top files, or `None` (not a workspace question, nothing
/// matched, or the index failed: the turn goes on without it).
pub async fn message(ctx: &mut TurnCtx) -> Option<Value> {
    let contract = ctx.core.plan.contract();
    let named = contract.expected_targets.len() + contract.source_evidence_targets.len();
    if !retrieval::retrieves_first(
        contract.task_type,
        contract.mutation_requested,
        named,
        ctx.core.plan.surface().allows(ToolId::Search),
    ) {
        return None;
    }
    let query = ctx.core.plan.original_request().to_string();
    let workspace = ctx.session.files.clone();
    let index_home = ctx.daemon.home.index();
    let found = crate::offload::blocking(move || {
        crate::index::update(&index_home, &workspace, &mut |_| {})?;
        crate::index::search(&index_home, workspace.root(), &query, 8)
    });
    let hits = match found {
        Ok(hits) => hits,
        Err(e) => {
            tracing::warn!(error = %e, "retrieval before the first model request failed");
            return None;
        }
    };
    let text = retrieval::hint(ctx.core.plan.original_request(), &hits)?;
    Some(json!({"role": "user", "content": text}))
}

//! The runtime's own retrieval (issue 16): on a workspace question that names no file, the
//! index is searched before the first model request and the top files are offered for
//! reading. Whether: `talos_core::retrieval::retrieves_first`; what the model is told:
//! `retrieval::hint`. Nothing here counts as evidence; only reads do.

use serde_json::{Value, json};
use talos_core::retrieval;
use talos_core::tools::ToolId;
use talos_protocol::event::TurnEvent;

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
    let first_build = crate::offload::blocking(|| {
        crate::index::status(&index_home, workspace.root()).state == "absent"
    });
    let (sent, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::task::spawn_blocking(move || {
        crate::index::update(&index_home, &workspace, &mut |p| {
            let _ = sent.send(p);
        })?;
        crate::index::search(&index_home, workspace.root(), &query, 8)
    });
    // The first build of a large workspace takes a moment: its quarters are reported.
    let mut last = None;
    while let Some(p) = progress.recv().await {
        if let Some(step) = retrieval::progress_step(first_build, p.done, p.total, last) {
            last = Some(step);
            ctx.emit(TurnEvent::ToolProgress {
                tool: ToolId::Search.name().into(),
                call_id: "index".into(),
                message: format!("indexing the workspace: {} of {} files", p.done, p.total),
            })
            .await;
        }
    }
    let found = task
        .await
        .unwrap_or_else(|e| Err(format!("the index task failed: {e}")));
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

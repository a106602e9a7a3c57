//! The runtime's own retrieval (issue 16): the index brought up to date and searched before
//! the first model request, when the turn machine asks (`talos_core::retrieval::
//! retrieves_first`; what the model is told: `retrieval::hint`). Nothing here counts as
//! evidence; only reads do.

use talos_core::retrieval::{self, Retrieval};
use talos_core::tools::ToolId;
use talos_protocol::event::TurnEvent;

use super::context::TurnCtx;

/// The index's top hits for `query` (`None` when the index failed: the turn goes on without
/// them) and the ignore files its walk did not read; the turn's cancel stops the update.
pub async fn search(ctx: &mut TurnCtx, query: String) -> Retrieval {
    let workspace = ctx.files.clone();
    let index_home = ctx.daemon.home.index();
    let first_build = crate::offload::blocking(|| {
        crate::index::status(&index_home, workspace.root()).state == "absent"
    });
    let (sent, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let cancel = ctx.cancel.clone();
    let task = tokio::task::spawn_blocking(move || {
        let stop = || cancel.is_cancelled();
        let updated = crate::index::update(&index_home, &workspace, &stop, &mut |p| {
            let _ = sent.send(p);
        })?;
        let hits = crate::index::search(&index_home, workspace.root(), &query, 8)?;
        Ok((hits, updated.unread_ignore_files))
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
    match found {
        Ok((hits, unread_ignore_files)) => Retrieval {
            hits: Some(hits),
            unread_ignore_files,
        },
        Err(e) => {
            tracing::warn!(error = %e, "retrieval before the first model request failed");
            Retrieval::default()
        }
    }
}

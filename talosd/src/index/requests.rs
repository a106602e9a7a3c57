//! The `index/*` methods: status, rebuild and search of one workspace's index, on a
//! workspace root the dispatcher has already checked. `stopping` (the daemon's) ends a
//! rebuild's or a search's update at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use talos_protocol as proto;
use tokio_util::sync::CancellationToken;

use crate::connection::Peer;
use crate::workspace::Workspace;

fn status_of(index_home: &crate::home::Store, root: &Path) -> proto::IndexStatusResult {
    let s = super::status(index_home, root);
    proto::IndexStatusResult {
        workspace: root.display().to_string(),
        files: s.files,
        chunks: s.chunks,
        bytes: s.bytes,
        last_update_ms: s.updated_ms,
        state: s.state.to_string(),
    }
}

/// `index/status`.
pub fn status(index_home: &crate::home::Store, root: &Path) -> proto::IndexStatusResult {
    status_of(index_home, root)
}

/// `index/rebuild`.
pub fn rebuild(
    index_home: &crate::home::Store,
    root: &Path,
) -> Result<proto::IndexRebuildResult, String> {
    let workspace = Workspace::open(root).map_err(|e| e.to_string())?;
    let done = super::rebuild(index_home, &workspace, &|| false, &mut |_| {})?;
    Ok(proto::IndexRebuildResult {
        indexed: done.indexed,
        skipped: done.skipped,
        status: status_of(index_home, root),
    })
}

/// `index/rebuild` on the blocking pool, sending `index/progress` to `peer` as it goes.
pub async fn rebuild_notifying(
    index_home: crate::home::Store,
    root: PathBuf,
    peer: Arc<Peer>,
    stopping: CancellationToken,
) -> Result<proto::IndexRebuildResult, String> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<super::Progress>();
    let shown = root.display().to_string();
    let work = tokio::task::spawn_blocking(move || {
        let workspace = Workspace::open(&root).map_err(|e| e.to_string())?;
        let stop = || stopping.is_cancelled();
        let done = super::rebuild(&index_home, &workspace, &stop, &mut |p| {
            let _ = sender.send(p);
        })?;
        Ok::<_, String>(proto::IndexRebuildResult {
            indexed: done.indexed,
            skipped: done.skipped,
            status: status_of(&index_home, &root),
        })
    });
    while let Some(progress) = receiver.recv().await {
        let params = proto::IndexProgressParams {
            workspace: shown.clone(),
            done: progress.done,
            total: progress.total,
        };
        if let Ok(value) = serde_json::to_value(params) {
            let _ = peer.notify(proto::INDEX_PROGRESS, value).await;
        }
    }
    work.await
        .map_err(|e| format!("the rebuild task failed: {e}"))?
}

/// `index/search`: update, then the ranked hits with their snippets.
pub fn search(
    index_home: &crate::home::Store,
    root: &Path,
    p: &proto::IndexSearchParams,
    stopping: &CancellationToken,
) -> Result<proto::IndexSearchResult, String> {
    let workspace = Workspace::open(root).map_err(|e| e.to_string())?;
    super::update(
        index_home,
        &workspace,
        &|| stopping.is_cancelled(),
        &mut |_| {},
    )?;
    let limit = p
        .limit
        .unwrap_or(talos_core::retrieval::DEFAULT_LIMIT)
        .clamp(1, talos_core::retrieval::MAX_LIMIT);
    let hits = super::search(index_home, root, &p.query, limit)?;
    Ok(proto::IndexSearchResult {
        hits: hits
            .into_iter()
            .map(|h| {
                let (line, snippet) =
                    talos_core::retrieval::snippet(&h.text, h.start_line, &p.query);
                proto::IndexHit {
                    path: h.path,
                    start_line: h.start_line as u64,
                    end_line: h.end_line as u64,
                    line: line as u64,
                    snippet,
                }
            })
            .collect(),
    })
}

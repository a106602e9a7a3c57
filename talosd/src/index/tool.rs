//! `talos.search` for the turn: bring the index up to date (the first call in a workspace
//! builds it), search, and show the ranked chunks as `talos_core::retrieval::report` says.

use std::path::Path;

use talos_core::tools::ToolArgs;

use crate::workspace::Workspace;

/// The call's output when `args` is a `talos.search` call; `None` for any other tool.
pub fn call(
    index_home: &Path,
    workspace: &Workspace,
    args: &ToolArgs,
) -> Option<Result<String, String>> {
    let ToolArgs::Search { query, limit } = args else {
        return None;
    };
    Some(report(index_home, workspace, query, *limit))
}

/// Updates the index, then the ranked report for `query`.
pub fn report(
    index_home: &Path,
    workspace: &Workspace,
    query: &str,
    limit: usize,
) -> Result<String, String> {
    super::update(index_home, workspace, &mut |_| {})?;
    let hits = super::search(index_home, workspace.root(), query, limit)?;
    Ok(talos_core::retrieval::report(query, &hits, limit))
}

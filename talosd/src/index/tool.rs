//! `talos.search` for the turn: bring the index up to date (the first call in a workspace
//! builds it), search, and show the ranked chunks as `talos_core::retrieval::report` says,
//! with a line for each ignore file the walk did not read. `stop` (the turn's cancel) ends
//! the update at once.

use talos_core::tools::ToolArgs;

use crate::workspace::Workspace;

/// The call's output when `args` is a `talos.search` call; `None` for any other tool.
pub fn call(
    index_home: &crate::home::Store,
    workspace: &Workspace,
    args: &ToolArgs,
    stop: &dyn Fn() -> bool,
) -> Option<Result<String, String>> {
    let ToolArgs::Search { query, limit } = args else {
        return None;
    };
    Some(report(index_home, workspace, query, *limit, stop))
}

/// Updates the index, then the ranked report for `query`.
pub fn report(
    index_home: &crate::home::Store,
    workspace: &Workspace,
    query: &str,
    limit: usize,
    stop: &dyn Fn() -> bool,
) -> Result<String, String> {
    let updated = super::update(index_home, workspace, stop, &mut |_| {})?;
    let hits = super::search(index_home, workspace.root(), query, limit)?;
    let mut report = talos_core::retrieval::report(query, &hits, limit);
    for unread in &updated.unread_ignore_files {
        report.push_str(&format!("\nNote: {}.", unread.message()));
    }
    Ok(report)
}

//! The params and results of `index/status`, `index/rebuild` and `index/search`: the
//! per-workspace search index the daemon keeps under its home (issue 16).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Params of `index/status` and `index/rebuild`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IndexParams {
    /// The workspace root (an absolute path; symlinks are resolved).
    pub workspace: String,
}

/// The result of `index/status`: what the workspace's index holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatusResult {
    /// The canonical workspace root.
    pub workspace: String,
    /// Files indexed.
    pub files: u64,
    /// Chunks (line ranges) indexed.
    pub chunks: u64,
    /// Bytes the index takes under the Talos home.
    pub bytes: u64,
    /// When the last update finished, in milliseconds since the Unix epoch; absent before the
    /// first build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_ms: Option<u64>,
    /// `absent` (never built), `ready`, or `invalid` (corrupt or another format: rebuilt on
    /// next use).
    pub state: String,
}

/// The result of `index/rebuild`: what the build did, then the index's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexRebuildResult {
    /// Files read and indexed.
    pub indexed: u64,
    /// Files listed but left out (protected, binary, too large, unreadable documents).
    pub skipped: u64,
    /// The index after the build.
    pub status: IndexStatusResult,
}

/// Params of `index/progress`, the daemon's notification while `index/rebuild` runs (sent
/// only to the connection that asked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexProgressParams {
    /// The canonical workspace root.
    pub workspace: String,
    /// Files looked at so far.
    pub done: u64,
    /// Files the walk listed.
    pub total: u64,
}

/// Params of `index/search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IndexSearchParams {
    /// The workspace root (an absolute path; symlinks are resolved).
    pub workspace: String,
    /// Words or identifiers to look for.
    pub query: String,
    /// Hits to return (default 8, at most 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexHit {
    /// Workspace-relative path (never a protected one).
    pub path: String,
    /// First line of the chunk, from 1.
    pub start_line: u64,
    /// Last line of the chunk.
    pub end_line: u64,
    /// The line of the snippet.
    pub line: u64,
    /// The chunk's line with the most query terms, at most 160 characters.
    pub snippet: String,
}

/// The result of `index/search`: hits, best first. The index is brought up to date first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IndexSearchResult {
    /// The ranked chunks.
    pub hits: Vec<IndexHit>,
}

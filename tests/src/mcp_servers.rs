//! The MCP servers the tests use: the reference `server-everything` from npm (installed by
//! packaging/get-mcp-servers.sh) and the project's own hostile one.

use std::path::{Path, PathBuf};

/// Where packaging/get-mcp-servers.sh put server-everything's entry point, if it did. With
/// `TALOS_REQUIRE_MCP=1` (as `.ci/run` sets) a missing install fails the test instead.
pub fn everything() -> Option<PathBuf> {
    let from_env = std::env::var("TALOS_MCP_EVERYTHING")
        .ok()
        .map(PathBuf::from);
    let cache = std::env::var("HOME").ok().map(|h| {
        Path::new(&h).join(".cache/talos/test-mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
    });
    let found = from_env.into_iter().chain(cache).find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("TALOS_REQUIRE_MCP").as_deref() != Ok("1"),
            "TALOS_REQUIRE_MCP=1 but server-everything is not installed (packaging/get-mcp-servers.sh)"
        );
        eprintln!("skipped: server-everything is not installed; run packaging/get-mcp-servers.sh");
    }
    found
}

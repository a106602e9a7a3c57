//! The MCP servers the tests use: the reference `server-everything` and `server-filesystem`
//! from npm (installed by packaging/get-mcp-servers.sh) and the project's own hostile one.

use std::path::{Path, PathBuf};

/// Where packaging/get-mcp-servers.sh put server-everything's entry point, if it did. With
/// `TALOS_REQUIRE_MCP=1` (as `.ci/run` sets) a missing install fails the test instead.
pub fn everything() -> Option<PathBuf> {
    installed("TALOS_MCP_EVERYTHING", "server-everything")
}

/// Where packaging/get-mcp-servers.sh put server-filesystem's entry point, if it did (the
/// server the docs' own example names).
pub fn filesystem() -> Option<PathBuf> {
    installed("TALOS_MCP_FILESYSTEM", "server-filesystem")
}

fn installed(var: &str, package: &str) -> Option<PathBuf> {
    let from_env = std::env::var(var).ok().map(PathBuf::from);
    let cache = std::env::var("HOME").ok().map(|h| {
        Path::new(&h).join(format!(
            ".cache/talos/test-mcp/node_modules/@modelcontextprotocol/{package}/dist/index.js"
        ))
    });
    let found = from_env.into_iter().chain(cache).find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("TALOS_REQUIRE_MCP").as_deref() != Ok("1"),
            "TALOS_REQUIRE_MCP=1 but {package} is not installed (packaging/get-mcp-servers.sh)"
        );
        eprintln!("skipped: {package} is not installed; run packaging/get-mcp-servers.sh");
    }
    found
}

#!/usr/bin/env bash
# get-mcp-servers.sh: installs the reference MCP server that nobody here wrote,
# `@modelcontextprotocol/server-everything` from npm (pinned below), for the hub's tests against
# a real server (tests/tests/extensions/mcp_hub.rs). Outside the repository; a second run finds it in place.
#
#   usage: packaging/get-mcp-servers.sh      prints the server's entry point (a .js file) last
#   env:   TALOS_MCP_SERVERS  default ${XDG_CACHE_HOME:-$HOME/.cache}/talos/test-mcp
set -euo pipefail
VERSION=2026.8.31
DIR=${TALOS_MCP_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/talos/test-mcp}
PKG="$DIR/node_modules/@modelcontextprotocol/server-everything"
STAMP="$DIR/.installed"
if [ ! -f "$PKG/package.json" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$VERSION" ]; then
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$VERSION" >&2
  echo "$VERSION" >"$STAMP"
fi
MAIN=$(node -e 'const p=require(process.argv[1]); const b=typeof p.bin==="string"?p.bin:Object.values(p.bin||{})[0]; console.log(require("path").resolve(process.argv[2], b||p.main))' "$PKG/package.json" "$PKG")
test -f "$MAIN"
echo "$MAIN"

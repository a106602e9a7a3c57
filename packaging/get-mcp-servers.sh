#!/usr/bin/env bash
# get-mcp-servers.sh: installs the reference MCP servers that nobody here wrote,
# `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem` from
# npm (pinned below), for the tests against real servers (tests/tests/extensions/mcp_hub.rs and
# mcp_filesystem.rs). Outside the repository; a second run finds them in place.
#
#   usage: packaging/get-mcp-servers.sh      prints each server's entry point (a .js file), one
#                                            a line, server-everything's first
#   env:   TALOS_MCP_SERVERS  default ${XDG_CACHE_HOME:-$HOME/.cache}/talos/test-mcp
set -euo pipefail
VERSION=2026.8.31
SERVERS=(server-everything server-filesystem)
DIR=${TALOS_MCP_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/talos/test-mcp}
STAMP="$DIR/.installed"
missing=0
for server in "${SERVERS[@]}"; do
  [ -f "$DIR/node_modules/@modelcontextprotocol/$server/package.json" ] || missing=1
done
if [ "$missing" = 1 ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$VERSION+filesystem" ]; then
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$VERSION" \
    "@modelcontextprotocol/server-filesystem@$VERSION" >&2
  echo "$VERSION+filesystem" >"$STAMP"
fi
for server in "${SERVERS[@]}"; do
  PKG="$DIR/node_modules/@modelcontextprotocol/$server"
  MAIN=$(node -e 'const p=require(process.argv[1]); const b=typeof p.bin==="string"?p.bin:Object.values(p.bin||{})[0]; console.log(require("path").resolve(process.argv[2], b||p.main))' "$PKG/package.json" "$PKG")
  test -f "$MAIN"
  echo "$MAIN"
done

#!/usr/bin/env bash
# get-acp-client.sh: installs the official ACP Python SDK (PyPI `agent-client-protocol`, pinned
# in tests/acp/requirements.txt) into a virtual environment, for the end-to-end test in which an
# SDK-built client drives `talos acp` (tests/tests/editors/acp.rs). A second run finds it in place.
#
#   usage: packaging/get-acp-client.sh      prints the environment's python on its last line
#   env:   TALOS_ACP_VENV  default ${XDG_DATA_HOME:-$HOME/.local/share}/talos/acp-client
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TALOS_ACP_VENV:-${XDG_DATA_HOME:-$HOME/.local/share}/talos/acp-client}
REQ=tests/acp/requirements.txt
STAMP="$VENV/.installed"
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQ" "$STAMP"; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ" >&2
  cp "$REQ" "$STAMP"
fi
"$VENV/bin/python" -c 'import acp' >&2
echo "$VENV/bin/python"

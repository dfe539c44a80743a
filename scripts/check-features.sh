#!/usr/bin/env bash
# Lint tool-core with each of its features alone and with none, so code behind
# `#[cfg(not(feature = ..))]` is compiled too (the workspace build unifies every feature).
set -euo pipefail
cd "$(dirname "$0")/.."
for features in "" jsonschema cli mcp safety redis "cli,safety" "cli,mcp" "safety,jsonschema"; do
    echo "-- tool-core features: ${features:-(none)}"
    cargo clippy -q -p tool-core --no-default-features ${features:+--features "$features"} \
        --all-targets -- -D warnings
done

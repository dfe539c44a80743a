#!/usr/bin/env bash
# A program's first registry, each in a fresh process: build the 100 tools of the start-up bench
# and verify their pin once, with nothing warmed up before, N times (default 200) per set.
# Prints the median and the quartiles in microseconds. BIN=path/to/startup-bench skips the build.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200}
if [[ -z "${BIN:-}" ]]; then
    BIN=$(cargo bench -p tool-core --bench startup --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "startup" and m.get("executable"):
        print(m["executable"])')
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
STARTUP_FIRST=pin "$BIN" "$dir"
for set in shared own; do
    for _ in $(seq "$N"); do STARTUP_FIRST=$set "$BIN" "$dir"; done |
        sort -n | awk -v set="$set" '{ v[NR] = $1 } END {
            printf "first registry, %s types: median %.0f us (quartiles %.0f-%.0f, %d runs)\n",
                set, v[int(NR / 2) + 1], v[int(NR / 4) + 1], v[int(3 * NR / 4) + 1], NR }'
done

#!/usr/bin/env bash
# Per-call overhead against the targets, from one run of the `overhead` bench: the floor, a bare
# thread round trip (`floor_hop`), rmcp's router, the unconfined pipeline and the default
# (confined) configuration, quiet and then while one busy-loop process per core runs
# (`OVERHEAD_LOAD`, default: one per core; the bench starts and stops the load itself). Prints each
# mean and the ratios the targets are stated in, all taken from this one run:
#   read_file, default: <= 1.5x the floor, <= 1.0x rmcp; noop, default: <= 5x the floor;
#   loaded: the default within 1.5x of its quiet figure. Beside it, the same ratio for the floor
#   and for a bare hop, and the default's divided by the floor's (what contention costs the
#   default beyond what it costs any single thread sharing its core).
# Then where the default's quiet time goes beyond the floor: the unconfined pipeline, and the
# default beyond it beside a spinning hop alone (`floor_spin_hop`) and the kernel's checks of a
# confined handler's own system calls (`floor_confined_hop` less `floor_spin_hop`).
# MEASURE (3) and WARMUP (1) are criterion's seconds per bench; CRITERION_DIR reads an earlier
# run instead of running the bench.
set -euo pipefail
cd "$(dirname "$0")/.."
MEASURE="${MEASURE:-3}"
WARMUP="${WARMUP:-1}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
DIR="${CRITERION_DIR:-$TARGET_DIR/criterion}"

if [ -z "${CRITERION_DIR:-}" ]; then
    echo "== overhead: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    cargo bench -q -p tool-core --features mcp --bench overhead --no-run
    # Criterion's progress is left out; its figures are read from its files below.
    cargo bench -q -p tool-core --features mcp --bench overhead -- \
        --warm-up-time "$WARMUP" --measurement-time "$MEASURE" \
        '/(floor|floor_hop|floor_spin_hop|floor_confined_hop|rmcp|pipeline|pipeline_async_confined)$' 2>&1 |
        { grep -E 'busy-loop processes running|panicked|error' || true; }
    echo "== load afterwards $(cut -d' ' -f1-3 /proc/loadavg)"
fi

python3 - "$DIR" <<'EOF'
import json, os, sys

root = sys.argv[1]
BENCHES = ["floor", "floor_hop", "rmcp", "pipeline", "pipeline_async_confined"]

def mean(group, bench):
    path = os.path.join(root, group, bench, "new", "estimates.json")
    try:
        with open(path) as f:
            return json.load(f)["mean"]["point_estimate"] / 1000.0
    except (OSError, KeyError, ValueError):
        return None

def fmt(v):
    return "-" if v is None else f"{v:.2f}"

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

print(f"{'group':<16}" + "".join(f"{b:>25}" for b in BENCHES))
for group in ["read_file", "noop", "read_file_loaded", "noop_loaded"]:
    print(f"{group:<16}" + "".join(f"{fmt(mean(group, b)) + ' us':>25}" for b in BENCHES))

verdicts = []
def check(label, value, limit):
    if value is None:
        print(f"{label}: not measured")
        return
    ok = value <= limit
    verdicts.append(ok)
    print(f"{label}: {value:.2f} (target <= {limit}: {'met' if ok else 'missed'})")

d = "pipeline_async_confined"
check("read_file, default / floor", ratio(mean("read_file", d), mean("read_file", "floor")), 1.5)
check("read_file, default / rmcp", ratio(mean("read_file", d), mean("read_file", "rmcp")), 1.0)
check("noop, default / floor", ratio(mean("noop", d), mean("noop", "floor")), 5.0)
for group in ["read_file", "noop"]:
    loaded = f"{group}_loaded"
    own = ratio(mean(loaded, d), mean(group, d))
    check(f"{group}, default loaded / quiet", own, 1.5)
    floor = ratio(mean(loaded, "floor"), mean(group, "floor"))
    hop = ratio(mean(loaded, "floor_hop"), mean(group, "floor_hop"))
    unconfined = ratio(mean(loaded, "pipeline"), mean(group, "pipeline"))
    print(f"  beside it, loaded / quiet: floor {fmt(floor)}, bare hop {fmt(hop)}, "
          f"unconfined pipeline {fmt(unconfined)}; default / floor's {fmt(ratio(own, floor))}")

def less(a, b):
    return None if a is None or b is None else a - b

# Where the default's quiet time goes, each part beyond the one before it, in this run.
for group in ["read_file", "noop"]:
    m = {b: mean(group, b) for b in BENCHES + ["floor_spin_hop", "floor_confined_hop"]}
    print(f"{group}, quiet, beyond the floor ({fmt(m['floor'])} us): "
          f"unconfined pipeline +{fmt(less(m['pipeline'], m['floor']))} us; "
          f"default +{fmt(less(m[d], m['pipeline']))} us over that, of which a spinning hop "
          f"alone costs {fmt(less(m['floor_spin_hop'], m['floor']))} us and the kernel's checks "
          f"of the confined handler {fmt(less(m['floor_confined_hop'], m['floor_spin_hop']))} us")
print(f"{sum(verdicts)} of {len(verdicts)} targets met")
EOF

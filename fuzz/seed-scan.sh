#!/usr/bin/env bash
# Seeds the scanner fuzz targets from the per-class corpora of tool-safety: every snippet of
# tool-safety/tests/fixtures/classes/bash/*.sh (split at `###` lines) into fuzz/corpus/scan_bash/,
# every program of tool-safety/tests/fixtures/classes/python/*.py (split at `#### ` headers) into
# fuzz/corpus/scan_python/. Existing corpus files are kept.
#
# Usage: fuzz/seed-scan.sh, then for ten minutes each:
#   cargo +nightly fuzz run scan_bash fuzz/corpus/scan_bash -- -max_total_time=600
#   cargo +nightly fuzz run scan_python fuzz/corpus/scan_python -- -max_total_time=600
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLASSES="$ROOT/tool-safety/tests/fixtures/classes"
python3 - "$CLASSES" "$ROOT/fuzz/corpus" <<'PY'
import hashlib, os, re, sys

classes, out = sys.argv[1:3]
for lang, sep, target in [("bash", r"\n###[^\n]*\n", "scan_bash"),
                          ("python", r"\n(?=#### )", "scan_python")]:
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    n = 0
    for name in sorted(os.listdir(os.path.join(classes, lang))):
        text = open(os.path.join(classes, lang, name), encoding="utf-8").read()
        for part in re.split(sep, "\n" + text):
            part = part.strip("\n")
            if not part:
                continue
            data = (part + "\n").encode()
            path = os.path.join(d, "seed-" + hashlib.sha1(data).hexdigest()[:16])
            with open(path, "wb") as fh:
                fh.write(data)
            n += 1
    print(f"{target}: {n} seeds in {d}")
PY

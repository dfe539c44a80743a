#!/usr/bin/env bash
# Bandit 1.9.4 against our scan on the effects corpus, category by category: how many risky
# Python programs each one flags (bandit: at least one issue of any severity; our scan: review or
# deny, from the committed figures in tests/fixtures/safety/effects/expected.txt, which the corpus
# test keeps true). Installs bandit into a throwaway venv under target/bandit-corpus/.
#
# Usage: scripts/bandit-corpus.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/bandit-corpus"
BANDIT_VERSION="${BANDIT_VERSION:-1.9.4}"
PYTHON="${PYTHON:-python3}"
CORPUS="$ROOT/tests/fixtures/safety/effects"

# shellcheck source=lib/bandit-venv.sh
. "$ROOT/scripts/lib/bandit-venv.sh"
bandit_venv "$WORK"

"$PYTHON" - "$CORPUS" "$WORK" "$WORK/venv/bin/bandit" <<'PY'
import collections, json, os, shutil, subprocess, sys

corpus, work, bandit = sys.argv[1:4]
files = os.path.join(work, "files")
shutil.rmtree(files, ignore_errors=True)
os.makedirs(files)

def programs(name):
    """(category, source) per program of a corpus file: blocks split by `###`; risky ones start
    with `# fx: CATEGORY`, benign ones have no header."""
    text = open(os.path.join(corpus, name)).read()
    for block in text.split("\n###\n"):
        lines = block.strip("\n").split("\n")
        if not lines or not lines[0]:
            continue
        if lines[0].startswith("# fx:"):
            yield lines[0].split()[2], "\n".join(lines[1:]) + "\n"
        else:
            yield "benign", "\n".join(lines) + "\n"

category_of = {}
for set_name, corpus_file in [("risky", "risky_python.txt"), ("benign", "benign_python.txt")]:
    for i, (cat, src) in enumerate(programs(corpus_file)):
        path = os.path.join(files, f"{set_name}-{i:04}.py")
        open(path, "w").write(src)
        category_of[path] = cat if set_name == "risky" else "benign"

out = subprocess.run([bandit, "-q", "-f", "json", "-r", files], capture_output=True, text=True)
report = json.loads(out.stdout)
flagged = {r["filename"] for r in report["results"]}
errors = {e["filename"] for e in report.get("errors", [])}

total = collections.Counter(category_of.values())
by_bandit = collections.Counter(category_of[f] for f in flagged if f in category_of)

ours = {}
for line in open(os.path.join(corpus, "expected.txt")):
    parts = line.split()
    if len(parts) == 9 and parts[0] == "python":
        _, kind, cat, _, allow, _, review, _, deny = parts
        key = "benign" if kind == "benign" else cat
        ours[key] = int(review) + int(deny)

print(f"{'category':<18} {'programs':>8} {'bandit flags':>13} {'scan flags':>11}")
worse = []
for cat in sorted(total):
    b, o = by_bandit[cat], ours.get(cat, 0)
    print(f"{cat:<18} {total[cat]:>8} {b:>13} {o:>11}")
    if cat != "benign" and o < b:
        worse.append(cat)
print(f"bandit could not parse {len(errors)} file(s)")
if worse:
    print("categories where bandit flags more than the scan:", ", ".join(worse))
    sys.exit(1)
print("the scan flags at least as many risky programs as bandit in every category")
PY

#!/usr/bin/env bash
# Bandit against our `scan` on the same corpus of Python files, in one run.
#
# Makes a throwaway venv under target/bench-bandit/ with a pinned bandit from PyPI, generates a
# corpus of ~4 KB Python files (N, default 50), builds `tool-scan` once, then times:
#   bandit batch     one `bandit -r` process over the whole corpus, divided by N
#   scan batch       one `tool-scan --lang python FILE...` process over the corpus, / N
#   bandit per file  one `bandit FILE` process per file
#   scan per file    one `tool-scan --lang python FILE` process per file
# The per-file runs alternate between the tools, ROUNDS (default 3) times over the corpus.
# and prints the per-file means and ratios. Process start-up counts on both sides of the
# per-file figures; the in-process scan time is in `cargo bench -p tool-safety --bench scan`.
#
# Usage: scripts/bench-bandit.sh           (N=100 scripts/bench-bandit.sh for a bigger corpus)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/bench-bandit"
N="${N:-50}"
ROUNDS="${ROUNDS:-3}"
BANDIT_VERSION="${BANDIT_VERSION:-1.9.4}"
PYTHON="${PYTHON:-python3}"

# shellcheck source=lib/bandit-venv.sh
. "$ROOT/scripts/lib/bandit-venv.sh"
bandit_venv "$WORK"
BANDIT="$WORK/venv/bin/bandit"

# SCAN=/path/to/tool-scan uses a prebuilt scanner instead of building one. Otherwise it is built
# as the README tells users to build it: `cargo build-scan` (.cargo/config.toml).
if [ -z "${SCAN:-}" ]; then
  echo "building tool-scan (cargo build-scan) ..." >&2
  (cd "$ROOT" && cargo --quiet build-scan)
  SCAN="$ROOT/target/scan/tool-scan"
fi
"$SCAN" --help >/dev/null

# The corpus: realistic modules (a CLI, a data job, a web handler, a deploy helper), each
# varied per file and cut to about 4 KB at a line end; some carry what both tools look for
# (shell=True, eval, pickle, yaml.load, os.system, hard-coded secrets).
CORPUS="$WORK/corpus"
rm -rf "$CORPUS"
mkdir -p "$CORPUS"
"$PYTHON" - "$CORPUS" "$N" <<'PY'
import sys, random
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)

HEADER = [
    "import os\nimport sys\nimport json\nimport logging\nfrom pathlib import Path\n",
    "import argparse\nimport subprocess\nimport shutil\nfrom dataclasses import dataclass, field\n",
    "import csv\nimport hashlib\nimport datetime as dt\nfrom typing import Iterable, Optional\n",
    "import pickle\nimport tempfile\nimport yaml\nimport urllib.request\n",
]

BLOCKS = [
'''
log = logging.getLogger(__name__)


def load_config(path: str) -> dict:
    """Read the JSON configuration, with defaults for missing keys."""
    p = Path(path)
    if not p.exists():
        log.warning("no config at %s, using defaults", p)
        return {"retries": 3, "timeout": 30}
    with p.open() as fh:
        data = json.load(fh)
    data.setdefault("retries", 3)
    data.setdefault("timeout", 30)
    return data
''',
'''

@dataclass
class Job:
    name: str
    command: list = field(default_factory=list)
    env: dict = field(default_factory=dict)

    def run(self, cwd=None):
        """Run the job's command and return its exit status."""
        proc = subprocess.run(self.command, cwd=cwd, env={**os.environ, **self.env},
                              capture_output=True, text=True, check=False)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
        return proc.returncode
''',
'''

def digest_rows(rows: Iterable[dict], key: str) -> str:
    """Stable digest of one column across rows."""
    h = hashlib.sha256()
    for row in sorted(rows, key=lambda r: str(r.get(key, ""))):
        h.update(str(row.get(key, "")).encode())
    return h.hexdigest()


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))
''',
'''

def archive(src, dest_dir, keep=5):
    """Copy a build directory into a dated archive, keeping the newest few."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = os.path.join(dest_dir, f"build-{stamp}")
    shutil.copytree(src, target)
    olds = sorted(os.listdir(dest_dir))[:-keep]
    for name in olds:
        shutil.rmtree(os.path.join(dest_dir, name), ignore_errors=True)
    return target
''',
'''

def git_head(repo="."):
    out = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=repo)
    return out.decode().strip()


def tag_release(version):
    cmd = "git tag -a v%s -m 'release %s'" % (version, version)
    return subprocess.call(cmd, shell=True)
''',
'''

def restore_cache(path):
    """Load a cached result set; the cache is written by this program only."""
    with open(path, "rb") as fh:
        return pickle.load(fh)


def load_settings(text):
    return yaml.load(text)
''',
'''

API_TOKEN = "sk-live-0123456789abcdef0123456789abcdef"


def fetch(url, timeout=10):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + API_TOKEN})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode())
''',
'''

def evaluate(expression, variables):
    """Evaluate a user formula (legacy path)."""
    return eval(expression, {"__builtins__": {}}, dict(variables))


def cleanup(tmp):
    os.system("rm -rf " + tmp)
''',
'''

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description="Process report files")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--out", default="report.json")
    ap.add_argument("--verbose", action="store_true")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    rows = []
    for name in args.inputs:
        rows.extend(read_csv(name))
    Path(args.out).write_text(json.dumps(rows, indent=2))
    return 0
''',
'''

class Cache:
    def __init__(self, root=None):
        self.root = Path(root or tempfile.gettempdir()) / "app-cache"
        self.root.mkdir(parents=True, exist_ok=True)

    def key(self, *parts):
        return hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()

    def get(self, *parts):
        p = self.root / self.key(*parts)
        return p.read_bytes() if p.exists() else None

    def put(self, data, *parts):
        (self.root / self.key(*parts)).write_bytes(data)
''',
]

for i in range(n):
    parts = [rng.choice(HEADER), "import csv\nimport hashlib\nimport datetime as dt\n"
             "import argparse\nimport subprocess\nimport shutil\nimport pickle\nimport tempfile\n"
             "import yaml\nimport urllib.request\nfrom dataclasses import dataclass, field\n"
             "from typing import Iterable\n"]
    size = sum(map(len, parts))
    k = 0
    while size < 4300:
        block = rng.choice(BLOCKS)
        # Rename the definitions so files differ.
        block = block.replace("def ", f"def v{i}_{k}_").replace("class ", f"class V{i}_{k}_")
        parts.append(block)
        size += len(block)
        k += 1
    text = "".join(parts)
    cut = text[:4096].rfind("\n\n")
    with open(f"{out}/module_{i:03}.py", "w") as fh:
        fh.write(text[:cut + 1])
PY

now() { date +%s.%N; }
files=("$CORPUS"/*.py)
count=${#files[@]}
bytes=$(cat "${files[@]}" | wc -c)

# Warm the page cache and Python's bytecode cache once.
"$BANDIT" -q -f json -r "$CORPUS" >/dev/null 2>&1 || true
"$SCAN" --lang python "${files[0]}" >/dev/null

t0=$(now)
"$BANDIT" -q -f json -r "$CORPUS" >"$WORK/bandit.json" 2>/dev/null || true
t1=$(now)
"$SCAN" --lang python "${files[@]}" >"$WORK/scan.jsonl"
t2=$(now)
bandit_batch=$(echo "($t1 - $t0) / $count" | bc -l)
scan_batch=$(echo "($t2 - $t1) / $count" | bc -l)

# Per-file runs alternate between the two tools, ROUNDS times over the corpus, so a change in the
# machine's load during the run weighs on both sides alike.
bandit_total=0
scan_total=0
for _ in $(seq "$ROUNDS"); do
  t0=$(now)
  for f in "${files[@]}"; do "$BANDIT" -q -f json "$f" >/dev/null 2>&1 || true; done
  t1=$(now)
  for f in "${files[@]}"; do "$SCAN" --lang python "$f" >/dev/null; done
  t2=$(now)
  bandit_total=$(echo "$bandit_total + $t1 - $t0" | bc -l)
  scan_total=$(echo "$scan_total + $t2 - $t1" | bc -l)
done
bandit_each=$(echo "$bandit_total / ($count * $ROUNDS)" | bc -l)
scan_each=$(echo "$scan_total / ($count * $ROUNDS)" | bc -l)

findings_bandit=$(grep -o '"test_id"' "$WORK/bandit.json" | wc -l)
findings_scan=0
for f in "${files[@]}"; do
  c=$("$SCAN" --lang python "$f" | grep -c '"rule_id"' || true)
  findings_scan=$((findings_scan + c))
done

printf 'corpus: %d files, %d bytes (mean %d bytes)\n' "$count" "$bytes" "$((bytes / count))"
printf 'bandit %s batch     %8.2f ms/file  (%d findings)\n' "$BANDIT_VERSION" "$(echo "$bandit_batch * 1000" | bc -l)" "$findings_bandit"
printf 'bandit %s per file  %8.2f ms/file\n' "$BANDIT_VERSION" "$(echo "$bandit_each * 1000" | bc -l)"
printf 'scan batch            %8.2f ms/file\n' "$(echo "$scan_batch * 1000" | bc -l)"
printf 'scan per file         %8.2f ms/file  (%d findings)\n' "$(echo "$scan_each * 1000" | bc -l)" "$findings_scan"
printf 'bandit batch / scan batch       = %.1fx\n' "$(echo "$bandit_batch / $scan_batch" | bc -l)"
printf 'bandit batch / scan per file    = %.1fx\n' "$(echo "$bandit_batch / $scan_each" | bc -l)"
printf 'bandit per file / scan per file = %.1fx  (target >= 80x)\n' "$(echo "$bandit_each / $scan_each" | bc -l)"

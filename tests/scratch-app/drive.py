"""Drives the scratch application's command line as its user would and checks every answer.

Usage: drive.py APP HELPER. APP is the built program; HELPER the `tool-sandbox-exec` it finds
beside it. Each check prints `ok NAME` or `FAILED NAME: why`; the last line is the count, and the
exit code is 1 on any failure.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

APP, HELPER = sys.argv[1], sys.argv[2]
passed, failed = 0, 0
if os.path.dirname(os.path.abspath(HELPER)) != os.path.dirname(os.path.abspath(APP)):
    sys.exit(f"the helper {HELPER} must lie beside {APP}")
if not os.path.isfile(HELPER):
    sys.exit(f"no sandbox helper at {HELPER}")


def check(name, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok {name}")
    else:
        failed += 1
        print(f"FAILED {name}: {why}")


def call(env, ws, calls, *flags, app=APP):
    """`call` with one JSON call a line; the result lines, stderr and exit code."""
    text = "".join(json.dumps(c) + "\n" for c in calls)
    p = subprocess.run(
        [app, "call", "--workspace", ws, *flags],
        input=text, capture_output=True, text=True, env=env, timeout=120,
    )
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    return lines, p.stderr, p.returncode


def tool(name, **args):
    return {"tool": name, "args": args}


root = tempfile.mkdtemp(prefix="scratch-app-")
ws = os.path.join(root, "workspace")
data = os.path.join(root, "data")  # the database: outside the workspace
os.makedirs(ws)
with open(os.path.join(ws, "notes.txt"), "w") as f:
    f.write("one two three four\n")
with open(os.path.join(root, "secret.txt"), "w") as f:
    f.write("TOP-SECRET-42\n")
env = dict(os.environ, SCRATCH_APP_DATA=data)
audit = os.path.join(root, "audit.jsonl")

# list: the six tools, with what they declare.
p = subprocess.run([APP, "list"], capture_output=True, text=True, env=env, timeout=60)
listed = {l.split()[0]: l for l in p.stdout.splitlines() if l.strip()}
check("list shows the six tools",
      sorted(listed) == ["note_add", "note_count", "note_recent", "run_bash", "save_text",
                         "word_count"], p.stdout + p.stderr)
check("list shows the bash tool's script argument",
      "scripts=command:bash" in listed.get("run_bash", ""), listed.get("run_bash"))
check("list shows the path argument", "paths=path" in listed.get("word_count", ""),
      listed.get("word_count"))

# Without a helper beside it, a `#[tokio::main]` program with a bash tool refuses at start-up,
# before any call or approval, with the fix.
alone = os.path.join(root, "alone")
os.makedirs(alone)
shutil.copy(APP, alone)
out, err, code = call(env, ws, [tool("note_count")], app=os.path.join(alone, os.path.basename(APP)))
check("without a helper the program refuses at start-up with the fix",
      code != 0 and out == [] and "#[tool_core::main]" in err and "run_bash" in err,
      f"exit {code}, {out}, {err}")

flags = ["--audit", audit]

# The sync SQLite write, refused without approval, then approved by the flag.
out, err, _ = call(env, ws, [tool("note_count"), tool("note_add", text="first")], *flags)
check("the async tool reads the database outside the workspace",
      out[0]["status"] == "ok" and out[0]["output"] == 0, out[0])
check("a mutation without an approver is refused before it runs",
      out[1]["status"] == "refused" and out[1]["code"] == "approval_denied", out[1])
out, err, _ = call(env, ws, [tool("note_add", text="first"), tool("note_count")], "--approve",
                   "allow", *flags)
check("an approved mutation writes the database outside the workspace",
      out[0]["status"] == "ok" and out[0]["output"] == "note 1 added", (out, err))
check("the write is there for the next call", out[1]["output"] == 1, out[1])
check("the database file is outside the workspace",
      os.path.isfile(os.path.join(data, "notes.db")) and not data.startswith(ws), data)

# Approval asked on the terminal: a pseudo-terminal answers `y`.
calls = os.path.join(root, "prompted.jsonl")
with open(calls, "w") as f:
    f.write(json.dumps(tool("note_add", text="second")) + "\n")
p = subprocess.run(
    ["script", "-qec", f"'{APP}' call --workspace '{ws}' --approve prompt --audit '{audit}' "
                       f"< '{calls}'", "/dev/null"],
    input="y\n", capture_output=True, text=True, env=env, timeout=120,
)
check("an approval answered at the prompt runs the mutation",
      "approve `note_add`" in p.stdout and '"note 2 added"' in p.stdout, p.stdout + p.stderr)

# The default and the integer range.
out, _, _ = call(env, ws, [tool("note_recent"), tool("note_recent", limit=1),
                           tool("note_recent", limit=0), tool("note_recent", limit=21)], *flags)
check("the default applies", out[0]["output"] == ["second", "first"], out[0])
check("a value in the range", out[1]["output"] == ["second"], out[1])
check("below the range is refused",
      out[2]["code"] == "invalid_arguments" and "minimum" in out[2]["message"], out[2])
check("above the range is refused",
      out[3]["code"] == "invalid_arguments" and "maximum" in out[3]["message"], out[3])

# The path tools.
out, _, _ = call(env, ws, [tool("word_count", path="notes.txt"),
                           tool("word_count", path="../secret.txt"),
                           tool("word_count", path=os.path.join(root, "secret.txt")),
                           tool("save_text", path="out/saved.txt", text="saved"),
                           tool("save_text", path="saved.txt", text="saved")],
                 "--approve", "allow", *flags)
check("a path in the workspace", out[0]["output"] == 4, out[0])
check("a relative path outside the workspace is refused",
      out[1]["code"] == "path_outside_workspace", out[1])
check("an absolute path outside the workspace is refused",
      out[2]["code"] == "path_outside_workspace", out[2])
check("a write into a missing directory says so",
      out[3]["code"] == "tool_error"
      and "cannot open the directory of `out/saved.txt`" in out[3]["message"], out[3])
check("an approved path write in the workspace",
      out[4]["status"] == "ok" and open(os.path.join(ws, "saved.txt")).read() == "saved", out[4])
check("nothing of the outside file reached the model",
      "TOP-SECRET-42" not in json.dumps(out[1:3]), out[1:3])

# The bash tool: confined, and a script the scanner refuses.
out, _, _ = call(env, ws, [
    tool("run_bash", command="echo confined > made.txt; wc -w < notes.txt"),
    tool("run_bash", command="rm -rf /"),
    tool("run_bash", command="cat ../secret.txt"),
], "--approve", "allow", *flags)
check("a bash script runs in the workspace",
      out[0]["status"] == "ok" and "4" in out[0]["output"]
      and open(os.path.join(ws, "made.txt")).read() == "confined\n", out[0])
check("a dangerous script is refused by the scan", out[1]["code"] == "safety_denied", out[1])
check("a script reaching outside the workspace is refused",
      out[2]["status"] != "ok" and "TOP-SECRET-42" not in json.dumps(out[2]), out[2])

# The audit: the database tools ran confined with the grant, the script in its own sandbox.
events = [json.loads(l) for l in open(audit) if '"tool"' in l]
by_tool = {}
for e in events:
    if e.get("status") == "ok":
        by_tool.setdefault(e["tool"], e)
for name in ["note_add", "note_count", "note_recent", "word_count", "save_text"]:
    enforced = by_tool.get(name, {}).get("enforced", "")
    check(f"{name} ran confined", enforced.startswith("landlock"), enforced)
enforced = by_tool.get("run_bash", {}).get("enforced", "")
check("the bash script ran in a confined process", "process: landlock" in enforced, enforced)
p = subprocess.run([APP, "verify-audit", audit], capture_output=True, text=True, env=env,
                   timeout=60)
check("the audit log verifies", p.returncode == 0, p.stdout + p.stderr)

shutil.rmtree(root, ignore_errors=True)
print(f"scratch-app: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

"""Test agent for TDD loops: fixes one failing test per round, reading the failures it is sent.

Round 1 answers the task message (whose prompt lists the failures); every later round starts
with a `feedback` message of kind `test_failures` carrying the parsed report. The agent fixes
the first failing test it is told about, proving the failures really reach it.
"""
import json
import sys

FIXES = {
    "test_add": ("return a - b", "return a + b"),
    "test_mul": ("def mul(a, b):\n    return a + b", "def mul(a, b):\n    return a * b"),
}


def send(msg):
    print(json.dumps(msg), flush=True)


def recv():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def fix_first(names, n):
    for name in names:
        for key, (old, new) in FIXES.items():
            if key in name:
                send({"type": "tool_call", "id": str(n), "tool": "edit_file",
                      "input": {"path": "calc.py", "old_string": old, "new_string": new}})
                recv()  # the tool result
                return key
    return None


task = recv()
# Round 1: the failures are in the prompt text.
first = [k for k in FIXES if k in task["prompt"]]
fixed = fix_first(first[:1], 1)
send({"type": "final", "result": "success", "message": f"fixed {fixed}"})
n = 1
while True:
    msg = recv()
    if msg.get("type") != "feedback" or msg.get("kind") != "test_failures":
        continue
    n += 1
    names = [f["name"] for f in msg["report"]["failures"]]
    fixed = fix_first(names, n)
    send({"type": "final", "result": "success", "message": f"fixed {fixed} from feedback"})

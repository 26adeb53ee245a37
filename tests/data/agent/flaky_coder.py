"""Test agent: crashes on its first start, then behaves (proves transient agent failures are
retried with backoff). The crash marker lives in the workspace: a confined agent writes
nowhere else that outlasts it."""
import json
import os
import sys

task = json.loads(sys.stdin.readline())
marker = os.path.join(os.environ["MEDIN_WORKSPACE"], ".flaky-coder-started")
if not os.path.exists(marker):
    open(marker, "w").close()
    sys.stderr.write("simulated crash on first start\n")
    sys.exit(9)
print(json.dumps({"type": "tool_call", "id": "1", "tool": "write_file", "input": {"path": "done.txt", "content": "done\n"}}), flush=True)
sys.stdin.readline()
print(json.dumps({"type": "reply", "text": "```json\n{\"result\": \"success\", \"message\": \"wrote done.txt\"}\n```"}), flush=True)
sys.stdin.readline()

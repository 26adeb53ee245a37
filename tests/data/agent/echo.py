"""Protocol probe: reports what medin sent it.

Prints one non-protocol line, reads medin's answer to it, then sends a final whose message is
a JSON object with the task message, that answer, its working directory and MEDIN_TASK_ID.
"""
import json
import os
import sys

task = json.loads(sys.stdin.readline())
print("this is not a protocol message", flush=True)
reply = json.loads(sys.stdin.readline())
report = {"task": task, "reply": reply, "cwd": os.getcwd(), "env_task_id": os.environ.get("MEDIN_TASK_ID")}
print(json.dumps({"type": "final", "result": "success", "message": json.dumps(report)}), flush=True)
sys.stdin.readline()

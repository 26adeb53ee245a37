"""Misbehaving agent: prints lines that are not protocol messages, then a final."""
import json
import sys

sys.stdin.readline()
print("Thinking about the task...", flush=True)
print("", flush=True)
print('{"type": "thought", "text": "hmm"}', flush=True)
print('{"type": "tool_call", "tool": "bash"}', flush=True)
print(json.dumps({"type": "final", "result": "success", "message": "done anyway"}), flush=True)
sys.stdin.readline()

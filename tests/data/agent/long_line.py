"""Misbehaving agent: one 20 MB line without structure, then a proper final."""
import json
import sys

sys.stdin.readline()
sys.stdout.write("x" * 20_000_000 + "\n")
print(json.dumps({"type": "final", "result": "error", "message": "after the flood"}), flush=True)
sys.stdin.readline()

"""Misbehaving agent: reads the task line, complains on stderr, exits 3."""
import sys

sys.stdin.readline()
for i in range(30):
    print(f"stderr line {i}", file=sys.stderr)
print("fatal: model endpoint unreachable", file=sys.stderr)
sys.exit(3)

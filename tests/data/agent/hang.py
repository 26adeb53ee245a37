"""Misbehaving agent: reads the task line, then never answers."""
import sys
import time

sys.stdin.readline()
while True:
    time.sleep(3600)

"""Misbehaving agent: starts a child that ignores SIGTERM and sleeps, then hangs itself.

argv[1]: a file the child's pid is written to, so a test can check it was killed.
"""
import signal
import subprocess
import sys
import time

sys.stdin.readline()
child = subprocess.Popen(
    [sys.executable, "-c", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)"]
)
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(3600)

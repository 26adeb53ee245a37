#!/bin/sh
# The hidden tests, in TAP: they run in the task's container, from its tests/ folder.
cd "$MEDIN_WORKSPACE" || exit 1
echo "1..3"
if [ "$(cat greeting.txt 2>/dev/null)" = "hello, container" ]; then echo "ok 1 - greeting"; else echo "not ok 1 - greeting"; fi
if [ "$(sh count.sh)" = "1" ]; then echo "ok 2 - count"; else echo "not ok 2 - count"; fi
if [ "$(readlink /bin/sh)" = busybox ] && [ "$(pwd)" = /app ]; then echo "ok 3 - in the container at /app"; else echo "not ok 3 - in the container at /app"; fi

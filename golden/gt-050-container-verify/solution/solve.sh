#!/bin/bash
set -eu
# The hidden tests are not in the workspace while the agent acts.
test ! -e tests
printf 'hello, container\n' > greeting.txt
printf '#!/bin/sh\nwc -l < greeting.txt | tr -d " "\n' > count.sh

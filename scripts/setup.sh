#!/usr/bin/env bash
# Installs what medin's tests and bundled suite need, idempotently: git, python3 and node (the
# example agent, several tasks and the TDD fixtures use them). Safe to run again; does nothing when all is there.
# `scripts/setup.sh --bench` also installs bubblewrap, the comparison in `cargo bench --bench sandbox`.
set -euo pipefail

need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v sh >/dev/null 2>&1 || need+=(dash)
# node runs the Node fixture of the TDD tasks (`node --test`, Node 18+).
command -v node >/dev/null 2>&1 || need+=(nodejs)
if [ "${1:-}" = "--bench" ]; then
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "medin setup: missing ${need[*]}; install them (e.g. sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi

# pytest for the harness's python3: the TDD loop reads pytest output, and a loop task over a
# real Python project usually runs it (the bundled fixtures use unittest and need nothing).
if ! python3 -m pytest --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check pytest >/dev/null 2>&1 \
    || echo "medin setup: could not install pytest (no network?); pytest-based tasks will stop on a missing runner" >&2
fi

# rustfmt and clippy for the lint steps of CI.
if command -v rustup >/dev/null 2>&1; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c" \
      || echo "medin setup: could not add the $c component (no network?); its CI step will be skipped" >&2
  done
fi
echo "medin setup: git $(git --version | cut -d' ' -f3), $(python3 --version), node $(node --version), $(python3 -m pytest --version 2>&1 | head -1)"

#!/usr/bin/env bash
# Installs what medin's tests and bundled suite need, idempotently: git, python3 and node (the
# example agent, several tasks and the TDD fixtures use them), Debian's chromium (the HTML
# report test opens the report in headless Chromium), and a container engine with medin's test
# image (podman and runc, and `localhost/medin-busybox:1` imported from the host's
# busybox-static: tests/containers.rs and the bundled container tasks). Safe to run again; does
# nothing when all is there.
# `scripts/setup.sh --bench` also installs bubblewrap, the comparison in `cargo bench --bench sandbox`.
# `scripts/setup.sh --containers` does the container part only.
set -euo pipefail

# The container engine and medin's test image: a root filesystem of the host's own
# busybox-static (one 2 MB binary and its applet links, made in a second and imported, so no
# registry is reached, at setup or at test time). Not fatal: without an engine, container
# tasks are `pending` and tests/containers.rs says it skipped, naming this command.
TEST_IMAGE=localhost/medin-busybox:1
containers() {
  local fix="sudo bash scripts/setup.sh --containers (or: sudo apt-get install -y podman runc busybox-static)"
  local want=()
  command -v podman >/dev/null 2>&1 || want+=(podman)
  command -v runc >/dev/null 2>&1 || want+=(runc)
  # The static build: the image holds no libc for a dynamic one.
  dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed' || want+=(busybox-static)
  if [ ${#want[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "medin setup: ${want[*]} missing; container tasks stay pending until: $fix" >&2
      return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt_update_once || true
    local log
    log=$(mktemp)
    if ! apt-get install -y -qq --no-install-recommends "${want[@]}" >"$log" 2>&1; then
      tail -5 "$log" >&2
      echo "medin setup: could not install ${want[*]} (no network?); container tasks stay pending until: $fix" >&2
      rm -f "$log"
      return 0
    fi
    rm -f "$log"
  fi
  local engine=${MEDIN_CONTAINER_ENGINE:-podman}
  if ! "$engine" version >/dev/null 2>&1; then
    echo "medin setup: \`$engine version\` fails; container tasks stay pending until it works" >&2
    return 0
  fi
  if "$engine" image inspect "$TEST_IMAGE" >/dev/null 2>&1; then
    return 0
  fi
  local root
  root=$(mktemp -d)
  mkdir -p "$root/rootfs/bin" "$root/rootfs/etc" "$root/rootfs/tmp" "$root/rootfs/root" "$root/rootfs/app"
  cp /bin/busybox "$root/rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -s busybox "$root/rootfs/bin/$applet"
  done
  # Task directories' solve.sh runs with `bash -c`: here that is busybox's sh.
  printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$root/rootfs/bin/bash"
  chmod 755 "$root/rootfs/bin/bash"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/rootfs/etc/group"
  chmod 1777 "$root/rootfs/tmp"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root/rootfs" -cf "$root/rootfs.tar" .
  if "$engine" import --change 'ENV PATH=/bin' "$root/rootfs.tar" "$TEST_IMAGE" >"$root/import.log" 2>&1; then
    echo "medin setup: imported $TEST_IMAGE ($engine)"
  else
    tail -5 "$root/import.log" >&2
    echo "medin setup: could not import $TEST_IMAGE; tests/containers.rs will skip" >&2
  fi
  rm -rf "$root"
}

need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v sh >/dev/null 2>&1 || need+=(dash)
# node runs the Node fixture of the TDD tasks (`node --test`, Node 18+).
command -v node >/dev/null 2>&1 || need+=(nodejs)
# npm and venv install the CLI agents (claude-code, codex, gemini-cli from npm; aider from PyPI).
command -v npm >/dev/null 2>&1 || need+=(npm)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
# The egress catch-all (src/sandbox/egress/catch.rs) routes and logs, inside each attempt's
# network namespace, every packet an agent sends past the proxy: `ip` and `nft` do it.
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
have ip || need+=(iproute2)
have nft || need+=(nftables)
if [ "${1:-}" = "--bench" ]; then
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
fi

apt_updated=no
apt_update_once() {
  if [ "$apt_updated" = no ]; then
    apt-get update -qq
    apt_updated=yes
  fi
}

if [ "${1:-}" = "--containers" ]; then
  containers
  exit 0
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "medin setup: missing ${need[*]}; install them (e.g. sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt_update_once
  apt-get install -y -qq "${need[@]}"
fi

# Chromium for tests/html_report.rs (the report is opened headless and its DOM checked). Not
# fatal here: without it that test fails and names this same command.
chromium_fix="sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "medin setup: chromium is missing (tests/html_report.rs needs it); install it: $chromium_fix" >&2
  else
    export DEBIAN_FRONTEND=noninteractive
    apt_update_once || true
    # (Read whole first: `grep -q` closing the pipe early would fail it under pipefail.)
    chromium_policy=$(apt-cache policy chromium 2>/dev/null || true)
    if grep -q 'Candidate: [0-9]' <<<"$chromium_policy"; then
      chromium_log=$(mktemp)
      if ! apt-get install -y -qq --no-install-recommends chromium >"$chromium_log" 2>&1; then
        tail -5 "$chromium_log" >&2
        echo "medin setup: could not install chromium (no network?); tests/html_report.rs will fail until: $chromium_fix" >&2
      fi
      rm -f "$chromium_log"
    else
      echo "medin setup: no chromium package in the apt sources (not Debian/Ubuntu, or no network?); tests/html_report.rs will fail until: $chromium_fix" >&2
    fi
  fi
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
containers

# The CLI agents at their pinned versions, into target/medin/agents (tests/cli_agents.rs runs
# them; `medin run --agent claude-code` would install them on first use anyway). Not fatal here:
# without them those tests fail as root (MEDIN_REQUIRE_CLI_AGENTS=1) and name this command.
if [ "${MEDIN_SKIP_CLI_AGENTS:-}" != 1 ]; then
  cargo run --quiet -- agents install --all >/dev/null \
    || echo "medin setup: could not install the CLI agents (no registry?); retry with: cargo run -- agents install --all" >&2
fi

chromium_version=$(chromium --version 2>/dev/null || echo "chromium missing")
engine_version=$( (podman --version || echo "podman missing") 2>/dev/null | head -1)
agents=$(cargo run --quiet -- agents list 2>/dev/null | awk '$3 != "not" {print $2}' | paste -sd' ' || true)
echo "medin setup: git $(git --version | cut -d' ' -f3), $(python3 --version), node $(node --version), $(python3 -m pytest --version 2>&1 | head -1), $chromium_version, $engine_version, CLI agents: ${agents:-none}"

#!/usr/bin/env bash
# Installs the peer guard `cargo bench --bench guard_hook` times medin's hook against:
# destructive_command_guard (`dcg`, a Claude Code PreToolUse hook in Rust), from crates.io at a
# pinned version, into target/medin/peer/ (the binary: target/medin/peer/bin/dcg). Idempotent:
# an installed binary of the pinned version is kept and nothing is fetched.
#
# dcg's licence is MIT with a rider: it grants no rights to OpenAI, Anthropic, their affiliates,
# or anyone acting on their behalf, and its "use" includes executing, benchmarking and putting it
# in an evaluation harness. Whoever installs it must be free to use it under that rider, so this
# script installs only when told so: `scripts/install-peer-guard.sh --accept-dcg-license`
# (or DCG_ACCEPT_LICENSE=1). Read the LICENSE at
# https://github.com/Dicklesworthstone/destructive_command_guard first.
#
# DCG_VERSION picks another version; CARGO_TARGET_DIR moves target/ as cargo does.
set -euo pipefail

version="${DCG_VERSION:-0.16.0}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${CARGO_TARGET_DIR:-$root/target}/medin/peer"
bin="$dest/bin/dcg"

# cargo install records what it installed under --root in .crates.toml.
if [ -x "$bin" ] && grep -q "^\"destructive_command_guard $version " "$dest/.crates.toml" 2>/dev/null; then
  echo "$bin"
  exit 0
fi

accept="${DCG_ACCEPT_LICENSE:-}"
for arg in "$@"; do
  case "$arg" in
    --accept-dcg-license) accept=1 ;;
    *) echo "usage: scripts/install-peer-guard.sh --accept-dcg-license" >&2; exit 64 ;;
  esac
done
if [ "$accept" != 1 ]; then
  cat >&2 <<EOF
medin: not installing destructive_command_guard $version: its licence (MIT with an
OpenAI/Anthropic rider) grants no rights to those companies, their affiliates or anyone acting
on their behalf, and counts executing and benchmarking as use. If you may use it, read
https://github.com/Dicklesworthstone/destructive_command_guard/blob/main/LICENSE and run:
  scripts/install-peer-guard.sh --accept-dcg-license
EOF
  exit 1
fi

command -v cargo >/dev/null 2>&1 || { echo "medin: cargo is needed to install dcg" >&2; exit 1; }
# --locked: the dependency versions dcg was released with.
cargo install destructive_command_guard --version "=$version" --locked --root "$dest" >&2
echo "$bin"

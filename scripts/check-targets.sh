#!/usr/bin/env bash
# Type-checks medin for the non-Linux targets it promises to build on (macOS, FreeBSD), from
# this Linux machine: `cargo check` needs each target's std (added with rustup when missing)
# but no C cross-compiler, so the C sources of tree-sitter are "compiled" by a stand-in that
# writes empty objects (check never links). Skips a target, saying so, when its std cannot be
# had (no rustup, no network). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

fake_cc="$(mktemp -d)/cc"
cat > "$fake_cc" <<'CC'
#!/bin/sh
# Stand-in C compiler for `cargo check` of another target: writes empty objects.
[ "$1" = "-E" ] && { echo clang; exit 0; }
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    -o*) out="${1#-o}" ;;
    -Fo*) out="${1#-Fo}" ;;
  esac
  shift
done
[ -n "$out" ] && : > "$out"
exit 0
CC
chmod +x "$fake_cc"

for target in x86_64-apple-darwin x86_64-unknown-freebsd; do
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    if ! timeout 180 rustup target add "$target" >/dev/null 2>&1; then
      echo "check-targets: skipping $target (its std could not be added)" >&2
      continue
    fi
  fi
  var="$(echo "$target" | tr '-' '_')"
  env "CC_$var=$fake_cc" "AR_$var=ar" RUSTFLAGS="-D warnings" \
    cargo check --quiet --target "$target" --all-targets
  echo "check-targets: $target type-checks"
done

#!/usr/bin/env bash
# Import + hash of a 256 MiB file, side by side with `openssl dgst -sha256`
# on the same file in the same hyperfine run (page cache warm for both).
# Usage: scripts/bench/import.sh [BIN_DIR]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-import.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
head -c $((256 << 20)) /dev/urandom > big.bin
"$bin/flameox" init >/dev/null
hyperfine -N --warmup 2 --runs 15 --export-markdown import.md \
  "openssl dgst -sha256 big.bin" \
  "$bin/flameox import big.bin"
cat import.md

#!/usr/bin/env bash
# Cold start of `flameox --help`, and `flameox status` on a synthetic
# workspace of N runs (default 10,000), each measured with hyperfine.
# Usage: scripts/bench/startup.sh [BIN_DIR] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
runs=${2:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin/flameox" init >/dev/null
(cd "$here" && go run ./scripts/bench/synthruns -workspace "$work/.diagnostics" -runs "$runs")
hyperfine -N --warmup 3 --runs 30 --export-markdown startup.md \
  "$bin/flameox --help" \
  "$bin/flameox status" \
  "$bin/flameox status --json"
cat startup.md

#!/usr/bin/env bash
# Import of the largest pyperf fixture (3 benchmarks, 63 runs, 180 values,
# 88 warm-ups) side by side with `python3 -m pyperf stats` on the same
# file in the same hyperfine run, then the summary of the imported run.
# Each import is a new run in one workspace (the bytes are stored once).
# Usage: scripts/bench/pyperf.sh [BIN_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/bin}
file=$root/pkg/adapter/pyperf/testdata/pyperf__mult_list_py37_tags.json
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-pyperf.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$file" bench.json
"$bin/flameox" init >/dev/null
hyperfine -N --warmup 3 --runs 30 --export-markdown pyperf.md \
  "python3 -m pyperf stats bench.json" \
  "$bin/flameox import bench.json"
run=$("$bin/flameox" import bench.json --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["run_id"])')
hyperfine -N --warmup 3 --runs 30 --export-markdown summary.md \
  "$bin/flameox measurements summary $run"
cat pyperf.md summary.md

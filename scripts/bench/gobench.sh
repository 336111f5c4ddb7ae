#!/usr/bin/env bash
# Import of the largest gobench fixture (golang/perf's benchseries file:
# 470 KB, 3,841 result lines, 6,841 values, configuration lines changing
# mid-file) side by side with `benchstat` on the same file in the same
# hyperfine run, then the summary of the imported run.
# Each import is a new run in one workspace (the bytes are stored once).
# Usage: scripts/bench/gobench.sh [BIN_DIR] [BENCHSTAT]
# (BENCHSTAT defaults to benchstat on PATH; build it with
#  go build -o /tmp/benchstat golang.org/x/perf/cmd/benchstat)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/bin}
benchstat=${2:-benchstat}
file=$root/pkg/adapter/gotest/testdata/golang-perf__benchseries-Go1.17-opt.20220105T213212
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-gobench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$file" bench.txt
"$bin/flameox" init >/dev/null
hyperfine -N --warmup 3 --runs 30 --export-markdown gobench.md \
  "$benchstat bench.txt" \
  "$bin/flameox import --kind benchmark_samples bench.txt"
run=$("$bin/flameox" import --kind benchmark_samples bench.txt --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["run_id"])')
hyperfine -N --warmup 3 --runs 30 --export-markdown summary.md \
  "$bin/flameox measurements summary $run --limit 1000 --json"
cat gobench.md summary.md
for c in "$benchstat bench.txt" "$bin/flameox import --kind benchmark_samples bench.txt"; do
  /usr/bin/time -f "peak RSS %M KB: $c" $c >/dev/null 2>>rss.txt || true
done
cat rss.txt

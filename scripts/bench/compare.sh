#!/usr/bin/env bash
# Comparison of two run sets of 1,000 blocks (issue 17's target: under
# 200 ms with 9,999 resamples), and benchstat on the same values: one
# experiment of /bin/true, BLOCKS blocks x 2 variants, run by `flameox
# experiment run` (its two frozen run sets); then hyperfine times
# `fox-compare compare BASE CAND --metric process.wall_time` with the
# default method and with `--method bca --resamples 9999`, and `benchstat`
# on each block's value of either side written as go test -bench output;
# then scripts/bench/comparetime splits the comparison's time in process
# (query, statistics). Not run by make test. The experiment takes a few
# minutes; WORK_DIR keeps the workspace for another session of the script.
# Usage: scripts/bench/compare.sh [BIN_DIR] [BLOCKS] [RUNS] [WORK_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/bin}
blocks=${2:-1000}
runs=${3:-20}
work=${4:-}
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-compare.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
benchstat=$(command -v benchstat || echo "$(go env GOPATH | cut -d: -f1)/bin/benchstat")
[ -x "$benchstat" ] || { echo "compare.sh: benchstat not found (scripts/install-collectors.sh installs it)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "compare.sh: hyperfine not found (scripts/install-collectors.sh installs it)" >&2; exit 1; }
go build -o "$work/comparetime" "$repo/scripts/bench/comparetime"
. "$(dirname "$0")/lib.sh"
cd "$work"
if [ ! -s sets.txt ]; then
  bench_project . "$bin/flameox" true <<TOML
schema_version = 1
[workloads.true]
argv = ["/bin/true", "{variant}"]
timeout_seconds = 10
[workloads.true.parameters]
variant = ["a", "b"]
[experiments.noop]
workload = "true"
variants = ["a", "b"]
blocks = $blocks
random_seed = 1
TOML
  start=$(date +%s)
  "$bin/flameox" experiment run noop --adapter process --quiet --json > experiment.json
  echo "experiment of $blocks blocks x 2 variants: $(( $(date +%s) - start )) s" >&2
  python3 - > sets.txt <<'PY'
import json
d = json.load(open("experiment.json"))
assert d["status"] == "completed", d["status"]
print(" ".join(s["run_set_id"] for s in d["run_sets"]))
PY
fi
read -r base cand < sets.txt
"$work/comparetime" -workspace .diagnostics -base "$base" -cand "$cand" -rounds 10 -benchfmt .
echo
hyperfine -N --warmup 3 --runs "$runs" --style basic --export-markdown hyperfine.md \
  -n "fox-compare compare (order_statistic)" "$bin/fox-compare compare $base $cand --metric process.wall_time" \
  -n "fox-compare compare --method bca --resamples 9999" "$bin/fox-compare compare $base $cand --metric process.wall_time --method bca --resamples 9999" \
  -n "fox-compare --help (start-up only)" "$bin/fox-compare --help" \
  -n "benchstat base.txt cand.txt" "$benchstat base.txt cand.txt" >/dev/null
cat hyperfine.md
echo
"$bin/fox-compare" compare "$base" "$cand" --metric process.wall_time --method bca --resamples 9999 | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
print("fox-compare bca: ratio %.4f [%.4f, %.4f], %s, %s, %d pairs" % (r["ratio"], r["ratio_low"], r["ratio_high"], r["decision"], r["validity"], r["paired_count"]))'
"$benchstat" base.txt cand.txt

#!/usr/bin/env bash
# Fleet query benchmark (docs/history.md "Measured"): one synthetic
# workspace of RUNS runs (4 gobench.sec/op values each, 4 environments, 50
# source states) exported by `flameox export corpus` and cloned into
# CORPORA export directories under new workspace ids; then every fleet
# query over all of them in process (scripts/bench/fleetquery, median of
# 5), `flameox fleet query` from the command line (median of 5), and, when
# pyspark is installed, the same runs-per-environment question in Spark
# local mode (report only).
# Usage: scripts/bench/fleet-query.sh [RUNS [CORPORA]]   (default 100000 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-100000}"
k="${2:-10}"
work="$(mktemp -d /tmp/flameox-fleetquery-XXXXXX)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/flameox" ./cmd/flameox
go build -o "$work/fleetquery" ./scripts/bench/fleetquery
"$work/fleetquery" -runs "$n" -corpora "$k" -dir "$work/data"
from=()
for d in "$work"/data/export-*; do from+=(--from "$d"); done
times=()
for _ in 1 2 3 4 5; do
  s=$EPOCHREALTIME
  "$work/flameox" fleet query runs_per_environment "${from[@]}" --json >/dev/null
  times+=("$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')")
done
echo
echo "flameox fleet query runs_per_environment over $k corpora ($((n * k)) runs), CLI, median of 5: $(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p) s"
if python3 -c 'import pyspark' 2>/dev/null; then
  python3 scripts/bench/fleet_spark.py "$work"/data/export-*
else
  echo "pyspark is not installed: no Spark comparison"
fi

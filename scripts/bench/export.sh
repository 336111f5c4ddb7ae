#!/usr/bin/env bash
# Export benchmark (docs/fleet.md "Measured"): build a synthetic corpus of N
# runs with 4 measurements each (scripts/bench/corpus: 10K-run
# publications, then compaction), then time `flameox export corpus` into an
# empty directory, a second export of the same commit (writes nothing), and
# DuckDB reading the export back by glob.
# Usage: scripts/bench/export.sh [RUNS]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-1000000}"
work="$(mktemp -d /tmp/flameox-export-bench-XXXXXX)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/flameox" ./cmd/flameox
go build -o "$work/corpus" ./scripts/bench/corpus
"$work/corpus" -runs "$n" -dir "$work/project" >/dev/null
t() { local s=$EPOCHREALTIME; "$@" >/dev/null; awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f s", b - a }'; }
first=$(t "$work/flameox" -C "$work/project" export corpus --to "$work/out")
second=$(t "$work/flameox" -C "$work/project" export corpus --to "$work/out")
files=$(find "$work/out" -name 'part-*.parquet' | wc -l)
bytes=$(du -sb "$work/out" | cut -f1)
echo "| runs | first export | second export (no-op) | files | bytes |"
echo "|---|---|---|---|---|"
echo "| $n | $first | $second | $files | $bytes |"

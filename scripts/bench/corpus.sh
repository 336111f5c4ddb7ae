#!/usr/bin/env bash
# Synthetic corpus benchmark at several sizes (SPEC §10): publish in 10K-run
# chunks, compact, rebuild the catalog, then open a snapshot and run a
# filtered count plus a cohort join/group (median of 7).
# Usage: scripts/bench/corpus.sh [SIZES...]   (default: 10 1000 100000 1000000)
set -euo pipefail
cd "$(dirname "$0")/../.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10 1000 100000 1000000)
go build -o /tmp/flameox-corpus-bench ./scripts/bench/corpus
echo "| runs | measurements | publish | compact | files before → after | rebuild | open + count + cohort query |"
echo "|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  /tmp/flameox-corpus-bench -runs "$n"
done

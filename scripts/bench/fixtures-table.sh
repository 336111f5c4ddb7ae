#!/usr/bin/env bash
# Every pprof, perf-script and speedscope fixture of ../shared/fixtures (or
# FIXTURES=<dir>) beside the peer a user would run on it, in one run:
# flameox's first look (init + import + hotspots) and its repeat hotspots,
# each with the median of its per-round ratios to the peer (wall and CPU
# time), in interleaved rounds (scripts/bench/fixtures_table.py). The
# perf-script peer is FlameGraph's stackcollapse-perf.pl (found on PATH, in
# $FLAMEGRAPH_DIR, or where scripts/install-collectors.sh clones it).
# Usage: scripts/bench/fixtures-table.sh [BIN_DIR]   (ROUNDS=5 by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
fixtures=${FIXTURES:-$here/../shared/fixtures}
collapse=$(command -v stackcollapse-perf.pl || true)
for d in "${FLAMEGRAPH_DIR:-}" /usr/local/share/FlameGraph; do
  if [ -z "$collapse" ] && [ -n "$d" ] && [ -f "$d/stackcollapse-perf.pl" ]; then collapse=$d/stackcollapse-perf.pl; fi
done
[ -n "$collapse" ] || { echo "fixtures-table.sh: stackcollapse-perf.pl not found (scripts/install-collectors.sh installs FlameGraph)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-fixtures.XXXXXX")
trap 'rm -rf "$work"' EXIT
STACKCOLLAPSE=$collapse python3 "$here/scripts/bench/fixtures_table.py" "$bin/flameox" "$work" "$fixtures" "${ROUNDS:-5}"

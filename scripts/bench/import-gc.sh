#!/usr/bin/env bash
# The collector's share of one import: `flameox import FILE` into a fresh
# workspace under GODEBUG=gctrace=1, summed over its cycles (CPU of the
# stop-the-world phases, assists, background and idle marking), with the
# import's wall time and peak RSS (/usr/bin/time). With OLD_BIN=<dir>,
# that build's import runs after this one's, RUNS times each, alternated.
# FILE defaults to a deep 10^6-location profile from scripts/bench/bigprofile.
# Usage: scripts/bench/import-gc.sh [BIN_DIR]   (FILE=<profile>, RUNS=2)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-importgc.XXXXXX")
trap 'rm -rf "$work"' EXIT
file=${FILE:-}
if [ -z "$file" ]; then
  file=$work/deep.pb.gz
  (cd "$here" && go run ./scripts/bench/bigprofile -shape deep -locations 1000000 -o "$file")
fi
builds=("$bin")
if [ -n "${OLD_BIN:-}" ]; then builds+=("$OLD_BIN"); fi
for _ in $(seq "${RUNS:-2}"); do
  for b in "${builds[@]}"; do
    rm -rf "$work/ws" && mkdir "$work/ws"
    (cd "$work/ws" && "$b/flameox" init >/dev/null &&
      GODEBUG=gctrace=1 /usr/bin/time -f "TIME %e %M" "$b/flameox" import "$file" 2>&1 >/dev/null) |
      python3 -c '
import re, sys
gc, cycles, wall, rss = 0.0, 0, "?", "?"
for line in sys.stdin:
    m = re.search(r"ms clock, ([0-9.]+)\+([0-9.]+)/([0-9.]+)/([0-9.]+)\+([0-9.]+) ms cpu", line)
    if m:
        gc += sum(float(x) for x in m.groups())
        cycles += 1
    elif line.startswith("TIME "):
        _, wall, rss = line.split()
print(f"{sys.argv[1]}: {cycles} GC cycles, GC CPU {gc:.0f} ms, wall {wall} s, peak RSS {int(rss) // 1024} MB")
' "$b"
  done
done

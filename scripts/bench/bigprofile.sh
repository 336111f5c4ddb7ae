#!/usr/bin/env bash
# Import (extract + publish) of 10^6-location pprof profiles, flat and deep
# (scripts/bench/bigprofile), side by side with `go tool pprof -top` on the
# same file: wall and CPU time and peak RSS in interleaved rounds
# (scripts/bench/rounds.py). Each import goes into a fresh workspace.
# With OLD_BIN=<dir>, that build's import runs in the same rounds.
# Usage: scripts/bench/bigprofile.sh [BIN_DIR]   (LOCATIONS=1000000, ROUNDS=3)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
n=${LOCATIONS:-1000000}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-big.XXXXXX")
trap 'rm -rf "$work"' EXIT
for shape in flat deep; do
  (cd "$here" && go run ./scripts/bench/bigprofile -shape "$shape" -locations "$n" -o "$work/$shape.pb.gz")
  ls -l "$work/$shape.pb.gz"
  cmds=("go tool pprof -top $work/$shape.pb.gz" "sh -c 'cd $work/ws && exec $bin/flameox import $work/$shape.pb.gz'")
  if [ -n "${OLD_BIN:-}" ]; then cmds+=("sh -c 'cd $work/ws && exec $OLD_BIN/flameox import $work/$shape.pb.gz'"); fi
  python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-3}" --warmup 1 --title "$shape, $n locations" \
    --setup "rm -rf $work/ws && mkdir $work/ws && cd $work/ws && $bin/flameox init >/dev/null" "${cmds[@]}"
done

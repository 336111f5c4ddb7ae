#!/usr/bin/env bash
# Repeat hotspots on a small published profile (parca's alloc_objects heap
# profile, 94 KB; FILE=<profile> for another) beside `go tool pprof -top` on
# the same file, in interleaved rounds (scripts/bench/rounds.py): wall and
# CPU time, peak RSS. With OLD_BIN=<dir>, that build's flameox answers the
# same request in the same rounds (before/after).
#
# Peak RSS: the pprof binary (`go tool -n pprof`) and flameox are also run
# from copies made here. A process's peak RSS counts the page-cache pages
# of its own executable that its faults map, and this kernel (6.18) maps
# whole large folios on a fault, so the figure depends on how the file got
# into the page cache: the Go linker's output sits in larger folios than
# the same file copied, or read back from disk after the cache is dropped
# (`flameox --help`: 47 against 36 MB). Copies put both binaries in the
# state of an installed one.
# Usage: scripts/bench/hotspots-small.sh [BIN_DIR]   (ROUNDS=30 by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
file=${FILE:-$here/pkg/profile/testdata/parca__alloc_objects.pb.gz}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-hotsmall.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin/flameox" init >/dev/null
run=$("$bin/flameox" import "$file" --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
cp "$(go tool -n pprof)" "$work/pprof"
cp "$bin/flameox" "$work/flameox"
cmds=("go tool pprof -top $file" "$bin/flameox analyze hotspots $run --limit 10 --json"
  "$work/pprof -top $file" "$work/flameox analyze hotspots $run --limit 10 --json")
if [ -n "${OLD_BIN:-}" ]; then cmds+=("$OLD_BIN/flameox analyze hotspots $run --limit 10 --json"); fi
python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-30}" --title "repeat hotspots on $(basename "$file")" "${cmds[@]}"

#!/usr/bin/env bash
# Repeat hotspots on a small published profile (parca's alloc_objects heap
# profile, 94 KB; FILE=<profile> for another) beside `go tool pprof -top` on
# the same file, in interleaved rounds (scripts/bench/rounds.py): wall and
# CPU time, peak RSS. With OLD_BIN=<dir>, that build's flameox answers the
# same request in the same rounds (before/after).
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
cmds=("go tool pprof -top $file" "$bin/flameox analyze hotspots $run --limit 10 --json")
if [ -n "${OLD_BIN:-}" ]; then cmds+=("$OLD_BIN/flameox analyze hotspots $run --limit 10 --json"); fi
python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-30}" --title "repeat hotspots on $(basename "$file")" "${cmds[@]}"

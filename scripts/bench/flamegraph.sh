#!/usr/bin/env bash
# `flameox render flamegraph` on the largest pprof fixture beside `go tool
# pprof -svg` (graphviz's dot) on the same file and, where
# scripts/install-collectors.sh put FlameGraph (/usr/local/share/FlameGraph,
# FLAMEGRAPH_DIR for another), flamegraph.pl on flameox's collapsed export,
# in interleaved rounds (scripts/bench/rounds.py): wall, CPU, peak RSS.
# With OLD_BIN=<dir>, that build's flameox renders in the same rounds.
# Usage: scripts/bench/flamegraph.sh [BIN_DIR]   (ROUNDS=10 by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
file=${FILE:-$here/pkg/profile/testdata/google-pprof__large.cpu.pb.gz}
fg=${FLAMEGRAPH_DIR:-/usr/local/share/FlameGraph}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-flamegraph.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin/flameox" init >/dev/null
run=$("$bin/flameox" import "$file" --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
"$bin/flameox" export collapsed "$run" -o fox.folded >/dev/null
cmds=("go tool pprof -svg -output pprof.svg $file" "$bin/flameox render flamegraph $run -o fox.svg")
if [ -n "${OLD_BIN:-}" ]; then cmds+=("$OLD_BIN/flameox render flamegraph $run -o old.svg"); fi
if [ -x "$fg/flamegraph.pl" ]; then cmds+=("sh -c 'perl $fg/flamegraph.pl fox.folded > fg.svg'"); fi
python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-10}" --title "flame graph of $(basename "$file")" "${cmds[@]}"

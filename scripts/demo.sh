#!/usr/bin/env bash
# The main job, end to end, on the bundled example (contrib/examples/reverse-scan):
# produce real evidence with the Go toolchain, then init a fresh workspace in a
# temporary copy, import the artifacts, and show what flameox knows.
# Usage: scripts/demo.sh [BIN_DIR]   (make demo builds the binaries first)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/bin}
flameox="$bin/flameox"
[ -x "$flameox" ] || { echo "demo: $flameox not built; run 'make build'" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-demo.XXXXXX")
echo "demo: working in $work" >&2
cp -R "$here/contrib/examples/reverse-scan/." "$work/"
cd "$work"
git init -q . && git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm example

echo "demo: go test -bench (real benchmark samples and CPU profile)" >&2
GOWORK=off go test -run '^$' -bench . -benchtime 200ms -count 3 -benchmem -cpuprofile cpu.pprof > bench.txt
rm -f reversescan.test

run() { echo; echo "\$ flameox $*"; "$flameox" "$@"; }
run init
run import --kind sample_profile --producer go-test cpu.pprof
run import --kind benchmark_samples --producer go-test bench.txt
run import --kind sample_profile --producer go-test cpu.pprof   # identical bytes: stored once
run status
run runs list
run artifacts list
echo
echo "demo: done; the workspace is $work/.diagnostics" >&2

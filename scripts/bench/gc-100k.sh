#!/usr/bin/env bash
# gc's dry run on a corpus of N runs (default 100,000; SPEC §10 target
# < 1 s): scripts/bench/gccorpus fills a fresh workspace through pkg/run
# and pkg/publish (one object per run, C runs per publication, automatic
# compaction on), then hyperfine times `flameox gc` (the configured policy)
# and `flameox gc --min-age 0s` (everything old enough to list).
# Usage: scripts/bench/gc-100k.sh [RUNS] [CHUNK]   (TMPDIR picks the disk)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-100000}
chunk=${2:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-gc.XXXXXX")
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
(cd "$here" && go build -o "$work/flameox" ./cmd/flameox && go build -o "$work/gccorpus" ./scripts/bench/gccorpus)
cd "$work"
./flameox init >/dev/null
./gccorpus -workspace "$work/.diagnostics" -runs "$runs" -chunk "$chunk"
echo "files: $(find .diagnostics -type f | wc -l); runs: $(ls .diagnostics/runs | wc -l); generations: $(ls .diagnostics/generations | wc -l); commits: $(ls .diagnostics/corpus/commits | wc -l)"
./flameox gc --min-age 0s | tail -3
hyperfine -N --warmup 2 --runs 10 \
  "$work/flameox gc" \
  "$work/flameox gc --min-age 0s" \
  "$work/flameox --json gc --min-age 0s"

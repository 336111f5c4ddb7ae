#!/usr/bin/env bash
# `flameox validate` at each level on a corpus of N runs (default 10,000):
# scripts/bench/gccorpus (gc's corpus builder) fills a fresh workspace
# through pkg/run and pkg/publish (one object per run, C runs per
# publication, automatic compaction on), then hyperfine times the levels
# (docs/integrity.md, "Measured").
# Usage: scripts/bench/validate-runs.sh [RUNS] [CHUNK]   (TMPDIR picks the disk)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-10000}
chunk=${2:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-validate-runs.XXXXXX")
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
(cd "$here" && go build -o "$work/flameox" ./cmd/flameox && go build -o "$work/gccorpus" ./scripts/bench/gccorpus)
cd "$work"
./flameox init >/dev/null
./gccorpus -workspace "$work/.diagnostics" -runs "$runs" -chunk "$chunk"
echo "files: $(find .diagnostics -type f | wc -l); runs: $(ls .diagnostics/runs | wc -l); generations: $(ls .diagnostics/generations | wc -l); commits: $(ls .diagnostics/corpus/commits | wc -l)"
./flameox validate --level full | head -2
hyperfine -N --warmup 1 --runs "${RUNS:-5}" \
  "$work/flameox validate --level quick" \
  "$work/flameox validate --level standard" \
  "$work/flameox validate --level full"

#!/usr/bin/env bash
# Hotspots on the largest pprof fixture, side by side with `go tool pprof
# -top` on the same file (SPEC §10): first import + extraction + publication
# + hotspots, then repeat hotspots on the published corpus; peak RSS of each.
# Usage: scripts/bench/hotspots.sh [BIN_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
file=$here/pkg/profile/testdata/google-pprof__large.cpu.pb.gz
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-hot.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > first.sh <<SH
#!/bin/sh
set -e
rm -rf ws && mkdir ws && cd ws
$bin/flameox init >/dev/null
run=\$($bin/flameox import $file --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
$bin/flameox analyze hotspots "\$run" --limit 10 --json >/dev/null
SH
chmod +x first.sh
hyperfine -N --warmup 2 --runs 10 --export-markdown first.md \
  "go tool pprof -top $file" "$work/first.sh"
./first.sh
run=$(cd ws && "$bin/flameox" runs list --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
hyperfine -N --warmup 3 --runs 30 --export-markdown repeat.md \
  "go tool pprof -top $file" "$bin/flameox --workspace $work/ws/.diagnostics analyze hotspots $run --limit 10 --json"
/usr/bin/time -f "go tool pprof -top: peak RSS %M KB" go tool pprof -top "$file" >/dev/null
/usr/bin/time -f "flameox import (extract + publish): peak RSS %M KB" sh -c "cd ws && $bin/flameox import $file >/dev/null"
/usr/bin/time -f "flameox analyze hotspots (published): peak RSS %M KB" "$bin/flameox" --workspace "$work/ws/.diagnostics" analyze hotspots "$run" --limit 10 --json >/dev/null
cat first.md repeat.md

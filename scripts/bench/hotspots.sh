#!/usr/bin/env bash
# Hotspots on the largest pprof fixture, side by side with `go tool pprof
# -top` on the same file (SPEC §10): first import + extraction + publication
# + hotspots, then repeat hotspots on the published corpus; peak RSS of each.
#
# The commands run in interleaved rounds (pprof, then flameox, in every
# round), so a shared machine's drift in speed over minutes hits both
# alike; the ratio reported is the median of the per-round ratios, next to
# the medians of each command. With OLD_BIN=<dir>, that build's flameox
# runs in the same rounds (first command only) for a before/after.
# Usage: scripts/bench/hotspots.sh [BIN_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
file=$here/pkg/profile/testdata/google-pprof__large.cpu.pb.gz
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-hot.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
first() { # first NAME FLAMEOX: a script doing init + import + hotspots
  cat > "$1.sh" <<SH
#!/bin/sh
set -e
rm -rf $work/$1 && mkdir $work/$1 && cd $work/$1
$2 init >/dev/null
run=\$($2 import $file --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
$2 analyze hotspots "\$run" --limit 10 --json >/dev/null
SH
  chmod +x "$1.sh"
}
first new "$bin/flameox"
firsts=("$work/new.sh")
if [ -n "${OLD_BIN:-}" ]; then
  first old "$OLD_BIN/flameox"
  firsts+=("$work/old.sh")
fi
./new.sh
run=$(cd new && "$bin/flameox" runs list --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
cp -r new published
pprof="go tool pprof -top $file"
repeat="$bin/flameox --workspace $work/published/.diagnostics analyze hotspots $run --limit 10 --json"
python3 - "$pprof" "${firsts[@]}" --- "$pprof" "$repeat" <<'PY'
import shlex, statistics, subprocess, sys, time
args = sys.argv[1:]
split = args.index("---")
for title, cmds, rounds in (("first import + extract + hotspots", args[:split], 15),
                            ("repeat hotspots on the published corpus", args[split + 1:], 30)):
    times = {c: [] for c in cmds}
    for r in range(2 + rounds):  # two warm-up rounds
        for c in cmds:
            t = time.perf_counter()
            subprocess.run(shlex.split(c), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if r >= 2:
                times[c].append(time.perf_counter() - t)
    print(f"## {title} ({rounds} interleaved rounds)")
    base = times[cmds[0]]
    for c in cmds:
        m = statistics.median(times[c])
        q = statistics.quantiles(times[c], n=10)
        ratio = statistics.median(t / b for t, b in zip(times[c], base))
        print(f"{m*1e3:8.1f} ms median  p10 {q[0]*1e3:7.1f}  p90 {q[-1]*1e3:7.1f}  ratio {ratio:5.3f}  {c}")
    print()
PY
/usr/bin/time -f "go tool pprof -top: peak RSS %M KB" go tool pprof -top "$file" >/dev/null
rm -rf rss && mkdir rss && (cd rss && "$bin/flameox" init >/dev/null)
/usr/bin/time -f "flameox import (extract + publish): peak RSS %M KB" sh -c "cd rss && $bin/flameox import $file >/dev/null"
/usr/bin/time -f "flameox analyze hotspots (published): peak RSS %M KB" $repeat >/dev/null

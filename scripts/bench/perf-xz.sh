#!/usr/bin/env bash
# The perf path on a real program's recording (SPEC §10, issue 24): capture
# `xz -9 -T1` compressing 12 MB of Go compiler sources with `flameox
# capture run perf` at ~50 kHz (>= 400K samples, shallow stacks, many
# distinct symbols), then, in interleaved rounds (scripts/bench/rounds.py)
# on the same perf.data: `perf script` alone (the baseline), flameox's
# import of the perf script text with the default GOMAXPROCS and with
# GOMAXPROCS=1 (the serial parse), and the import of an opaque file of the
# same size (store only: copy, hash, run manifest). The difference between
# the text and the opaque import is extraction and publication; the target
# is that difference <= 50% of `perf script` alone.
# With OLD_BIN=<dir>, that build's import of the text runs in the same
# rounds (before/after).
# Usage: scripts/bench/perf-xz.sh [BIN_DIR]   (ROUNDS=5 by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-perfxz.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
# head closes the pipe early: tar's SIGPIPE is expected.
{ tar cf - -C "$(go env GOROOT)" src/cmd/compile || true; } | head -c 12000000 > input
cat > flameox.toml <<'TOML'
schema_version = 1
[workloads.xz]
argv = ["xz", "-9", "-T1", "-k", "-f", "input"]
timeout_seconds = 300
options = { frequency = "49999" }
TOML
"$bin/flameox" init >/dev/null
"$bin/flameox" workload approve xz >/dev/null
/usr/bin/time -f "capture run (record + script + extract + publish): %e s, peak RSS %M KB" \
  "$bin/flameox" capture run perf --workload xz --json > run.json
data=$(ls .diagnostics/artifacts/sha256/*/*/payload.data)
script=""
for f in .diagnostics/artifacts/sha256/*/*/payload.txt; do
  if head -c 4096 "$f" | grep -q cpu-clock; then script=$f; fi
done
[ -n "$script" ] || { echo "perf-xz: no perf script text among the run's artifacts" >&2; exit 1; }
cp "$script" perf.script.txt
head -c "$(stat -c %s perf.script.txt)" /dev/urandom > opaque.bin
samples=$(grep -c 'cpu-clock' perf.script.txt || true)
echo "samples: $samples; perf.data $(stat -c %s "$data") bytes; perf script text $(stat -c %s perf.script.txt) bytes"
fields=comm,pid,tid,time,period,event,ip,sym,dso   # pkg/adapter/perf ScriptFields
mkdir imp
cmds=("sh -c 'perf script -i $data -F $fields > /dev/null'"
  "sh -c 'cd $work/imp && $bin/flameox import ../perf.script.txt'"
  "sh -c 'cd $work/imp && GOMAXPROCS=1 $bin/flameox import ../perf.script.txt'"
  "sh -c 'cd $work/imp && $bin/flameox import ../opaque.bin'")
if [ -n "${OLD_BIN:-}" ]; then cmds+=("sh -c 'cd $work/imp && $OLD_BIN/flameox import ../perf.script.txt'"); fi
python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-5}" --warmup 1 \
  --title "perf path on xz -9 ($samples samples)" \
  --setup "rm -rf $work/imp && mkdir $work/imp && cd $work/imp && $bin/flameox init" "${cmds[@]}"

#!/usr/bin/env bash
# The workload's CPU time under py-spy against the same Python run
# directly: a 0.3 s busy loop, N interleaved rounds (default 5) of GNU
# time on the bare interpreter and `flameox capture run py-spy` (and
# OLD_BIN's flameox, in its own workspace, when set). Prints each run's
# user/sys and the processes the workload's figures cover.
# Usage: scripts/bench/pyspy-cpu.sh [BIN_DIR] [N]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
n=${2:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-pyspy.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
py=$(python3 -c 'import sys; print(sys.executable)')
code='import time
t = time.time()
while time.time() - t < 0.3: pass'
manifest() {
  printf 'schema_version = 1\n[workloads.busy]\nargv = ["%s", "-c", """%s"""]\ntimeout_seconds = 60\n' "$py" "$code"
}
manifest | bench_project "$work/new" "$bin/flameox" busy
builds=("$bin")
if [ -n "${OLD_BIN:-}" ]; then
  manifest | bench_project "$work/old" "$OLD_BIN/flameox" busy
  builds+=("$OLD_BIN")
fi
echo "py-spy $(py-spy --version 2>/dev/null | cut -d' ' -f2), $py"
for ((r = 1; r <= n; r++)); do
  /usr/bin/time -f "direct      user %Us sys %Ss" "$py" -c "$code" 2>&1
  for b in "${builds[@]}"; do
    ws=$work/new; [ "$b" = "$bin" ] || ws=$work/old
    line=$("$b/flameox" -C "$ws" capture run py-spy --workload busy 2>&1 | grep '^process' || true)
    echo "${b}: ${line#*wall }"
  done
done

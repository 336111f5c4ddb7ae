#!/usr/bin/env bash
# What `flameox capture run process` adds over the command run directly,
# by how long the command runs: /bin/sleep for 0.005, 0.05, 0.2, 0.3 and
# 1 s, and a busy loop of 0.3 s (a vCPU that never goes idle), each beside
# the direct command in interleaved rounds (scripts/bench/rounds.py). The
# capture target (< 30 ms added) is checked by scripts/bench/capture.sh on
# /bin/true and sleep 1; this sweep shows whether the overhead depends on
# the workload's duration.
# Usage: scripts/bench/capture-durations.sh [BIN_DIR]   (ROUNDS=10 by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-capdur.XXXXXX")
trap 'rm -rf "$work"' EXIT
busy="timeout 0.3 sh -c 'while :; do :; done'; true"
. "$(dirname "$0")/lib.sh"
{
  echo 'schema_version = 1'
  for d in 0.005 0.05 0.2 0.3 1; do
    printf '[workloads.s%s]\nargv = ["/bin/sleep", "%s"]\ntimeout_seconds = 10\n' "${d/./_}" "$d"
  done
  printf '[workloads.busy]\nargv = ["/bin/sh", "-c", "%s"]\ntimeout_seconds = 10\n' "$busy"
} | bench_project "$work" "$bin/flameox" s0_005 s0_05 s0_2 s0_3 s1 busy
cd "$work"
cmds=()
for d in 0.005 0.05 0.2 0.3 1; do
  cmds+=("/bin/sleep $d" "$bin/flameox capture run process --workload s${d/./_}")
done
cmds+=("sh -c \"$busy\"" "$bin/flameox capture run process --workload busy")
python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-10}" --warmup 1 \
  --title "capture overhead by duration" "${cmds[@]}" | tee table.md
# The added time of each capture: its wall median minus the direct one's.
python3 - table.md <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| `")]
for direct, cap in zip(rows[0::2], rows[1::2]):
    d = float(re.search(r"\| ([\d.]+) ms", direct).group(1))
    c = float(re.search(r"\| ([\d.]+) ms", cap).group(1))
    print(f"{direct.split('`')[1]:45s} {d:8.1f} ms direct, capture adds {c - d:5.1f} ms")
PY

#!/usr/bin/env bash
# The phases of `flameox capture run process` around its workload, from
# the scheduler's exec and exit tracepoints (perf record; needs the
# permission perf's tracepoints need): from flameox's start to the
# workload's exec ("before"), and from the workload's exit to flameox's
# ("after"), for `sleep 0.005` and `sleep 1` in turn, RUNS captures of
# each (docs/performance.md, "Other targets re-run").
# Usage: scripts/bench/capture-phases.sh [BIN_DIR]   (RUNS=10)
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-phases.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
bench_project "$work/p" "$bin/flameox" short long <<'TOML'
schema_version = 1
[workloads.short]
argv = ["/bin/sleep", "0.005"]
timeout_seconds = 10
[workloads.long]
argv = ["/bin/sleep", "1"]
timeout_seconds = 10
TOML
for _ in $(seq "${RUNS:-10}"); do
  for w in short long; do
    perf record -q -e 'sched:sched_process_exit,sched:sched_process_exec' -o "$work/tp.data" -- \
      "$bin/flameox" -C "$work/p" capture run process --workload "$w" >/dev/null 2>&1
    perf script -i "$work/tp.data" -F comm,tid,time,event 2>/dev/null | python3 -c '
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
t0 = float(rows[0][2].rstrip(":"))
ev = [(r[0], r[3], float(r[2].rstrip(":"))) for r in rows]
exec_ = [t for c, e, t in ev if c == "sleep" and "exec" in e][0]
exit_ = [t for c, e, t in ev if c == "sleep" and "exit" in e][-1]
end = [t for c, e, t in ev if c == "flameox" and "exit" in e][-1]
print(sys.argv[1], f"{(exec_ - t0) * 1e3:.1f}", f"{(end - exit_) * 1e3:.1f}")
' "$w"
  done
done | python3 -c '
import statistics, sys
by = {}
for line in sys.stdin:
    w, before, after = line.split()
    by.setdefault(w, []).append((float(before), float(after)))
for w, v in by.items():
    print(f"{w}: before the workload {statistics.median(b for b, _ in v):.1f} ms, after it {statistics.median(a for _, a in v):.1f} ms"
          f" (medians of {len(v)}; after: {min(a for _, a in v):.1f}-{max(a for _, a in v):.1f} ms)")
'

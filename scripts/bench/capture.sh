#!/usr/bin/env bash
# Orchestration overhead of `flameox capture run process` over running the
# same command directly, side by side in interleaved rounds, on /bin/true
# and on a 1 s workload (SPEC §10 target: < 30 ms median added). The
# capture includes planning, identity, the broker, registration of output
# and publication of the run. With OLD_BIN=<dir>, that build's flameox runs
# in the same hyperfine session (in its own workspace) for a before/after.
# Usage: scripts/bench/capture.sh [BIN_DIR]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-capture.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
setup() { # setup DIR FLAMEOX
  bench_project "$1" "$2" true second <<'TOML'
schema_version = 1
[workloads.true]
argv = ["/bin/true"]
timeout_seconds = 10
[workloads.second]
argv = ["/bin/sleep", "1"]
timeout_seconds = 10
TOML
}
setup "$work/new" "$bin/flameox"
cmds=("/bin/true" "$bin/flameox -C $work/new capture run process --workload true")
slow=("/bin/sleep 1" "$bin/flameox -C $work/new capture run process --workload second")
if [ -n "${OLD_BIN:-}" ]; then
  setup "$work/old" "$OLD_BIN/flameox"
  cmds+=("$OLD_BIN/flameox -C $work/old capture run process --workload true")
  slow+=("$OLD_BIN/flameox -C $work/old capture run process --workload second")
fi
cd "$work"
# Rounds are interleaved (every command once per round, in turn), so the
# drift of a shared machine's speed over minutes hits every command alike;
# hyperfine runs one command's runs back to back. ORDER=turn turns the
# order round every other round (A B, B A, ...): in the fixed order the
# capture of `sleep 1` always starts after the direct `sleep 1`, on a
# machine that has idled for a second.
python3 - "${cmds[@]}" --- "${slow[@]}" <<'PY'
import os, shlex, statistics, subprocess, sys, time
turn = os.environ.get("ORDER") == "turn"
args = sys.argv[1:]
split = args.index("---")
for cmds, rounds, warm in ((args[:split], 40, 3), (args[split + 1:], 10, 1)):
    times = {c: [] for c in cmds}
    for r in range(warm + rounds):
        for c in (cmds[::-1] if turn and r % 2 else cmds):
            t = time.perf_counter()
            subprocess.run(shlex.split(c), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if r >= warm:
                times[c].append(time.perf_counter() - t)
    base = statistics.median(times[cmds[0]])
    for c in cmds:
        m = statistics.median(times[c])
        q = statistics.quantiles(times[c], n=10)
        print(f"{m*1e3:9.1f} ms median  p10 {q[0]*1e3:7.1f}  p90 {q[-1]*1e3:7.1f}  added {1e3*(m-base):6.1f} ms  {c}")
    print()
PY

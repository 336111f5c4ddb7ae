#!/usr/bin/env bash
# Orchestration overhead per trial of an experiment: a 10-block, 2-variant
# experiment of /bin/true (20 trials), run by `flameox experiment run`
# (capture, journal and publication of every run, trial and run set, in
# process) and by `fox-capture experiment run | fox-publish`, against
# running /bin/true 20 times directly, in interleaved rounds. The issue's
# target: < 40 ms per trial over running the workload.
# Usage: scripts/bench/experiment.sh [BIN_DIR] [ROUNDS]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
rounds=${2:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-experiment.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
bench_project "$work" "$bin/flameox" true <<'TOML'
schema_version = 1
[workloads.true]
argv = ["/bin/true", "{variant}"]
timeout_seconds = 10
[workloads.true.parameters]
variant = ["a", "b"]
[experiments.noop]
workload = "true"
variants = ["a", "b"]
blocks = 10
random_seed = 1
TOML
cd "$work"
python3 - "$bin" "$rounds" <<'PY'
import statistics, subprocess, sys, time
bin, rounds = sys.argv[1], int(sys.argv[2])
trials = 20
def direct():
    for _ in range(trials):
        subprocess.run(["/bin/true"], check=True)
def porcelain():
    subprocess.run([f"{bin}/flameox", "experiment", "run", "noop", "--adapter", "process", "--quiet"],
                   stdout=subprocess.DEVNULL, check=True)
def pipeline():
    cap = subprocess.Popen([f"{bin}/fox-capture", "experiment", "run", "noop", "--adapter", "process", "--quiet"], stdout=subprocess.PIPE)
    subprocess.run([f"{bin}/fox-publish"], stdin=cap.stdout, stdout=subprocess.DEVNULL, check=True)
    if cap.wait() != 0:
        raise SystemExit("fox-capture failed")
def capture_only():
    subprocess.run([f"{bin}/fox-capture", "experiment", "run", "noop", "--adapter", "process", "--quiet"],
                   stdout=subprocess.DEVNULL, check=True)
cmds = {"20 x /bin/true": direct, "flameox experiment run": porcelain,
        "fox-capture experiment run | fox-publish": pipeline, "fox-capture experiment run (unpublished)": capture_only}
times = {k: [] for k in cmds}
for r in range(rounds + 1):
    for k, f in cmds.items():
        t = time.perf_counter(); f(); d = time.perf_counter() - t
        if r > 0:
            times[k].append(d)
base = statistics.median(times["20 x /bin/true"])
for k, ts in times.items():
    m = statistics.median(ts)
    print(f"{m*1e3:9.1f} ms median of {rounds}  per trial {m*1e3/trials:6.1f} ms  added per trial {(m-base)*1e3/trials:6.1f} ms  {k}")
PY

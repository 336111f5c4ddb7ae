#!/usr/bin/env bash
# Does a default `flameox capture run gotest` change what a benchmark
# measures? Plain `go test -bench` and the same workload captured by
# flameox run in interleaved rounds (one of each per round, so the drift of
# a shared machine's speed hits both alike); the flameox side's benchmark
# lines come from the captured test2json stream (process_output). benchstat
# compares the two sets: the target verdict is `~` on every benchmark.
#
# Usage: scripts/bench/gotest-timing.sh [BIN_DIR]
#   MODULE=<dir>  module to benchmark (default: contrib/examples/reverse-scan)
#   PKG=<pkg>     package inside it (default: .)
#   BENCH=<re>    -bench pattern (default: .)
#   BENCHTIME=<d> -benchtime (default: 100ms)
#   ROUNDS=<n>    interleaved rounds, one -count=1 run each (default: 10)
#   OPTIONS=<toml> the workload's options, e.g. 'profiles = "cpu,mem", coverage = "true"'
#                 to see what instrumentation does (default: none, the default capture)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
module=${MODULE:-$here/contrib/examples/reverse-scan}
pkg=${PKG:-.}
bench=${BENCH:-.}
benchtime=${BENCHTIME:-100ms}
rounds=${ROUNDS:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-gotest.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -R "$module/." "$work/src" 2>/dev/null || { mkdir -p "$work/src"; cp -R "$module/." "$work/src"; }
chmod -R u+w "$work/src"
cd "$work/src"
git init -q . && git add -A && git -c user.name=b -c user.email=b@example.invalid commit -qm bench
cat > flameox.toml <<TOML
schema_version = 1
[workloads.bench]
argv = ["go", "test", "-run", "^\$", "-bench", "$bench", "-benchtime", "$benchtime", "-count", "1", "$pkg"]
timeout_seconds = 900
env = { GOWORK = "off", GOFLAGS = "-mod=mod" }
options = { ${OPTIONS:-} }
TOML
"$bin/flameox" init >/dev/null
"$bin/flameox" workload approve bench >/dev/null
export GOWORK=off GOFLAGS=-mod=mod
go test -run '^$' -bench "$bench" -benchtime 1x -count 1 "$pkg" >/dev/null # build cache warm for both
: >"$work/plain.txt"; : >"$work/flameox.txt"
for ((r = 1; r <= rounds; r++)); do
  go test -run '^$' -bench "$bench" -benchtime "$benchtime" -count 1 "$pkg" | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$work/plain.txt"
  "$bin/flameox" capture run gotest --workload bench --json >"$work/capture.json"
  python3 - "$work/capture.json" "$work/src" >>"$work/flameox.txt" <<'PY'
import json, os, sys
res = json.load(open(sys.argv[1]))
regs = [r for r in res["run"]["artifacts"] if r["kind"] == "process_output" and r["role"] == "stdout"]
if not regs:
    sys.exit("no process_output in the capture")
# test2json may split one benchmark line over several output events.
text = "".join(json.loads(l).get("Output", "") for l in open(os.path.join(sys.argv[2], ".diagnostics", regs[0]["payload_path"]))
               if json.loads(l).get("Action") == "output")
for out in text.splitlines(keepends=True):
    if out.startswith(("Benchmark", "goos", "goarch", "pkg:", "cpu:")):
        sys.stdout.write(out)
PY
  echo "round $r/$rounds" >&2
done
cd "$here"
go run golang.org/x/perf/cmd/benchstat plain="$work/plain.txt" flameox="$work/flameox.txt"

#!/usr/bin/env bash
# The whole perf path on a recording of >= 200K samples (SPEC §10): capture
# a C program with `flameox capture run perf` at ~50 kHz, then measure side
# by side on the same perf.data: `perf script` alone, `perf report --stdio`,
# flameox's import of the perf script text beside the import of an opaque
# file of the same size (the difference is extraction + publication), and
# repeat hotspots on the published corpus.
# Usage: scripts/bench/perf.sh [BIN_DIR]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-perf.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > hot.c <<'C'
volatile unsigned long sink;
__attribute__((noinline)) unsigned long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) void mix(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink ^= i * 2654435761UL; }
__attribute__((noinline)) void hot_loop(void) { for (int r = 0; r < 1100; r++) { sink += fib(27); mix(3000000); } }
int main(void) { hot_loop(); return 0; }
C
gcc -O1 -g -fno-omit-frame-pointer -o hot hot.c
cat > flameox.toml <<'TOML'
schema_version = 1
[workloads.hot]
argv = ["./hot"]
timeout_seconds = 300
options = { frequency = "49999" }
TOML
"$bin/flameox" init >/dev/null
"$bin/flameox" workload approve hot >/dev/null
/usr/bin/time -f "capture run (record + script + extract + publish): %e s, peak RSS %M KB" \
  "$bin/flameox" capture run perf --workload hot --json > run.json
run=$(sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' run.json | head -n 1)
data=$(ls .diagnostics/artifacts/sha256/*/*/payload.data)
script=$(ls .diagnostics/artifacts/sha256/*/*/payload.txt | head -n 1)
for f in $(ls .diagnostics/artifacts/sha256/*/*/payload.txt); do
  if head -c 200 "$f" | grep -q cpu-clock; then script=$f; fi
done
cp "$script" perf.script.txt
samples=$(grep -c 'cpu-clock' perf.script.txt || true)
echo "samples in the recording: $samples; perf.data $(stat -c %s "$data") bytes; script text $(stat -c %s perf.script.txt) bytes"
fields=comm,pid,tid,time,period,event,ip,sym,dso   # pkg/adapter/perf ScriptFields
mkdir imp && cd imp && "$bin/flameox" init >/dev/null && cd ..
hyperfine -N --warmup 1 --runs 5 --export-markdown perf.md \
  "perf script -i $data ${fields:+-F $fields}" \
  "perf report --stdio -i $data"
# An opaque file of the same size costs what storing the text costs
# (copy + hash + run), so the difference is extraction and publication.
head -c "$(stat -c %s perf.script.txt)" /dev/urandom > opaque.bin
hyperfine --warmup 1 --runs 10 --export-markdown import.md --export-json import.json \
  --prepare "rm -rf imp && mkdir imp && cd imp && $bin/flameox init >/dev/null" \
  "cd imp && $bin/flameox import ../perf.script.txt >/dev/null" \
  "cd imp && $bin/flameox import ../opaque.bin >/dev/null"
hyperfine -N --warmup 3 --runs 20 --export-markdown hot.md \
  "$bin/flameox analyze hotspots $run --limit 10 --json"
/usr/bin/time -f "import of the perf script text: peak RSS %M KB" sh -c "cd imp && $bin/flameox import ../perf.script.txt >/dev/null"
cat perf.md import.md hot.md
python3 -c "import json; [print(r['command'], 'median', round(r['median']*1000, 1), 'ms') for r in json.load(open('import.json'))['results']]"

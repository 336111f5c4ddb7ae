#!/usr/bin/env bash
# Orchestration overhead of `flameox capture run process` over running the
# same command directly, side by side in one hyperfine run, on /bin/true
# and on a 1 s workload (SPEC §10 target: < 30 ms median added). The
# capture includes planning, identity, the broker, registration of output
# and publication of the run. With OLD_BIN=<dir>, that build's flameox runs
# in the same hyperfine session (in its own workspace) for a before/after.
# Usage: scripts/bench/capture.sh [BIN_DIR]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-capture.XXXXXX")
trap 'rm -rf "$work"' EXIT
setup() { # setup DIR FLAMEOX
  mkdir -p "$1" && cd "$1"
  git init -q . && git -c user.name=b -c user.email=b@example.invalid commit -q --allow-empty -m init
  cat > flameox.toml <<'TOML'
schema_version = 1
[workloads.true]
argv = ["/bin/true"]
timeout_seconds = 10
[workloads.second]
argv = ["/bin/sleep", "1"]
timeout_seconds = 10
TOML
  "$2" init >/dev/null
  "$2" workload approve true >/dev/null
  "$2" workload approve second >/dev/null
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
hyperfine -N --warmup 3 --runs 40 --export-json true.json "${cmds[@]}" >/dev/null
hyperfine -N --warmup 1 --runs 10 --export-json second.json "${slow[@]}" >/dev/null
python3 - <<'PY'
import json
for f in ("true.json", "second.json"):
    rs = json.load(open(f))["results"]
    base = rs[0]["median"]
    for r in rs:
        print(f"{r['median']*1e3:9.1f} ms median  {r['mean']*1e3:9.1f} ms mean  "
              f"added {1e3*(r['median']-base):7.1f} ms  {r['command']}")
    print()
PY

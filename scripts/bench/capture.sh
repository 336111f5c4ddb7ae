#!/usr/bin/env bash
# Orchestration overhead of `flameox capture run process` over running the
# same command directly, side by side in one hyperfine run, on /bin/true
# and on a 1 s workload (SPEC §10 target: < 30 ms median added). The
# capture includes planning, identity, the broker, registration of output
# and publication of the run.
# Usage: scripts/bench/capture.sh [BIN_DIR]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-capture.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
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
"$bin/flameox" init >/dev/null
"$bin/flameox" workload approve true >/dev/null
"$bin/flameox" workload approve second >/dev/null
hyperfine -N --warmup 3 --runs 30 --export-markdown true.md \
  "/bin/true" "$bin/flameox capture run process --workload true"
hyperfine -N --warmup 1 --runs 10 --export-markdown second.md \
  "/bin/sleep 1" "$bin/flameox capture run process --workload second"
cat true.md second.md

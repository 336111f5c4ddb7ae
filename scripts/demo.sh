#!/usr/bin/env bash
# The main job, end to end, on the bundled example (contrib/examples/reverse-scan):
# in a temporary copy, create a fresh workspace, declare and approve a Go
# benchmark workload, capture it with the real Go toolchain through the gotest
# adapter (a CPU profile, benchmark samples, test events), publish it, and walk
# from the hottest function to its callers and stacks. The profile perturbs the
# benchmark timings, and the capture says so in its first limitation; a timing
# run would leave `options` out.
# Usage: scripts/demo.sh [BIN_DIR]   (make demo builds the binaries first)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/bin}
flameox="$bin/flameox"
[ -x "$flameox" ] || { echo "demo: $flameox not built; run 'make build'" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-demo.XXXXXX")
echo "demo: working in $work" >&2
cp -R "$here/contrib/examples/reverse-scan/." "$work/"
cd "$work"
cat > flameox.toml <<'TOML'
schema_version = 1

# The example's benchmarks, captured by the gotest adapter with a CPU profile
# (profiles and coverage are off unless a workload asks for them).
[workloads.bench]
argv = ["go", "test", "-run", "^$", "-bench", ".", "-benchtime", "100ms", "-count", "3", "."]
timeout_seconds = 300
env = { GOWORK = "off", GOFLAGS = "-mod=mod" }
options = { profiles = "cpu" }
TOML
git init -q . && git add -A && git -c user.name=demo -c user.email=demo@example.invalid commit -qm example

run() { echo; echo "\$ flameox $*"; "$flameox" "$@"; }
run init
run capabilities
run workload show bench
run workload approve bench
run capture plan gotest --workload bench
run capture run gotest --workload bench
id=$("$flameox" runs list --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
run analyze hotspots "$id" --limit 8 --record
frame=$("$flameox" analyze hotspots "$id" --limit 1 --json | sed -n 's/.*"frame_id": "\([^"]*\)".*/\1/p' | head -n 1)
run stacks callers "$id" "$frame" --limit 5
run stacks examples "$id" "$frame" --limit 1
run measurements query --run "$id" --name-prefix gobench. --limit 6
run status
echo
echo "demo: done; the workspace is $work/.diagnostics" >&2

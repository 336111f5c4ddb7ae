#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a bounded time each.
# Usage: scripts/fuzz-smoke.sh [DURATION]   (default 10s per target)
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-10s}
status=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($budget)" >&2
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$budget" -fuzzminimizetime 2s "$pkg" || status=1
  done
done
exit $status

#!/usr/bin/env bash
# The fuzz campaign (docs/reliability.md): every Go fuzz target in the
# module, one after the other, for DURATION each, keeping going after a
# finding. At the end it prints one line per target, "package target
# executions findings", read from go test's own output (the last
# "execs: N" it reports, "?" when the time ran out before it reported
# one; a finding is a failing input, which go test saved under the
# package's testdata/fuzz/TARGET/; "error" is a target that failed
# without one).
# Usage: scripts/fuzz.sh [DURATION]   (default 5m per target)
set -uo pipefail
cd "$(dirname "$0")/.."
budget=${1:-5m}
status=0
summary=$(mktemp)
log=$(mktemp)
trap 'rm -f "$summary" "$log"' EXIT
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($budget)" >&2
    ok=1
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$budget" "$pkg" 2>&1 | tee "$log" >&2 || ok=0
    # A finding is an input go test saved; a failure without one is the
    # engine's (a worker that missed its deadline on a loaded machine).
    findings=$(grep -c 'Failing input written to' "$log" || true)
    if [ "$ok" = 0 ]; then
      status=1
      if [ "$findings" = 0 ]; then findings="error"; fi
    fi
    # "fuzz: elapsed: 5m0s, execs: 123456 (411/sec), new interesting: ..."
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    printf '%s\t%s\t%s\t%s\n' "$pkg" "$target" "${execs:-?}" "$findings" >>"$summary"
  done
done
echo >&2
printf 'PACKAGE\tTARGET\tEXECUTIONS\tFINDINGS\n' >&2
cat "$summary" >&2
exit $status

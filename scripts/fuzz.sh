#!/usr/bin/env bash
# The fuzz campaign (docs/reliability.md): every Go fuzz target in the
# module for DURATION each, keeping going after a finding. At the end it
# prints one line per target, "package target executions findings", read
# from go test's own output (the last "execs: N" it reports, "?" when the
# time ran out before it reported one; a finding is a failing input,
# which go test saved under the package's testdata/fuzz/TARGET/; "error"
# is a target that failed without one).
#
# FUZZJOBS=N runs N targets at a time, each with nproc/N fuzz workers
# (go test -parallel), so that the CPUs are shared rather than
# oversubscribed: the same executions a second, in 1/N of the wall time
# per target when one worker cannot keep a CPU busy on its own.
# FUZZSKIP="pkg:Target ..." leaves out targets already run (a campaign
# resumed after an interruption). FUZZLOGS=DIR keeps each target's go
# test output as DIR/pkg_Target.log (a temporary directory otherwise).
# FUZZMINIMIZE (default 10s) bounds how long go test minimizes each new
# input (-fuzzminimizetime; go's default is 60s): a worker reports no
# executions while it minimizes, and on a slow target a minute for each
# new input would take most of the campaign's time.
# Usage: scripts/fuzz.sh [DURATION]   (default 5m per target)
set -uo pipefail
cd "$(dirname "$0")/.."
budget=${1:-5m}
jobs=${FUZZJOBS:-1}
skip=" ${FUZZSKIP:-} "
minimize=${FUZZMINIMIZE:-10s}
cpus=$(nproc 2>/dev/null || echo 1)
workers=$(( cpus / jobs ))
if [ "$workers" -lt 1 ]; then workers=1; fi
logs=${FUZZLOGS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$logs" ]; then logs="$tmp/logs"; fi
mkdir -p "$logs"

list="$tmp/targets"
: >"$list"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    rel=${pkg#"$(go list -m)/"}
    case "$skip" in *" $rel:$target "*|*" $pkg:$target "*) continue;; esac
    echo "$pkg $target" >>"$list"
  done
done

# one PKG TARGET: runs the target, writes its summary line to
# $tmp/sum/N (N its place in the list, so that the table keeps go list's
# order whatever the order of completion).
one() {
  local n=$1 pkg=$2 target=$3
  local log="$logs/$(echo "${pkg#*/*/*/}" | tr '/' '_')_$target.log"
  echo "fuzz: start $pkg $target ($budget, $workers worker(s))" >&2
  local ok=1
  go test -run '^$' -fuzz "^${target}\$" -fuzztime "$budget" -fuzzminimizetime "$minimize" -parallel "$workers" "$pkg" >"$log" 2>&1 || ok=0
  # A finding is an input go test saved; a failure without one is the
  # engine's (a worker that missed its deadline on a loaded machine).
  local findings
  findings=$(grep -c 'Failing input written to' "$log" || true)
  if [ "$ok" = 0 ] && [ "$findings" = 0 ]; then findings="error"; fi
  # "fuzz: elapsed: 5m0s, execs: 123456 (411/sec), new interesting: ..."
  local execs
  execs=$(grep -o 'execs: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  printf '%s\t%s\t%s\t%s\n' "$pkg" "$target" "${execs:-?}" "$findings" >"$tmp/sum/$n"
  echo "fuzz: done  $pkg $target: ${execs:-?} executions, findings ${findings}" >&2
  [ "$ok" = 1 ]
}
export -f one
export budget workers logs tmp minimize
mkdir -p "$tmp/sum"

status=0
nl -ba -w1 -s' ' "$list" | xargs -P "$jobs" -L 1 bash -c 'one "$@"' _ || status=1
echo >&2
printf 'PACKAGE\tTARGET\tEXECUTIONS\tFINDINGS\n' >&2
for f in $(ls "$tmp/sum" | sort -n); do cat "$tmp/sum/$f" >&2; done
exit $status

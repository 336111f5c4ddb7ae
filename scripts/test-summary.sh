#!/usr/bin/env bash
# Prints what a test run skipped because this machine lacks a collector,
# tool or fixture set: one line per missing thing and reason, from the
# skip log pkg/internal/testenv appends to ($FLAMEOX_SKIP_LOG; `make test`
# sets it). Under CI=true those tests fail instead of skipping, so a green
# local run with lines here has not run what CI will.
#
#   scripts/test-summary.sh SKIPLOG
set -euo pipefail
log=${1:?usage: test-summary.sh SKIPLOG}
if [ ! -s "$log" ]; then
  echo "test-summary: no collector-backed test was skipped"
  exit 0
fi
echo "test-summary: skipped here, run under CI=true (scripts/install-collectors.sh installs what is missing):"
# what<TAB>why<TAB>test<TAB>dir: count distinct tests per (what, why).
awk -F'\t' '
  NF >= 3 {
    k = $1 " " $2
    if (!((k, $3, $4) in seen)) { seen[k, $3, $4] = 1; n[k]++ }
  }
  END {
    for (k in n) printf "  %s: %d test%s skipped\n", k, n[k], (n[k] == 1 ? "" : "s")
  }' "$log" | LC_ALL=C sort

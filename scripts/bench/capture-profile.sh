#!/usr/bin/env bash
# Where a capture's CPU goes: `perf record -g` of N back-to-back
# `flameox capture run process` runs of /bin/true (default 60) in one
# workspace, then the symbols of flameox's own process by self and by
# inclusive time, the filesystem's mount options, and the inodes one
# capture creates and frees (strace). docs/performance.md's capture
# section quotes it (the ext4-without-journal finding).
# Usage: scripts/bench/capture-profile.sh [BIN_DIR] [N]   (TMPDIR picks the disk)
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
n=${2:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-capprof.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
bench_project "$work" "$bin/flameox" true <<'TOML'
schema_version = 1
[workloads.true]
argv = ["/bin/true"]
timeout_seconds = 10
TOML
cd "$work"
"$bin/flameox" capture run process --workload true >/dev/null 2>&1

echo "## filesystem of $work"
df -T "$work" | tail -n 1
dev=$(df --output=source "$work" | tail -n 1)
if [ -r "/proc/fs/ext4/${dev#/dev/}/options" ]; then
  tr '\n' ' ' < "/proc/fs/ext4/${dev#/dev/}/options"; echo
fi

echo "## inodes one capture creates (mkdir, O_CREAT) and removes (unlink, rename over)"
if command -v strace >/dev/null; then
  strace -f -qq -e trace=mkdirat,openat,unlinkat,renameat,renameat2 -o strace.out \
    "$bin/flameox" capture run process --workload true >/dev/null 2>&1
  grep -c -E 'mkdirat\(.*= 0$|O_CREAT\|O_EXCL.*= [0-9]+$' strace.out | sed 's/^/created: /'
  grep -c -E 'unlinkat\(.*= 0$' strace.out | sed 's/^/unlinked: /'
  grep -c -E 'renameat2?\(.*= 0$' strace.out | sed 's/^/renamed (each may free the old target): /'
else
  echo "strace not installed; skipped"
fi

perf record -q -o perf.data -F 4999 -g -- sh -c \
  "for i in \$(seq $n); do '$bin/flameox' capture run process --workload true >/dev/null 2>&1; done" 2>/dev/null
echo "## flameox's process, self time (top 25)"
perf report -i perf.data --comm flameox --no-children --sort dso,sym --stdio -g none 2>/dev/null \
  | grep '%' | grep -v '^#' | head -n 25 || true # head closes the pipe early
echo "## flameox's process, inclusive (top 40)"
perf report -i perf.data --comm flameox --children --sort sym --stdio -g none 2>/dev/null \
  | grep '%' | grep -v '^#' | head -n 40 || true

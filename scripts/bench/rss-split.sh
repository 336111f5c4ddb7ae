#!/usr/bin/env bash
# The peak RSS of a command split into anonymous and file-backed pages, as
# the process exits (gdb stops it at exit_group and reads
# /proc/PID/status). A large binary's file-backed pages count in the peak
# RSS /usr/bin/time reports: the kernel maps whole page-cache folios of the
# executable on each fault, so a short process that touches a few hundred
# scattered pages of its text shows tens of megabytes of them.
# Usage: scripts/bench/rss-split.sh COMMAND [ARGS...]
set -euo pipefail
script=$(mktemp)
trap 'rm -f "$script"' EXIT
cat > "$script" <<'GDB'
set pagination off
catch syscall exit_group
run
python
import gdb
pid = gdb.selected_inferior().pid
for l in open('/proc/%d/status' % pid):
    if l.startswith(('VmHWM', 'VmRSS', 'RssAnon', 'RssFile')):
        print('rss-split: ' + ' '.join(l.split()))
end
kill
GDB
gdb -q -batch -x "$script" --args "$@" 2>/dev/null | grep '^rss-split:' | sed 's/^rss-split: //'

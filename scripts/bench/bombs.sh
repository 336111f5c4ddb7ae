#!/usr/bin/env bash
# The bomb corpus (pkg/profile/bombtest): wall time and peak RSS of
# `flameox import` on every file, and, for every file that is not refused
# and that pprof reads, of `go tool pprof -top` on the same file, the two
# interleaved; median of RUNS runs (default 3; the refused files, 1 run).
# Each import gets a fresh workspace. Peak RSS is GNU time's %M.
# Usage: scripts/bench/bombs.sh [BIN_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/bin}
runs=${2:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-bombs.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$root" && go run ./scripts/bench/bombs "$work/corpus") > "$work/cases.tsv"
pprof=$(go tool -n pprof)

# measure CMD...: prints "seconds peak_rss_kb exit"
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" && rc=0 || rc=$?
  echo "$(tail -1 "$work/time") $rc"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| file | inflated | outcome | flameox import s | flameox peak RSS MB | pprof -top s | pprof peak RSS MB |\n'
printf '|---|---:|---|---:|---:|---:|---:|\n'
while IFS=$'\t' read -r name want limit inflate format; do
  file=$work/corpus/$name
  n=$runs
  [ "$want" = refused ] && n=1
  : > "$work/fx"; : > "$work/pp"
  outcome=
  for i in $(seq "$n"); do
    rm -rf "$work/ws" && mkdir "$work/ws"
    (cd "$work/ws" && "$bin/flameox" init >/dev/null)
    read -r s kb rc < <(cd "$work/ws" && measure "$bin/flameox" import --json "$file")
    echo "$s $kb" >> "$work/fx"
    outcome=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d.get("error"); print("exit %s: %s %s" % (sys.argv[2], e["code"], e["details"].get("limit_key","")) if e else "exit %s: imported" % sys.argv[2])' "$work/out" "$rc" 2>/dev/null || echo "exit $rc: no JSON")
    if [ "$want" != refused ] && [ "$format" = pprof ]; then
      read -r s kb rc < <(measure "$pprof" -top -symbolize=none "$file")
      echo "$s $kb" >> "$work/pp"
    fi
  done
  fs=$(cut -d' ' -f1 "$work/fx" | median); fm=$(cut -d' ' -f2 "$work/fx" | median)
  ps=-; pm=-
  if [ -s "$work/pp" ]; then
    ps=$(cut -d' ' -f1 "$work/pp" | median); pm=$(( $(cut -d' ' -f2 "$work/pp" | median) / 1024 ))
  fi
  printf '| %s | %s MiB | %s | %s | %s | %s | %s |\n' "$name" $((inflate >> 20)) "$outcome" "$fs" $((fm / 1024)) "$ps" "$pm"
done < "$work/cases.tsv"

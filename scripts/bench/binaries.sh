#!/usr/bin/env bash
# Size and `--help` cold start of every binary, for one or two builds side
# by side (hyperfine, 30 runs each, interleaved by hyperfine's order).
# Usage: scripts/bench/binaries.sh BIN_DIR [OTHER_BIN_DIR]
# (hyperfine runs the first directory's binary first; run it again with the
# directories swapped to see the order's effect.)
set -euo pipefail
dirs=("$@")
[ ${#dirs[@]} -ge 1 ] || { echo "usage: $0 BIN_DIR [OTHER_BIN_DIR]" >&2; exit 2; }
tools="flameox fox-capture fox-publish fox-catalog fox-analyze fox-mcp"
echo "| binary | $(for d in "${dirs[@]}"; do printf '%s size | ' "$d"; done)CGO_ENABLED (each) |"
for t in $tools; do
  row="| $t |"
  for d in "${dirs[@]}"; do row="$row $(awk -v b="$(stat -c %s "$d/$t")" 'BEGIN{printf "%.1f MB", b/1e6}') |"; done
  cgo=""
  for d in "${dirs[@]}"; do
    c=$(go version -m "$d/$t" | awk '$2~/^CGO_ENABLED=/{split($2,a,"=");print a[2]}' | head -1)
    cgo="$cgo${cgo:+ / }${c:-?}"
  done
  echo "$row $cgo |"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-bin.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo
echo "| command | mean [ms] | min [ms] | max [ms] | relative |"
echo "|:---|---:|---:|---:|---:|"
for t in $tools; do
  cmds=()
  for d in "${dirs[@]}"; do cmds+=("$d/$t --help"); done
  # --help of a verb tool prints usage and exits 0; -i keeps hyperfine
  # going if one prints usage with a non-zero status.
  hyperfine -N -i --warmup 3 --runs 30 --export-markdown "$work/$t.md" "${cmds[@]}" >/dev/null 2>&1
  tail -n +3 "$work/$t.md"
done

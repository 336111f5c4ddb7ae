#!/usr/bin/env bash
# Import + hash of a 256 MiB file, side by side with `openssl dgst -sha256`
# on the same file, in interleaved rounds (scripts/bench/rounds.py; page
# cache warm for all): the whole `flameox import` (new run, identity,
# staging, placement, publication) and the staging step alone
# (pkg/artifact's BenchmarkStageImport, one StageImport per process: its
# test binary's start and the removal of the staged copy are included).
# The floor of any store that keeps its own copy is also timed: `cp`
# (coreutils, copy_file_range) alone, and `cp`
# followed by openssl over the copy (copy + hash, one after the other).
# Two imports are timed: the first import of the file into a workspace
# (reset before every command, untimed), and a re-import of bytes the
# store already holds (the workspace the script made and imported into
# once): its size is in the store's size cache, so it is hashed without
# a copy (pkg/artifact, SizesDir); a build before that copied it and
# removed the copy.
# With OLD_BIN=<dir>, that build's flameox runs in the same rounds.
# Usage: scripts/bench/import.sh [BIN_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-import.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
head -c $((256 << 20)) /dev/urandom > big.bin
mkdir dup && (cd dup && "$bin/flameox" init >/dev/null && "$bin/flameox" import ../big.bin >/dev/null)
(cd "$here" && go test -c -o "$work/artifact.test" ./pkg/artifact)
first() { echo "sh -c 'cd $work/first && exec $1/flameox import ../big.bin'"; }
again() { echo "sh -c 'cd $work/dup && exec $1/flameox import ../big.bin'"; }
cmds=("openssl dgst -sha256 big.bin" "$(first "$bin")" "$(again "$bin")")
if [ -n "${OLD_BIN:-}" ]; then cmds+=("$(first "$OLD_BIN")" "$(again "$OLD_BIN")"); fi
cmds+=("env FLAMEOX_STAGE_FILE=$work/big.bin $work/artifact.test -test.run ^$ -test.bench StageImport -test.benchtime 1x")
cmds+=("cp --reflink=never big.bin copy.bin" "sh -c 'cp --reflink=never big.bin copy.bin && openssl dgst -sha256 copy.bin'")
python3 "$here/scripts/bench/rounds.py" --rounds "${ROUNDS:-15}" --setup "rm -rf $work/copy.bin $work/first && mkdir $work/first && cd $work/first && $bin/flameox init >/dev/null" \
  --title "import of 256 MiB" "${cmds[@]}"

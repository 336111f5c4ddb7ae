#!/usr/bin/env bash
# `flameox validate --level full` on a workspace of about 1 GiB (eight
# 128 MiB generated artifacts plus the Parquet files of their
# publications), side by side with `openssl dgst -sha256` over exactly the
# files full validation re-hashes, in one hyperfine run with the page cache
# warm for both (docs/integrity.md, "Measured").
# Usage: scripts/bench/validate.sh [BIN_DIR] [FILES] [MIB_EACH]
set -euo pipefail
bin=${1:-$(cd "$(dirname "$0")/../.." && pwd)/bin}
files=${2:-8}
mib=${3:-128}
work=$(mktemp -d "${TMPDIR:-/tmp}/flameox-bench-validate.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin/flameox" init >/dev/null
for i in $(seq 1 "$files"); do
  head -c $((mib << 20)) /dev/urandom > "blob-$i.bin"
  "$bin/flameox" import --kind collector_metadata "blob-$i.bin" >/dev/null
  rm "blob-$i.bin"
done
# The files full validation re-hashes: every payload and every Parquet
# file of HEAD's generations (here: all of them; nothing was superseded).
find .diagnostics/artifacts -type f -name 'payload*' > hashed.txt
find .diagnostics/evidence -type f -name 'part-*.parquet' >> hashed.txt
echo "workspace: $(wc -l < hashed.txt) files, $(xargs du -cb < hashed.txt | tail -1 | cut -f1) bytes re-hashed, GOMAXPROCS=$(nproc)"
"$bin/flameox" validate --level full
hyperfine -N --warmup 1 --runs "${RUNS:-10}" --export-markdown validate.md \
  "xargs -a hashed.txt openssl dgst -sha256" \
  "$bin/flameox validate --level full" \
  "$bin/flameox validate --level standard" \
  "$bin/flameox validate --level quick"
cat validate.md

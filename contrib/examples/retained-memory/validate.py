"""The oracle: compute the checksum in MODE (cache.py's, or with "c" the
C program's, by running ./cache), print it, and exit 1 unless it is the
expected one. flameox runs it after each trial (without the collector)
and, as a cross-treatment oracle, also compares the printed value with the
baseline's in the same block."""

import subprocess
import sys
import zlib

import cache

mode = sys.argv[1]
if len(sys.argv) > 2 and sys.argv[2] == "c":
    got = int(subprocess.run(["./cache", mode], check=True, capture_output=True, text=True).stdout)
    want = sum((i % 251) * (cache.SIZE // 4096) for i in range(cache.BLOCKS))
else:
    got = cache.checksum(cache.make_render(cache.CACHE_SIZE[mode]))
    want = 0
    for i in range(cache.BLOCKS):
        want = zlib.crc32(bytes([i % 251]) * cache.SIZE, want)
print(got)
if got != want:
    print(f"{mode}: checksum {got} != {want}", file=sys.stderr)
    sys.exit(1)

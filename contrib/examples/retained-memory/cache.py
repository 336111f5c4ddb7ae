"""A memoised checksum whose cache is too big: golden (c).

    python3 cache.py MODE

Both modes print the CRC-32 of 128 blocks of 64 KiB, each built by
render(i) and memoised with functools.lru_cache. baseline bounds the cache
at 16 entries; candidate at 128, so every block stays alive until the
program exits: 8 MiB retained instead of 1 MiB, for the same checksum
(validate.py checks it).
"""

import functools
import sys
import zlib

BLOCKS = 128
SIZE = 64 * 1024
CACHE_SIZE = {"baseline": 16, "candidate": 128}


def make_render(maxsize):
    @functools.lru_cache(maxsize=maxsize)
    def render(i):
        return bytes([i % 251]) * SIZE

    return render


def checksum(render):
    total = 0
    for i in range(BLOCKS):
        total = zlib.crc32(render(i), total)
    return total


if __name__ == "__main__":
    render = make_render(CACHE_SIZE[sys.argv[1]])
    print(checksum(render))

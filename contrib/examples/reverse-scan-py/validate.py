"""The oracle: run the scan in MODE at LENGTH, print its total, and exit 1
unless it is n(n-1)/2. flameox runs it after each trial (without pyperf)
and, as a cross-treatment oracle, also compares the printed total with the
baseline's in the same block."""

import sys

import scan

mode, length = sys.argv[1], int(sys.argv[2])
total = scan.scan(mode, length)
print(total)
if total != length * (length - 1) // 2:
    print(f"{mode}: total {total} != {length * (length - 1) // 2}", file=sys.stderr)
    sys.exit(1)

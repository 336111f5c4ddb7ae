"""The reverse scan: sum 0..n-1 REPEAT times, three ways.

    python3 scan.py MODE LENGTH

baseline walks the sequence backwards element by element (a Python loop:
linear in LENGTH), candidate uses the built-in sum(), broken returns a
wrong total (the last element is dropped). It prints the total, which
validate.py checks.
"""

import sys

REPEAT = 20


def baseline(seq):
    total = 0
    i = len(seq) - 1
    while i >= 0:
        total += seq[i]
        i -= 1
    return total


def candidate(seq):
    return sum(seq)


def broken(seq):
    return sum(seq[:-1])


def scan(mode, length):
    fn = {"baseline": baseline, "candidate": candidate, "broken": broken}[mode]
    seq = list(range(length))
    total = 0
    for _ in range(REPEAT):
        total = fn(seq)
    return total


if __name__ == "__main__":
    print(scan(sys.argv[1], int(sys.argv[2])))

"""The oracle: train in MODE, print the weight, exit 1 unless it is 3.000.
Both modes pass: the typo changes how the model trains, not what this
check sees. flameox runs it after each capture (without the profiler)."""

import sys

import train

w = f"{train.train(sys.argv[1]):.3f}"
print(w)
if w != "3.000":
    print(f"weight {w} != 3.000", file=sys.stderr)
    sys.exit(1)

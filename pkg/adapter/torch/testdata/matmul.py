"""A tiny CPU workload for the torch adapter's tests: a few matmuls and
relus over 3 steps (marked with flameox_torch.step()), then a check of
the result."""
import sys

import torch

try:
    from flameox_torch import step
except ImportError:  # run without the launcher

    def step():
        pass


torch.manual_seed(0)
x = torch.randn(32, 48)
w1 = torch.randn(48, 64)
w2 = torch.randn(64, 16)
for _ in range(3):
    step()
    h = torch.relu(x @ w1)
    y = torch.relu(h @ w2)
    x = torch.cat([y, y, y], dim=1)
if x.shape != (32, 48):
    sys.exit("unexpected shape %r" % (x.shape,))
print("steps: 3, out", tuple(x.shape))

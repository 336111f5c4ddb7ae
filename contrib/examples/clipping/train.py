"""Gradient descent with gradient clipping, and a configuration typo: golden (b).

    python3 train.py MODE

Both modes fit w in y = 3x by gradient descent and print the fitted
weight to three places. The training configuration asks for gradient
clipping; good reads its norm from CONFIG["clip_grad_norm"], bad from the
misspelt key "clip_grad_nrom": it gets None and silently trains without
clipping. On this well-behaved problem both converge to the same weight,
so the output (and the oracle, validate.py) cannot tell them apart, and
their CPU profiles have the same shape. What differs is what the program
records with flameox_observe (copy contrib/python/flameox_observe.py
next to this file): observe("policy", clipping_enabled=...).

It trains for a second or two: py-spy gives up attaching after about
twenty tries, and a program that ends while a loaded machine keeps py-spy
waiting would leave no profile.
"""

import sys

from flameox_observe import observe, phase

CONFIG = {"lr": 0.01, "steps": 600_000, "clip_grad_norm": 1.0}
DATA = [(x / 10, 3 * x / 10) for x in range(1, 11)]


def gradient(w):
    return sum(2 * (w * x - y) * x for x, y in DATA) / len(DATA)


def step(w, lr, max_norm):
    g = gradient(w)
    if max_norm is not None and abs(g) > max_norm:
        g = max_norm if g > 0 else -max_norm
    return w - lr * g


def train(mode):
    key = "clip_grad_norm" if mode == "good" else "clip_grad_nrom"
    max_norm = CONFIG.get(key)
    w = 0.0
    with phase("train"):
        observe("policy", clipping_enabled=max_norm is not None, max_norm=max_norm)
        for _ in range(CONFIG["steps"] // 1000):
            for _ in range(1000):
                w = step(w, CONFIG["lr"], max_norm)
    return w


if __name__ == "__main__":
    print(f"{train(sys.argv[1]):.3f}")

import time


def burn():
    t = time.perf_counter()
    x = 0
    while time.perf_counter() - t < 0.5:
        x += 1
    return x


def cold():
    return sum(range(1000))


burn()
cold()

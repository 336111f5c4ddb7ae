"""A tiny module with branches, measured by tests with contexts."""


def classify(n):
    if n < 0:
        return "negative"
    elif n == 0:
        return "zero"
    return "positive"


def total(xs):
    s = 0
    for x in xs:
        if x > 10:
            continue
        s += x
    return s


def never():
    return "never called"

import shapes


def test_negative():
    assert shapes.classify(-1) == "negative"


def test_positive():
    assert shapes.classify(3) == "positive"
    assert shapes.total([1, 20, 3]) == 4


if __name__ == "__main__":
    test_negative()
    test_positive()

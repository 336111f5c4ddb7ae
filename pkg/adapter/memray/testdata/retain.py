# The captures in retain.bin, `python3 -m memray run -o retain.bin
# retain.py` (memray 1.20.0), and aggregated.bin, the same with
# --aggregate. It keeps 512 KiB alive until exit (retained), and
# allocates and frees 1 MB in temporaries along the way.
keep = []


def retain(n):
    for _ in range(n):
        keep.append(bytearray(1024))


def churn():
    for _ in range(100):
        x = bytearray(10000)
        del x


retain(512)
churn()

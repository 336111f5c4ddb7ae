# snapshot_cost.py CAPTURE...: the CPU time (time.process_time, median of
# 15) of the memory-snapshot pass flameox's driver adds (memray.FileReader
# and the time_ms,rss,heap file) beside memray's three reporters run in the
# same interpreter, once Python and memray are imported
# (docs/performance.md).
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time

import memray
from memray.commands import main

out = tempfile.mkdtemp()


def snapshots(path):
    with memray.FileReader(path, max_memory_records=4 << 20) as r, open(os.path.join(out, "s.csv"), "w") as f:
        f.write("time_ms,rss,heap\n")
        for s in r.get_memory_snapshots():
            f.write("%d,%d,%d\n" % (s.time, s.rss, s.heap))


def reporters(path):
    for args in (
        ["stats", "--json", "-n", "10", "-o", os.path.join(out, "x.json"), "-f", path],
        ["transform", "csv", "-o", os.path.join(out, "x.csv"), "-f", path],
        ["transform", "csv", "-o", os.path.join(out, "y.csv"), "-f", "--leaks", path],
    ):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(args)


for path in sys.argv[1:]:
    a, b = [], []
    for _ in range(15):
        t = time.process_time()
        snapshots(path)
        a.append(time.process_time() - t)
        t = time.process_time()
        reporters(path)
        b.append(time.process_time() - t)
    with memray.FileReader(path, max_memory_records=4 << 20) as r:
        n = sum(1 for _ in r.get_memory_snapshots())
    print("%s: %d snapshots, snapshot pass %.1f ms, reporters %.1f ms" % (os.path.basename(path), n, 1000 * statistics.median(a), 1000 * statistics.median(b)))

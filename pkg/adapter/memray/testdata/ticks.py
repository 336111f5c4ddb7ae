# ticks.py OUT SECONDS: a capture with more memory snapshots than flameox
# keeps, in a few seconds: memray.Tracker samples every millisecond here
# (memray run's default is every 10 ms) while the heap climbs for SECONDS,
# then it peaks once and falls.
import sys
import time

import memray

held = []
with memray.Tracker(sys.argv[1], memory_interval_ms=1):
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        held.append(bytearray(2048))
        time.sleep(0.0005)
    peak = bytearray(4 << 20)
    time.sleep(0.01)
    del peak
    del held[: len(held) // 2]
    time.sleep(0.2)

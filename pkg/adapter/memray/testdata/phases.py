# phases.py grows its heap in four phases of 2 MiB each, holds the peak,
# then frees it all: memray's snapshots see the steps.
import time

held = []
for phase in range(4):
    for _ in range(8):
        held.append(bytearray(256 << 10))
    time.sleep(0.05)
time.sleep(0.1)
del held
time.sleep(0.05)

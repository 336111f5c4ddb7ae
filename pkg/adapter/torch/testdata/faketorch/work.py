import os
import sys

print("argv", sys.argv)
print("path0", sys.path[0])
mode = sys.argv[1] if len(sys.argv) > 1 else ""
if os.environ.get("WORK_OBSERVES"):
    from flameox_observe import observe
    observe("work", mode=mode)
if mode == "steps":
    import flameox_torch
    for i in range(3):
        flameox_torch.step()
if mode == "raise":
    raise ValueError("boom")
if mode == "exit7":
    sys.exit(7)
if mode == "exitmsg":
    sys.exit("a message")

"""A stand-in for torch with only what flameox_torch.py calls, so that the
launcher's control flow (exit status, exceptions, the sidecar, the
observations) is tested where torch is not installed. The live test runs
the real torch."""
from . import cuda, profiler, version

__version__ = "0.0.0+fake"

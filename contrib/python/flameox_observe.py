"""flameox observations: facts a profiler cannot see.

Copy this one file into a project (it needs nothing but the standard
library) and call it where a fact is decided:

    from flameox_observe import observe, phase

    with phase("train"):
        observe("policy", clipping_enabled=False, max_norm=1.0)

Under `flameox capture run`, the capture sets FLAMEOX_OBSERVATIONS to a
file in its output directory; each call appends one JSON line there, and
the capture registers the file as semantic observations, which
`flameox analyze execution` reads. Outside a capture (the variable
unset) every call does nothing, so the calls can stay in the code.

observe(name, /, **values) records name.KEY = value for each keyword (a
bare observe(name) records name = true); values must be JSON values
(str, int, float, bool, None, lists and dicts of them); anything else is
recorded as its repr(). phase(name) records the time spent inside it and
marks the observations made inside (nested phases join with "/").
"""

import contextlib
import json
import os
import threading
import time

__all__ = ["observe", "phase"]

FORMAT = 1
_ENV = "FLAMEOX_OBSERVATIONS"
_lock = threading.Lock()
_local = threading.local()
_state = {"path": None, "file": None, "pid": None}


def _out():
    path = os.environ.get(_ENV)
    if not path:
        return None
    pid = os.getpid()
    if _state["file"] is None or _state["path"] != path or _state["pid"] != pid:
        f = open(path, "a", encoding="utf-8")
        _state.update(path=path, file=f, pid=pid)
        f.write(json.dumps({"flameox_observations": FORMAT, "language": "python", "pid": pid}) + "\n")
        f.flush()
    return _state["file"]


def _write(event):
    with _lock:
        f = _out()
        if f is None:
            return
        f.write(json.dumps(event, default=repr, sort_keys=True) + "\n")
        f.flush()


def _phase_path():
    return "/".join(getattr(_local, "phases", []))


def observe(name, /, **values):
    """Record name.KEY = value for each keyword, inside the current phase."""
    if not os.environ.get(_ENV):
        return
    _write({"t": "observe", "name": str(name), "values": values or {"": True},
            "phase": _phase_path(), "ts_ns": time.monotonic_ns()})


@contextlib.contextmanager
def phase(name):
    """Time the block as phase NAME; observations inside carry it."""
    stack = getattr(_local, "phases", None)
    if stack is None:
        stack = _local.phases = []
    stack.append(str(name))
    start = time.monotonic_ns()
    try:
        yield
    finally:
        path = _phase_path()
        stack.pop()
        if os.environ.get(_ENV):
            _write({"t": "phase", "name": path, "start_ns": start, "duration_ns": time.monotonic_ns() - start})

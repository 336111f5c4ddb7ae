"""flameox torch launcher: run a Python program under torch.profiler.

    python flameox_torch.py --out trace.json [--activities cpu,cuda]
        [--record-shapes] [--profile-memory] [--with-stack]
        [--sidecar torch-profile.json] -- SCRIPT [ARGS...]

SCRIPT may also be `-m MODULE` or `-c CODE`, as after `python`. The
program runs in this process (runpy) inside torch.profiler.profile with
the activities and flags given; the Chrome trace is then written with
export_chrome_trace (gzip when OUT ends in .gz), also when the program
raised. The exit status is the program's: sys.exit(N) exits N, an
exception prints its traceback and exits 1.

What was actually recorded (the torch version, the activities asked for
and used, the flags, the CUDA devices) goes to the JSON sidecar and, when
FLAMEOX_OBSERVATIONS is set (a flameox capture sets it), to that file as
SDK observations named torch.profiler.* (the format of
flameox_observe.py, imported from beside this file when it is there).

Steps: torch.profiler marks steps (ProfilerStep#N) only under a
schedule, which this launcher does not use. A program that calls
flameox_torch.step() at the start of each step (of training, say) gets
the same ranges in its trace; the call does nothing when the program
runs without the launcher (keep a copy of this file beside it, or guard
the import).

`flameox capture run` with the torch adapter runs this file (the binary
carries a copy and writes it into the capture's output directory); it
needs only the standard library and torch.
"""

import argparse
import json
import os
import runpy
import sys
import time
import traceback

FORMAT = 1
_OBS_ENV = "FLAMEOX_OBSERVATIONS"
_ACTIVITIES = ("cpu", "cuda")


_steps = {"active": False, "n": 0, "range": None}


def step():
    """Start the next step: under the launcher the trace gets a
    ProfilerStep#N range up to the next call (or the end); otherwise this
    does nothing."""
    if not _steps["active"]:
        return
    _end_step()
    import torch
    r = torch.profiler.record_function("ProfilerStep#%d" % _steps["n"])
    r.__enter__()
    _steps["range"], _steps["n"] = r, _steps["n"] + 1


def _end_step():
    r, _steps["range"] = _steps["range"], None
    if r is not None:
        r.__exit__(None, None, None)


def _parse(argv):
    p = argparse.ArgumentParser(prog="flameox_torch", description="Run a Python program under torch.profiler and export its Chrome trace.")
    p.add_argument("--out", required=True, help="Chrome trace to write (.json, or .json.gz for gzip)")
    p.add_argument("--sidecar", default="", help="JSON file saying what was recorded (default: OUT's directory, torch-profile.json)")
    p.add_argument("--activities", default="cpu", help="comma-separated: cpu, cuda (default cpu)")
    p.add_argument("--record-shapes", action="store_true")
    p.add_argument("--profile-memory", action="store_true")
    p.add_argument("--with-stack", action="store_true")
    if "--" not in argv:
        p.error("the program follows --: flameox_torch.py --out FILE -- SCRIPT [ARGS...]")
    i = argv.index("--")
    args = p.parse_args(argv[:i])
    prog = argv[i + 1:]
    if not prog or (prog[0] in ("-m", "-c") and len(prog) < 2) or (prog[0].startswith("-") and prog[0] not in ("-m", "-c")):
        p.error("after -- comes SCRIPT, -m MODULE or -c CODE, then its arguments")
    wanted = [a.strip() for a in args.activities.split(",") if a.strip()]
    for a in wanted:
        if a not in _ACTIVITIES:
            p.error("unknown activity %r: want cpu or cuda" % a)
    if not wanted:
        p.error("--activities names no activity")
    args.activities = sorted(set(wanted), key=_ACTIVITIES.index)
    if not args.sidecar:
        args.sidecar = os.path.join(os.path.dirname(os.path.abspath(args.out)), "torch-profile.json")
    return args, prog


def _observer():
    """The SDK's observe() (flameox_observe.py) when the program imported
    it or it sits beside this file, else None: _write_observations then
    writes the same lines itself."""
    mod = sys.modules.get("flameox_observe")
    if mod is None:
        here = globals().get("__file__")
        if here and os.path.exists(os.path.join(os.path.dirname(os.path.abspath(here)), "flameox_observe.py")):
            sys.path.insert(0, os.path.dirname(os.path.abspath(here)))
            try:
                import flameox_observe as mod
            except Exception:
                mod = None
            finally:
                sys.path.pop(0)
    return getattr(mod, "observe", None)


def _write_observations(values):
    path = os.environ.get(_OBS_ENV)
    if not path:
        return
    observe = _observer()
    if observe is not None:
        observe("torch.profiler", **values)
        return
    # The lines flameox_observe.py writes: a header naming the process,
    # then one event (pkg/adapter/observe reads them).
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"flameox_observations": 1, "language": "python", "pid": os.getpid()}) + "\n")
        f.write(json.dumps({"t": "observe", "name": "torch.profiler", "values": values, "phase": "",
                            "ts_ns": time.monotonic_ns()}, default=repr, sort_keys=True) + "\n")


def _run(prog):
    """Run the program as `python PROG...` would, as __main__: sys.argv
    and sys.path[0] (this file's directory, or "" under -c) are what that
    command gives the program."""
    if prog[0] == "-m":
        sys.argv = [prog[1]] + prog[2:]
        sys.path[0] = os.getcwd()
        runpy.run_module(prog[1], run_name="__main__", alter_sys=True)
    elif prog[0] == "-c":
        sys.argv = ["-c"] + prog[2:]
        sys.path[0] = ""
        code = compile(prog[1], "<string>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        script = prog[0]
        sys.argv = list(prog)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        runpy.run_path(script, run_name="__main__")


def _program_tb(tb):
    """The traceback from the program's first frame on, as `python SCRIPT`
    prints it: this file's and runpy's frames left out."""
    here = os.path.abspath(globals().get("__file__") or "")
    t = tb
    while t is not None:
        f = t.tb_frame.f_code.co_filename
        if os.path.abspath(f) != here and os.path.basename(f) not in ("runpy.py", "<frozen runpy>"):
            return t
        t = t.tb_next
    return tb


def _exit_code(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main(argv):
    args, prog = _parse(argv)
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError as e:
        print("flameox_torch: %s cannot import torch.profiler (%s): install torch for this interpreter" % (sys.executable, e), file=sys.stderr)
        return 1

    limitations = []
    cuda_available = bool(torch.cuda.is_available())
    used = []
    for a in args.activities:
        if a == "cuda" and not cuda_available:
            limitations.append("cuda was asked for but torch.cuda.is_available() is false: no device activity was recorded")
            print("flameox_torch: cuda was asked for but torch.cuda.is_available() is false; profiling the CPU only", file=sys.stderr)
            continue
        used.append(a)
    if not used:
        used = ["cpu"]
        limitations.append("no asked-for activity was available: the CPU was profiled")
    kinds = {"cpu": ProfilerActivity.CPU, "cuda": ProfilerActivity.CUDA}
    devices = []
    if "cuda" in used:
        devices = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]

    # `import flameox_torch` in the program is this module, whose step()
    # marks steps in this profile.
    sys.modules.setdefault("flameox_torch", sys.modules[__name__])
    status, error, caught = 0, None, None
    started = time.time_ns()
    with profile(activities=[kinds[a] for a in used], record_shapes=args.record_shapes,
                 profile_memory=args.profile_memory, with_stack=args.with_stack) as prof:
        _steps["active"] = True
        try:
            _run(prog)
        except SystemExit as e:
            status = _exit_code(e)
        except BaseException as e:  # the trace is exported first, then it is raised again
            caught, status, error = e, 1, type(e).__name__
        finally:
            _end_step()
            _steps["active"] = False
    ended = time.time_ns()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
    exported, export_error = True, None
    try:
        prof.export_chrome_trace(args.out)
    except Exception as e:
        exported, export_error = False, "%s: %s" % (type(e).__name__, e)
        print("flameox_torch: export_chrome_trace failed: " + export_error, file=sys.stderr)

    recorded = {
        "torch_version": torch.__version__,
        "activities_requested": args.activities,
        "activities_used": used,
        "record_shapes": args.record_shapes,
        "profile_memory": args.profile_memory,
        "with_stack": args.with_stack,
        "cuda_available": cuda_available,
        "cuda_devices": devices,
    }
    sidecar = dict(recorded)
    sidecar.update({
        "flameox_torch": FORMAT,
        "python_version": sys.version.split()[0],
        "cuda_version": torch.version.cuda,
        "program": prog,
        "trace": os.path.basename(args.out),
        "trace_exported": exported,
        "export_error": export_error,
        "exit_status": status,
        "exception": error,
        "steps": _steps["n"],
        "profiled_ns": ended - started,
        "limitations": limitations,
    })
    with open(args.sidecar, "w", encoding="utf-8") as f:
        json.dump(sidecar, f, indent=1, sort_keys=True)
        f.write("\n")
    _write_observations(recorded)

    if caught is not None:
        if isinstance(caught, KeyboardInterrupt):
            raise caught
        traceback.print_exception(type(caught), caught, _program_tb(caught.__traceback__))
        return 1
    if status == 0 and not exported:
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

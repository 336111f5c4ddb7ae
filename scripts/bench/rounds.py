#!/usr/bin/env python3
"""Interleaved timing rounds, the bench scripts' timing loop (no hyperfine).

Usage: rounds.py [--rounds N] [--warmup W] [--title T] [--setup CMD] CMD0 CMD1 ...

Every round runs each command once, in order, so a shared machine's drift in
speed hits every command alike; CMD0 is the baseline. Per command it prints
the median wall time, the median CPU time (user+sys of the process and the
children it waited for, from wait4), the medians of the per-round ratios to
CMD0 of both, the largest peak RSS (ru_maxrss) and the load average before
and after. On a machine shared with other jobs the CPU ratio is the steadier
figure; wall time is what a user waits. --setup runs (untimed) before every
command, e.g. to reset a workspace. Commands are shell-split, run without a
shell (use `sh -c '...'` for pipelines), stdout and stderr discarded; a
failing command stops the run.
"""
import argparse, os, shlex, statistics, subprocess, sys, time


def run(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"rounds.py: {shlex.join(cmd)} exited {p.returncode}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--title", default="")
    ap.add_argument("--setup", default="")
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    cmds = [shlex.split(c) for c in a.cmds]
    wall = [[] for _ in cmds]
    cpu = [[] for _ in cmds]
    rss = [0 for _ in cmds]
    load0 = os.getloadavg()
    for r in range(a.warmup + a.rounds):
        for i, c in enumerate(cmds):
            if a.setup:
                subprocess.run(a.setup, shell=True, check=True, stdout=subprocess.DEVNULL)
            w, u, m = run(c)
            if r >= a.warmup:
                wall[i].append(w)
                cpu[i].append(u)
                rss[i] = max(rss[i], m)
    load1 = os.getloadavg()
    med = statistics.median
    print(f"## {a.title} ({a.rounds} interleaved rounds; load average {load0[0]:.2f} before, {load1[0]:.2f} after)")
    print("| command | wall median | wall ratio | CPU median | CPU ratio | peak RSS |")
    print("|---|---|---|---|---|---|")
    for i, c in enumerate(a.cmds):
        wr = med(w / b for w, b in zip(wall[i], wall[0]))
        cr = med(u / b if b > 0 else 0 for u, b in zip(cpu[i], cpu[0]))
        print(f"| `{c}` | {med(wall[i])*1e3:.1f} ms | {wr:.3f} | {med(cpu[i])*1e3:.1f} ms | {cr:.3f} | {rss[i]/1024:.0f} MB |")
    print()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The per-fixture table of docs/performance.md (scripts/bench/fixtures-table.sh).

Usage: fixtures_table.py FLAMEOX WORKDIR FIXTURES_DIR ROUNDS

For every pprof, perf-script and speedscope fixture: the peer a user would
run on the file (`go tool pprof -top` for pprof; FlameGraph's
stackcollapse-perf.pl for perf script text; for speedscope JSON, which only
the browser viewer reads, Python's json.load as a floor), flameox's first
look (init + import + hotspots in a fresh workspace) and its repeat
hotspots on the published run, in interleaved rounds (rounds.py's loop),
with the medians of the per-round ratios to the peer, wall and CPU.
"""
import glob, os, re, shlex, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rounds import run  # noqa: E402

flameox, work, fixtures, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
collapse = os.environ.get("STACKCOLLAPSE", "stackcollapse-perf.pl")


def peer(kind, path):
    if kind == "pprof":
        return ["go", "tool", "pprof", "-top", path], "go tool pprof -top"
    if kind == "perf-script":
        cat = "zcat" if path.endswith(".gz") else "cat"
        return ["sh", "-c", f"{cat} {shlex.quote(path)} | perl {shlex.quote(collapse)} >/dev/null"], "stackcollapse-perf.pl"
    return ["python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", path], "python3 json.load"


def first_script(name, path):
    d = os.path.join(work, name)
    s = os.path.join(work, name + ".sh")
    with open(s, "w") as f:
        f.write(f"""#!/bin/sh
set -e
rm -rf {d} && mkdir {d} && cd {d}
{flameox} init >/dev/null
run=$({flameox} import {shlex.quote(path)} --json | sed -n 's/.*"run_id": "\\([^"]*\\)".*/\\1/p' | head -n 1)
{flameox} analyze hotspots "$run" --limit 10 --json >/dev/null
echo "$run"
""")
    os.chmod(s, 0o755)
    return s, d


rows = []
load0 = os.getloadavg()
for kind in ("pprof", "perf-script", "speedscope"):
    for path in sorted(glob.glob(os.path.join(fixtures, kind, "*"))):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(path))
        script, d = first_script(name, path)
        runid = subprocess.run([script], check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        pub = d + ".published"
        subprocess.run(["rm", "-rf", pub], check=True)
        subprocess.run(["cp", "-r", d, pub], check=True)
        pcmd, pname = peer(kind, path)
        cmds = [pcmd, [script], [flameox, "--workspace", os.path.join(pub, ".diagnostics"), "analyze", "hotspots", runid, "--limit", "10", "--json"]]
        wall = [[] for _ in cmds]
        cpu = [[] for _ in cmds]
        rss = [0 for _ in cmds]
        for r in range(1 + rounds):
            for i, c in enumerate(cmds):
                w, u, m = run(c)
                if r >= 1:
                    wall[i].append(w)
                    cpu[i].append(u)
                    rss[i] = max(rss[i], m)
        med = statistics.median
        ratio = lambda xs, base: med(x / b for x, b in zip(xs, base))
        rows.append((kind, os.path.basename(path), os.path.getsize(path), pname, med(wall[0]), rss[0],
                     med(wall[1]), ratio(wall[1], wall[0]), ratio(cpu[1], cpu[0]),
                     med(wall[2]), ratio(wall[2], wall[0]), ratio(cpu[2], cpu[0]), rss[2]))
load1 = os.getloadavg()
print(f"{rounds} interleaved rounds per fixture; load average {load0[0]:.2f} before, {load1[0]:.2f} after.\n")
print("| fixture | bytes | peer | peer | first: init + import + hotspots | ratio wall / CPU | repeat hotspots | ratio wall / CPU | peak RSS peer / repeat |")
print("|---|---|---|---|---|---|---|---|---|")
for k, n, size, pname, pw, prss, fw, fr, fc, rw, rr, rc, rrss in rows:
    print(f"| {k}/{n} | {size:,} | {pname} | {pw*1e3:.0f} ms | {fw*1e3:.0f} ms | {fr:.2f} / {fc:.2f} | {rw*1e3:.1f} ms | {rr:.3f} / {rc:.3f} | {prss/1024:.0f} / {rrss/1024:.0f} MB |")

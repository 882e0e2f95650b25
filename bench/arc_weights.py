#!/usr/bin/env python3
"""arc_weights.py: how the port's speed-up over CPython depends on a solver's weight. Issue 5's target (a
solver call 200x faster than the CPython DSL) quotes the reference's own solvers at about 5.4 ms a call;
the solvers in tests/arc/solvers/ average well under a tenth of that in CPython, and a light call is
dominated by costs every call pays (reading the grid, the interpreter). This script times every solver
alone on both sides, one thread, in the same minutes: bench/arc_peer.py --per-task 1 (the spec's Python
model under this CPython, best of R passes per solver, run before and after the port, the faster kept) and `tandem arc run --only TASK --threads 1
--repeat N` (best of P runs), then prints each solver's figures sorted by its CPython time, and the
speed-up of the solvers from each weight up (total CPython time over total port time, per pass).

usage: bench/arc_weights.py [--tandem build/tandem] [--solvers tests/arc/solvers/training.py]
                            [--data ../shared/data/arc/training] [--repeat 5] [--calls 20000] [--passes 3]
                            [--fresh-inputs] [--against OTHER]

--against OTHER times a second build of tandem too, its runs alternated with --tandem's solver by solver
(the VM's speed drifts over minutes; a whole pass of one build, then of the other, moved ratios by 5 %),
and prints both builds' figures against the same CPython times.
"""
import argparse
import json
import re
import subprocess
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--tandem", default="build/tandem")
ap.add_argument("--solvers", default="tests/arc/solvers/training.py")
ap.add_argument("--data", default="../shared/data/arc/training")
ap.add_argument("--repeat", type=int, default=5, help="CPython passes per solver (best taken)")
ap.add_argument("--calls", type=int, default=20000, help="port calls per run of one solver (about)")
ap.add_argument("--passes", type=int, default=3, help="port runs per solver (best taken)")
ap.add_argument("--against", help="another tandem binary, timed alternately with --tandem")
ap.add_argument("--fresh-inputs", action="store_true",
                help="the port makes each call's input grid in the call (tandem arc run --fresh-inputs); by default "
                     "it makes them once before its passes, as arc_peer.py makes its tuples before timing")
a = ap.parse_args()



def python_pass():
    out = subprocess.run([sys.executable, "bench/arc_peer.py", "--solvers", a.solvers, "--data", a.data, "--repeat",
                          str(a.repeat), "--per-task", "1"], capture_output=True, text=True)
    if out.returncode:
        sys.exit("arc_peer.py failed:\n" + out.stdout + out.stderr)
    return {t["task"]: t for t in (json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{"))}


def port_us(binary, task, rep):
    r = subprocess.run([binary, "arc", "run", a.solvers, "--data", a.data, "--only", task, "--quiet", "--threads", "1",
                        "--repeat", str(rep)] + (["--fresh-inputs"] if a.fresh_inputs else []),
                       capture_output=True, text=True)
    m = re.search(r"(\d+) solver calls in [0-9.]+ s: (\d+) calls per second", r.stdout + r.stderr)
    if r.returncode or not m:
        sys.exit("tandem failed on %s:\n%s%s" % (task, r.stdout, r.stderr))
    return 1e6 / int(m.group(2))


# CPython before and after the port's runs (the VM's speed drifts over minutes): the faster of the two.
builds = [a.tandem] + ([a.against] if a.against else [])
py = python_pass()
rows = []
for t in py.values():
    rep = max(1, a.calls // t["calls"])
    best = [None] * len(builds)
    for _ in range(a.passes):
        for b, binary in enumerate(builds):
            us = port_us(binary, t["task"], rep)
            best[b] = us if best[b] is None or us < best[b] else best[b]
    rows.append([t["us"], best, t["calls"], t["task"]])
after = python_pass()
for r in rows:
    r[0] = min(r[0], after[r[3]]["us"])
rows.sort(reverse=True)
names = ["tandem"] + (["against"] if a.against else [])
if a.against:
    print("tandem: %s; against: %s" % (a.tandem, a.against))
print("%-10s %6s %14s" % ("task", "calls", "CPython us") + "".join(" %14s %9s" % (n + " us", "ratio") for n in names))
for p_us, t_us, calls, task in rows:
    print("%-10s %6d %14.1f" % (task, calls, p_us) + "".join(" %14.3f %8.0fx" % (u, p_us / u) for u in t_us))
for b, n in enumerate(names):
    print("\n%s: solvers from a CPython weight up (calls weighted: total CPython time / total tandem time, per pass)" % n)
    for floor in (1000, 300, 100, 30, 0):
        sel = [r for r in rows if r[0] >= floor]
        if not sel:
            continue
        ps = sum(r[0] * r[2] for r in sel)
        ts = sum(r[1][b] * r[2] for r in sel)
        calls = sum(r[2] for r in sel)
        print("  CPython >= %5d us a call: %2d solvers, %4d calls, CPython %8.1f us, tandem %6.3f us a call: %6.0fx"
              % (floor, len(sel), calls, ps / calls, ts / calls, ps / ts))

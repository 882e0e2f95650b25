#!/usr/bin/env python3
"""Peer for bench_arc: times objects() of the Python model of the spec (tests/oracle/arc_model.py, the same
algorithm as the reference DSL's objects(), run by this CPython) on the grids bench_arc dumped.

usage: bench/arc_peer.py GRIDS.jsonl   (from: build/bench/bench_arc 200 GRIDS.jsonl, or any JSON-lines
       file of grids: the 10x10 and 30x30 ones are timed)
       bench/arc_peer.py --solvers PROGRAMS.py --data DIR [--repeat R] [--per-task 1]
       (solver calls: every solver of PROGRAMS.py on every train and test pair of its task in DIR, run by
       this CPython over the model's primitives; each output is checked against the task's, and the time
       per call is the best of R passes; `tandem arc run PROGRAMS --data DIR --quiet --repeat R --threads 1`
       is the same work for the port, bench/run-arc-solvers.sh runs both. With --per-task 1, also one
       JSON line per solver, {"task": ID, "calls": N, "us": best microseconds per call of its own R
       passes}, for bench/arc_weights.py)
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import arc_model  # noqa: E402

# The spec's constants (section 2), the names solver programs use as arguments.
CONSTANTS = dict(F=False, T=True, ZERO=0, ONE=1, TWO=2, THREE=3, FOUR=4, FIVE=5, SIX=6, SEVEN=7, EIGHT=8,
                 NINE=9, TEN=10, NEG_ONE=-1, NEG_TWO=-2, DOWN=(1, 0), RIGHT=(0, 1), UP=(-1, 0), LEFT=(0, -1),
                 ORIGIN=(0, 0), UNITY=(1, 1), NEG_UNITY=(-1, -1), UP_RIGHT=(-1, 1), DOWN_LEFT=(1, -1),
                 ZERO_BY_TWO=(0, 2), TWO_BY_ZERO=(2, 0), TWO_BY_TWO=(2, 2), THREE_BY_THREE=(3, 3))


def best_pass(work, repeat):
    """The fastest of repeat passes over the calls in work, in seconds (a failing call counts as run)."""
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _, _, _, fn, grid, _ in work:
            try:
                fn(grid)
            except Exception:
                pass
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    return best


def solver_calls(programs, data, repeat, per_task=False):
    env = {k: getattr(arc_model, k) for k in dir(arc_model) if not k.startswith("_")}
    env.update(CONSTANTS)
    exec(compile(open(programs).read(), programs, "exec"), env)
    work, skipped = [], 0
    for name in sorted(k for k in env if k.startswith("solve_")):
        path = os.path.join(data, name[len("solve_"):] + ".json")
        if not os.path.exists(path):
            skipped += 1
            continue
        task = json.load(open(path))
        for split in ("train", "test"):
            for k, pair in enumerate(task[split]):
                grid = tuple(tuple(r) for r in pair["input"])
                want = tuple(tuple(r) for r in pair["output"])
                work.append((name, split, k, env[name], grid, want))
    wrong = []
    for name, split, k, fn, grid, want in work:  # correctness once, outside the timing
        try:
            got = fn(grid)
        except Exception as e:  # a failing call is reported, as the port reports it
            got = "error: %s" % e
        if got != want:
            wrong.append("%s %s %d" % (name, split, k))
    best = best_pass(work, repeat)
    for name in sorted({w[0] for w in work}) if per_task else ():
        calls = [w for w in work if w[0] == name]
        one = best_pass(calls, repeat)
        print(json.dumps({"task": name[len("solve_"):], "calls": len(calls), "us": one / len(calls) * 1e6}))
    print("Python model solver calls (%s): %d solvers (%d skipped, no task), %d calls per pass, best of %d passes"
          % (sys.version.split()[0], len({w[0] for w in work}), skipped, len(work), repeat))
    print("  %.1f us per call (%.0f calls/s); %d of %d outputs differ from the task's%s"
          % (best / len(work) * 1e6, len(work) / best, len(wrong), len(work),
             (": " + ", ".join(wrong[:10])) if wrong else ""))
    return 1 if wrong else 0


if len(sys.argv) > 1 and sys.argv[1] == "--solvers":
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    if "--data" not in args:
        sys.exit("arc_peer.py --solvers PROGRAMS.py --data DIR [--repeat R] [--per-task 1]")
    sys.exit(solver_calls(args["--solvers"], args["--data"], int(args.get("--repeat", "3")), args.get("--per-task") == "1"))

grids = [tuple(tuple(r) for r in json.loads(ln)) for ln in open(sys.argv[1])]
print("Python model objects(), microseconds per call (%s)" % sys.version.split()[0])
for n in (10, 30):
    gs = [g for g in grids if len(g) == n and all(len(r) == n for r in g)]
    if not gs:
        continue
    for f in range(8):
        u, d, b = bool(f & 4), bool(f & 2), bool(f & 1)
        t0 = time.perf_counter()
        for g in gs:
            arc_model.objects(g, u, d, b)
        t = (time.perf_counter() - t0) / len(gs) * 1e6
        print("%dx%d %s, %s, %s %10.1f" % (n, n, "TF"[not u], "TF"[not d], "TF"[not b], t))

#!/usr/bin/env python3
"""CLI test of `tandem arc run`, `check` and `eval` on task files written here.

What: three small ARC tasks (spec §6 format, one with an extra "name" key) in a temporary directory and a
solver file with a correct solver, a solver that is wrong on one pair, a solver that raises, and a solver
for a task that is not there. Checks: `--json` prints one well-formed line per task with the fields of
issue 5 (task, solved, pairs with split, index, ok, output grid or null, error or null); the text mode
names the first differing cell and the raising line; the summary counts skipped solvers and tasks without
a solver; the exit status is 0 when all run tasks are solved and 3 otherwise; a malformed solver file is
refused with file:line:col and the token; `check` lists solvers; `eval` prints reprs.

Why: scripts and search systems read this output; its shape and exit codes are an interface.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

SOLVERS = """from dsl import *

def solve_aaaa0001(I):
    O = rot90(I)
    return O

def solve_aaaa0002(I):
    x1 = ofcolor(I, ONE)
    O = fill(I, TWO, x1)
    return O

def solve_aaaa0003(I):
    x1 = palette(I)
    x2 = remove(ZERO, x1)
    O = first(x2)
    return O

def solve_ffff0000(I):
    O = rot90(I)
    return O
"""


def task(pairs_train, pairs_test, extra=None):
    t = {"train": [{"input": i, "output": o} for i, o in pairs_train],
         "test": [{"input": i, "output": o} for i, o in pairs_test]}
    if extra:
        t.update(extra)
    return t


TASKS = {
    # rot90 solves every pair
    "aaaa0001": task([([[1, 2], [3, 4]], [[3, 1], [4, 2]]), ([[5, 6, 7]], [[5], [6], [7]])],
                     [([[0, 1], [1, 0]], [[1, 0], [0, 1]])], {"name": "extra keys are ignored"}),
    # 1 -> 2 is right on train 0 and wrong on train 1 (expects 3 at (0, 1))
    "aaaa0002": task([([[1, 0]], [[2, 0]]), ([[0, 1]], [[0, 3]])], [([[1, 1]], [[2, 2]])]),
    # first(...) of an empty set raises on the test pair; the result is an int, never a grid
    "aaaa0003": task([([[0, 5]], [[5]])], [([[0, 0]], [[0]])]),
    # a task without a solver
    "bbbb0004": task([([[1]], [[1]])], [([[2]], [[2]])]),
}


def run(tandem, *args):
    return subprocess.run([tandem, "arc", *args], capture_output=True, text=True)


def main():
    p = argparse.ArgumentParser(description="tandem arc CLI test")
    p.add_argument("--tandem", required=True)
    a = p.parse_args()
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        for tid, t in TASKS.items():
            with open(os.path.join(data, tid + ".json"), "w") as f:
                json.dump(t, f)
        solvers = os.path.join(tmp, "solvers.py")
        with open(solvers, "w") as f:
            f.write(SOLVERS)

        r = run(a.tandem, "run", solvers, "--data", data, "--json")
        check(r.returncode == 3, "run --json: exit status %d, want 3 (some task not solved)" % r.returncode)
        lines = [json.loads(ln) for ln in r.stdout.splitlines()]
        by = {ln["task"]: ln for ln in lines}
        check(sorted(by) == ["aaaa0001", "aaaa0002", "aaaa0003"], "run --json: tasks %s" % sorted(by))
        for ln in lines:
            check(set(ln) == {"task", "solved", "pairs"}, "run --json: keys %s" % sorted(ln))
            for pr in ln["pairs"]:
                check(set(pr) == {"split", "index", "ok", "output", "error"}, "pair keys %s" % sorted(pr))
                check(pr["split"] in ("train", "test"), "split %r" % pr["split"])
        t1, t2, t3 = by.get("aaaa0001"), by.get("aaaa0002"), by.get("aaaa0003")
        if t1 and t2 and t3:
            check(t1["solved"] is True and all(p_["ok"] for p_ in t1["pairs"]), "aaaa0001 must be solved")
            check(t1["pairs"][2] == {"split": "test", "index": 0, "ok": True, "output": [[1, 0], [0, 1]],
                                     "error": None}, "aaaa0001 test pair: %s" % t1["pairs"][2])
            check(t2["solved"] is False and [p_["ok"] for p_ in t2["pairs"]] == [True, False, True],
                  "aaaa0002 pairs ok: %s" % [p_["ok"] for p_ in t2["pairs"]])
            check(t2["pairs"][1]["output"] == [[0, 2]] and t2["pairs"][1]["error"] is None,
                  "aaaa0002 train 1: %s" % t2["pairs"][1])
            check(t3["pairs"][0]["output"] is None and t3["pairs"][0]["error"] is None,
                  "aaaa0003 train 0 (an int result): %s" % t3["pairs"][0])
            err = t3["pairs"][1]["error"] or ""
            check(t3["pairs"][1]["output"] is None and "line 15: O = first(x2): first: StopIteration" in err,
                  "aaaa0003 test 0 must report the raising line: %s" % t3["pairs"][1])
        check("solved 1 of 3 tasks" in r.stderr and "1 solvers without a task" in r.stderr and
              "1 tasks there without a solver" in r.stderr, "run --json summary on stderr: %r" % r.stderr)

        r = run(a.tandem, "run", solvers, "--data", data)
        out = r.stdout
        check("aaaa0001: solved (3 pairs)" in out, "text: aaaa0001 line: %r" % out)
        check("aaaa0002: not solved: train 1: first difference at (0, 1): 2, expected 3" in out,
              "text: aaaa0002 line: %r" % out)
        check("aaaa0003: not solved: train 0: the result is not a grid: 5" in out, "text: aaaa0003: %r" % out)

        r = run(a.tandem, "run", solvers, "--data", data, "--only", "aaaa0001")
        check(r.returncode == 0, "run --only aaaa0001: exit status %d, want 0" % r.returncode)
        r = run(a.tandem, "run", solvers, "--task", os.path.join(data, "aaaa0001.json"))
        check(r.returncode == 0 and "aaaa0001: solved" in r.stdout, "run --task: %d %r" % (r.returncode, r.stdout))

        bad = os.path.join(tmp, "bad.py")
        with open(bad, "w") as f:
            f.write("def solve_x(I):\n    x1 = rot90(I)\n    O = fill(x1, TWO, x9)\n    return O\n")
        r = run(a.tandem, "run", bad, "--data", data)
        check(r.returncode == 1 and "bad.py:3:23: unknown name" in r.stderr and "'x9'" in r.stderr,
              "bad program: %d %r" % (r.returncode, r.stderr))
        r = run(a.tandem, "check", solvers)
        check(r.returncode == 0 and r.stdout.split() == ["solve_aaaa0001", "solve_aaaa0002", "solve_aaaa0003",
                                                          "solve_ffff0000", "4", "solvers"], "check: %r" % r.stdout)
        r = subprocess.run([a.tandem, "arc", "eval", solvers, "--grids", "-"], input="[[0, 7]]\n",
                           capture_output=True, text=True)
        ev = [json.loads(ln) for ln in r.stdout.splitlines()]
        check([e.get("value") for e in ev] == ["((0,), (7,))", "((0, 7),)", "7", "((0,), (7,))"], "eval: %r" % r.stdout)
        r = run(a.tandem, "run", "--help")
        check(r.returncode == 0 and "usage: tandem arc run" in r.stdout, "run --help")
    for f in failures:
        print("FAIL:", f)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

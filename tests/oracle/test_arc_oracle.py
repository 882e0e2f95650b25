#!/usr/bin/env python3
"""Oracle test: `tandem arc eval` against CPython 3.11's own frozensets, on seeded random grids.

What: about 150 short DSL programs (objects in all 8 flag combinations, partition, fgpartition,
frontiers, occurrences, box/inbox/outbox/delta/backdrop/corners, neighbourhoods, mirrors, upscale, the
container and selection primitives, painting ...) run on a few hundred random grids by the CLI and by a
small Python reference written here from the specification (shared/spec/arc-dsl.md, semantics only; the
reference DSL source is not used). The two must print the same repr() for every result.

Why: repr() of a frozenset lists its elements in iteration order, at every nesting level, so equal reprs
mean the C port reproduced CPython's set-table layout (hashes, probing, resizes, copies, unions and
differences) for each result, not only its value. The Python side gets its layouts from real CPython
sets, so this is the check the spec asks for in 4.11. Errors must match too: where Python raises, the CLI
must report an error. Replay a run with --seed.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from arc_model import *  # noqa: E402,F401,F403
import arc_model  # noqa: E402

# ---- the programs: DSL lines, run by both sides ----------------------------------------------------------

PROGRAMS = []
for u in "TF":
    for d in "TF":
        for b in "TF":
            PROGRAMS.append(["O = objects(I, %s, %s, %s)" % (u, d, b)])
PROGRAMS += [
    ["O = partition(I)"], ["O = fgpartition(I)"], ["O = frontiers(I)"], ["O = palette(I)"],
    ["O = mostcolor(I)"], ["O = leastcolor(I)"], ["O = asobject(I)"], ["O = asindices(I)"],
    ["x1 = ofcolor(I, ONE)", "O = box(x1)"], ["x1 = ofcolor(I, ONE)", "O = inbox(x1)"],
    ["x1 = ofcolor(I, TWO)", "O = outbox(x1)"], ["x1 = ofcolor(I, ONE)", "O = delta(x1)"],
    ["x1 = ofcolor(I, ZERO)", "O = backdrop(x1)"], ["x1 = ofcolor(I, TWO)", "O = corners(x1)"],
    ["x1 = ofcolor(I, ONE)", "O = mapply(neighbors, x1)"], ["x1 = ofcolor(I, TWO)", "O = mapply(dneighbors, x1)"],
    ["x1 = ofcolor(I, ONE)", "O = mapply(ineighbors, x1)"],
    ["x1 = objects(I, T, F, T)", "O = apply(normalize, x1)"],
    ["x1 = objects(I, F, T, T)", "O = apply(dmirror, x1)"], ["x1 = objects(I, T, T, F)", "O = apply(cmirror, x1)"],
    ["x1 = objects(I, T, F, F)", "O = apply(hmirror, x1)"], ["x1 = objects(I, F, F, T)", "O = apply(vmirror, x1)"],
    ["x1 = asobject(I)", "O = cmirror(x1)"], ["O = cmirror(I)"], ["O = dmirror(I)"], ["O = rot90(I)"],
    ["x1 = objects(I, T, T, T)", "x2 = argmax(x1, size)", "O = upscale(x2, TWO)"],
    ["x1 = objects(I, T, F, T)", "x2 = argmin(x1, size)", "O = occurrences(I, x2)"],
    ["x1 = objects(I, T, F, T)", "O = totuple(x1)"], ["x1 = objects(I, T, F, F)", "O = order(x1, size)"],
    ["x1 = objects(I, T, T, T)", "x2 = first(x1)", "O = last(x2)"],
    ["x1 = partition(I)", "O = apply(color, x1)"], ["x1 = objects(I, F, F, T)", "O = apply(color, x1)"],
    ["x1 = objects(I, F, T, F)", "x2 = first(x1)", "O = color(x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = sizefilter(x1, ONE)", "O = merge(x2)"],
    ["x1 = objects(I, T, F, F)", "O = colorfilter(x1, ZERO)"],
    ["x1 = objects(I, T, T, T)", "x2 = totuple(x1)", "O = merge(x2)"],
    ["x1 = ofcolor(I, ONE)", "x2 = ofcolor(I, TWO)", "O = combine(x1, x2)"],
    ["x1 = ofcolor(I, ONE)", "x2 = ofcolor(I, ZERO)", "O = intersection(x1, x2)"],
    ["x1 = asindices(I)", "x2 = ofcolor(I, ZERO)", "O = difference(x1, x2)"],
    ["x1 = palette(I)", "x2 = other(x1, ZERO)", "O = insert(EIGHT, x1)"],
    ["x1 = palette(I)", "O = product(x1, x1)"], ["x1 = palette(I)", "O = remove(ZERO, x1)"],
    ["x1 = ofcolor(I, ONE)", "O = recolor(FIVE, x1)"], ["x1 = ofcolor(I, ONE)", "x2 = shift(x1, UNITY)", "O = toobject(x2, I)"],
    ["x1 = objects(I, T, F, T)", "O = mapply(toindices, x1)"],
    ["x1 = asobject(I)", "x2 = first(x1)", "x3 = last(x2)", "O = shoot(x3, UP_RIGHT)"],
    ["x1 = asindices(I)", "x2 = first(x1)", "O = vfrontier(x2)"],
    ["x1 = ofcolor(I, ONE)", "x2 = ofcolor(I, TWO)", "x3 = combine(x1, x2)", "x4 = first(x3)", "x5 = last(x3)",
     "O = connect(x4, x5)"],
    ["x1 = objects(I, T, F, T)", "x2 = compose(size, delta)", "O = apply(x2, x1)"],
    ["x1 = objects(I, T, F, T)", "x2 = fork(recolor, color, box)", "O = mapply(x2, x1)"],
    ["x1 = objects(I, T, F, T)", "x2 = fork(recolor, color, outbox)", "x3 = mapply(x2, x1)", "O = paint(I, x3)"],
    ["x1 = objects(I, T, T, T)", "x2 = mapply(delta, x1)", "O = fill(I, EIGHT, x2)"],
    ["x1 = fgpartition(I)", "x2 = merge(x1)", "O = cover(I, x2)"],
    ["x1 = objects(I, F, T, T)", "x2 = merge(x1)", "x3 = shift(x2, DOWN)", "O = underpaint(I, x3)"],
    ["x1 = objects(I, T, F, T)", "x2 = first(x1)", "O = subgrid(x2, I)"], ["O = compress(I)"],
    ["x1 = asobject(I)", "x2 = apply(first, x1)", "x3 = totuple(x2)", "O = mostcommon(x3)"],
    ["x1 = asobject(I)", "x2 = totuple(x1)", "x3 = apply(first, x2)", "O = leastcommon(x3)"],
    ["x1 = objects(I, T, F, T)", "x2 = lbind(colorcount, I)", "x3 = compose(x2, color)", "O = argmax(x1, x3)"],
    ["x1 = objects(I, T, F, F)", "x2 = rbind(greater, TWO)", "x3 = compose(x2, size)", "O = sfilter(x1, x3)"],
    ["x1 = objects(I, F, F, T)", "x2 = matcher(size, ONE)", "O = mfilter(x1, x2)"],
    ["x1 = asobject(I)", "x2 = upscale(x1, TWO)", "O = occurrences(I, x2)"],
    ["x1 = ofcolor(I, ONE)", "x2 = initset(x1)", "O = insert(x1, x2)"],
    # grid geometry and painting
    ["O = rot180(I)"], ["O = rot270(I)"], ["O = hmirror(I)"], ["O = vmirror(I)"], ["O = trim(I)"],
    ["O = tophalf(I)"], ["O = bottomhalf(I)"], ["O = lefthalf(I)"], ["O = righthalf(I)"],
    ["O = hsplit(I, TWO)"], ["O = vsplit(I, THREE)"], ["x1 = rot90(I)", "O = hconcat(I, x1)"],
    ["x1 = tophalf(I)", "O = vconcat(x1, I)"], ["O = hupscale(I, TWO)"], ["O = vupscale(I, THREE)"],
    ["O = downscale(I, TWO)"], ["O = upscale(I, TWO)"], ["x1 = rot180(I)", "O = cellwise(I, x1, ZERO)"],
    ["O = replace(I, ZERO, NINE)"], ["O = switch(I, ZERO, ONE)"], ["x1 = ofcolor(I, ONE)", "O = underfill(I, FIVE, x1)"],
    ["x1 = objects(I, T, F, T)", "x2 = first(x1)", "O = move(I, x2, UNITY)"],
    ["x1 = crop(I, UNITY, THREE_BY_THREE)", "O = index(x1, TWO_BY_TWO)"], ["O = crop(I, NEG_UNITY, TWO_BY_TWO)"],
    ["x1 = shape(I)", "x2 = halve(x1)", "O = canvas(SEVEN, x2)"],
    # patch geometry on objects
    ["x1 = objects(I, T, F, T)", "O = apply(centerofmass, x1)"], ["x1 = objects(I, T, T, T)", "O = apply(center, x1)"],
    ["x1 = objects(I, F, F, T)", "O = apply(hperiod, x1)"], ["x1 = objects(I, T, F, F)", "O = apply(vperiod, x1)"],
    ["x1 = objects(I, T, F, T)", "O = sfilter(x1, square)"], ["x1 = objects(I, T, F, T)", "O = mfilter(x1, vline)"],
    ["x1 = objects(I, T, F, T)", "O = sfilter(x1, hline)"], ["x1 = objects(I, T, F, T)", "O = apply(portrait, x1)"],
    ["x1 = objects(I, T, F, T)", "x2 = rbind(bordering, I)", "O = sfilter(x1, x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = argmax(x1, size)", "x3 = argmin(x1, size)", "O = gravitate(x3, x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = first(x1)", "x3 = last(x1)", "O = position(x2, x3)"],
    ["x1 = objects(I, T, F, T)", "x2 = first(x1)", "x3 = lbind(manhattan, x2)", "O = apply(x3, x1)"],
    ["x1 = objects(I, T, F, T)", "x2 = first(x1)", "x3 = lbind(adjacent, x2)", "O = sfilter(x1, x3)"],
    ["x1 = objects(I, T, F, T)", "x2 = first(x1)", "x3 = rbind(hmatching, x2)", "O = sfilter(x1, x3)"],
    ["x1 = objects(I, T, F, T)", "O = valmax(x1, size)"], ["x1 = objects(I, T, F, T)", "O = valmin(x1, width)"],
    ["x1 = objects(I, T, F, T)", "x2 = apply(size, x1)", "O = maximum(x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = apply(ulcorner, x1)", "O = minimum(x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = order(x1, uppermost)", "O = apply(color, x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = totuple(x1)", "x3 = apply(color, x2)", "O = dedupe(x3)"],
    ["x1 = asobject(I)", "x2 = totuple(x1)", "x3 = asindices(I)", "x4 = totuple(x3)", "O = pair(x2, x4)"],
    ["x1 = palette(I)", "x2 = totuple(x1)", "O = papply(add, x2, x2)"],
    ["x1 = ofcolor(I, ZERO)", "x2 = totuple(x1)", "O = mpapply(connect, x2, x2)"],
    ["x1 = palette(I)", "O = prapply(multiply, x1, x1)"], ["x1 = width(I)", "O = interval(ZERO, x1, TWO)"],
    ["x1 = mostcolor(I)", "O = repeat(x1, THREE)"], ["x1 = asobject(I)", "O = hmirror(x1)"],
    ["x1 = ofcolor(I, ONE)", "O = vmirror(x1)"], ["x1 = ofcolor(I, TWO)", "O = dmirror(x1)"],
    ["x1 = objects(I, T, F, T)", "x2 = merge(x1)", "O = normalize(x2)"],
    ["x1 = objects(I, F, T, T)", "x2 = compose(toindices, normalize)", "O = apply(x2, x1)"],
    ["x1 = asindices(I)", "O = corners(x1)"], ["x1 = ofcolor(I, ONE)", "x2 = first(x1)", "O = hfrontier(x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = apply(outbox, x1)", "O = merge(x2)"],
    # filters and maps over objects() without its layout (src/arc/image.c), chained, and their fallbacks
    ["x1 = objects(I, T, F, T)", "x2 = sizefilter(x1, TWO)", "x3 = apply(outbox, x2)", "O = merge(x3)"],
    ["x1 = objects(I, T, F, F)", "x2 = colorfilter(x1, ZERO)", "x3 = rbind(bordering, I)", "O = mfilter(x2, x3)"],
    ["x1 = objects(I, T, T, T)", "x2 = sizefilter(x1, ONE)", "O = colorfilter(x2, TWO)"],
    ["x1 = objects(I, F, F, T)", "O = colorfilter(x1, ONE)"],
    ["x1 = objects(I, T, F, T)", "x2 = apply(normalize, x1)", "O = sizefilter(x2, TWO)"],
    ["x1 = objects(I, T, F, T)", "x2 = compose(first, delta)", "O = sfilter(x1, x2)"],
    ["x1 = objects(I, T, T, T)", "x2 = sizefilter(x1, THREE)", "O = mapply(delta, x2)"],
    ["x1 = objects(I, T, F, T)", "x2 = colorfilter(x1, TWO)", "O = argmax(x2, size)"],
    ["x1 = objects(I, T, F, F)", "x2 = sizefilter(x1, ONE)", "x3 = apply(center, x2)", "O = totuple(x3)"],
    ["x1 = objects(I, T, F, T)", "x2 = rbind(greater, TWO)", "x3 = compose(x2, size)", "x4 = sfilter(x1, x3)",
     "x5 = sizefilter(x1, FOUR)", "O = intersection(x4, x5)"],
    # selections over objects(): order-free when one element alone is the answer, else CPython's order
    ["x1 = objects(I, T, F, T)", "O = argmin(x1, size)"],
    ["x1 = objects(I, T, F, T)", "x2 = compose(size, backdrop)", "O = argmax(x1, x2)"],
    ["x1 = objects(I, T, T, T)", "x2 = matcher(size, ONE)", "O = extract(x1, x2)"],
    ["x1 = objects(I, F, F, T)", "x2 = rbind(bordering, I)", "O = extract(x1, x2)"],
    ["x1 = objects(I, T, F, F)", "x2 = colorfilter(x1, ZERO)", "O = argmax(x2, ulcorner)"],
    # one closure on both sides of a fork that meets or joins its two results: CPython makes two equal sets
    # (a & b, not a & a's copy shortcut, whose table can differ), so the port's kept results must not be
    # one object twice (prim_func.c kept(), arc_fresh_sets)
    ["x1 = objects(I, T, T, F)", "x2 = chain(vmirror, hmirror, toindices)", "x3 = fork(shift, hmirror, shape)",
     "x4 = chain(x2, toindices, x3)", "x5 = fork(intersection, x4, x4)", "O = mapply(x5, x1)"],
    ["x1 = objects(I, T, T, F)", "x2 = chain(vmirror, hmirror, toindices)", "x3 = fork(shift, hmirror, shape)",
     "x4 = chain(x2, toindices, x3)", "x5 = fork(combine, x4, x4)", "O = mapply(x5, x1)"],
    # and a closure's primitive called by column on one object eight times makes eight sets, not one kept
    ["x1 = asobject(I)", "x2 = repeat(x1, EIGHT)", "x3 = compose(toindices, identity)", "x4 = apply(x3, x2)",
     "x5 = first(x4)", "x6 = last(x4)", "O = intersection(x5, x6)"],
    # a kept result that is a tuple holding a set the call made (x5, reached by both sides of x8): by column
    # over objects, and called once
    ["x1 = objects(I, F, T, F)", "x2 = chain(vmirror, hmirror, toindices)", "x3 = fork(shift, hmirror, shape)",
     "x4 = chain(x2, toindices, x3)", "x5 = fork(astuple, x4, size)", "x6 = compose(first, x5)",
     "x7 = compose(first, x5)", "x8 = fork(intersection, x6, x7)", "O = mapply(x8, x1)"],
    ["x1 = objects(I, T, T, F)", "x2 = chain(vmirror, hmirror, toindices)", "x3 = fork(shift, hmirror, shape)",
     "x4 = chain(x2, toindices, x3)", "x5 = fork(astuple, x4, size)", "x6 = compose(first, x5)",
     "x7 = compose(first, x5)", "x8 = fork(intersection, x6, x7)", "x9 = merge(x1)", "O = x8(x9)"],
]


def run_python(lines, grid):
    env = {"I": grid}
    env.update(CONSTANTS)
    g = vars(arc_model)
    try:
        for ln in lines:
            target, call = ln.split(" = ")
            callee, args = call[:-1].split("(")
            vals = []
            for a in args.split(", "):
                vals.append(env[a] if a in env else g[a])
            fn = env[callee] if callee in env else g[callee]
            env[target] = fn(*vals)
        return ("value", repr(env["O"]))
    except (StopIteration, ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, AttributeError,
            RecursionError, RuntimeError):
        return ("error", None)


def random_grid(rng):
    kind = rng.randrange(4)
    if kind == 0:
        h, w = rng.randint(1, 4), rng.randint(1, 4)
    elif kind == 3:
        h, w = rng.randint(10, 30), rng.randint(10, 30)
    else:
        h, w = rng.randint(1, 12), rng.randint(1, 12)
    ncol = rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 10])
    cols = rng.sample(range(10), ncol)
    bg = cols[0]
    fill_p = rng.random()
    g = [[bg if rng.random() > fill_p else rng.choice(cols) for _ in range(w)] for _ in range(h)]
    for _ in range(rng.randint(0, 4)):  # a few solid rectangles, so objects have interesting shapes
        c = rng.choice(cols)
        i0, j0 = rng.randrange(h), rng.randrange(w)
        for i in range(i0, min(h, i0 + rng.randint(1, 5))):
            for j in range(j0, min(w, j0 + rng.randint(1, 5))):
                g[i][j] = c
    return tuple(tuple(r) for r in g)


def main():
    p = argparse.ArgumentParser(description="ARC DSL oracle test")
    p.add_argument("--tandem", required=True)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--grids", type=int, default=100)
    args = p.parse_args()
    if args.seed is None:
        env = os.environ.get("TANDEM_TEST_SEED", "").strip()
        args.seed = int(env) if env else random.SystemRandom().randrange(1, 2**63)
    print("seed: %d (replay with --seed %d)" % (args.seed, args.seed), flush=True)
    rng = random.Random(args.seed)
    grids = [random_grid(rng) for _ in range(args.grids)]
    with tempfile.TemporaryDirectory() as tmp:
        prog_path, grid_path = os.path.join(tmp, "p.py"), os.path.join(tmp, "g.jsonl")
        with open(prog_path, "w") as f:
            for k, lines in enumerate(PROGRAMS):
                f.write("def solve_p%03d(I):\n" % k)
                for ln in lines:
                    f.write("    %s\n" % ln)
                f.write("    return O\n\n")
        with open(grid_path, "w") as f:
            for g in grids:
                f.write(json.dumps(g) + "\n")
        out = subprocess.run([args.tandem, "arc", "eval", prog_path, "--grids", grid_path], capture_output=True,
                             text=True)
    if out.returncode != 0:
        print("tandem failed:", out.stderr)
        return 1
    got = [json.loads(ln) for ln in out.stdout.splitlines()]
    failed = passed = 0
    k = 0
    for gi, g in enumerate(grids):
        for pi, lines in enumerate(PROGRAMS):
            r = got[k]
            k += 1
            assert r["grid"] == gi and r["task"] == "p%03d" % pi
            kind, want = run_python(lines, g)
            ok = ("error" in r) if kind == "error" else (r.get("value") == want)
            if ok:
                passed += 1
                continue
            failed += 1
            if failed <= 5:
                print("MISMATCH program %s on grid %s\n  program: %s\n  python: %s\n  tandem: %s" %
                      (pi, json.dumps(g), "; ".join(lines), want if kind == "value" else "raises",
                       r.get("value", r.get("error"))))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

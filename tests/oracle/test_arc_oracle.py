#!/usr/bin/env python3
"""Oracle test: `tandem arc eval` against CPython 3.11's own frozensets, on seeded random grids.

What: about sixty short DSL programs (objects in all 8 flag combinations, partition, fgpartition,
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

# ---- a reference for the tested primitives, from the specification's prose ----------------------------


def _vals(e):
    return [v for r in e for v in r] if isinstance(e, tuple) else [c for c, _ in e]


def mostcolor(e):
    vs = _vals(e)
    return max(set(vs), key=vs.count)


def leastcolor(e):
    vs = _vals(e)
    return min(set(vs), key=vs.count)


def palette(e):
    return frozenset({v for v in _vals(e)})


def asindices(g):
    return frozenset((i, j) for i in range(len(g)) for j in range(len(g[0]) if g else 0))


def ofcolor(g, c):
    return frozenset((i, j) for i, row in enumerate(g) for j, v in enumerate(row) if v == c)


def asobject(g):
    return frozenset((v, (i, j)) for i, row in enumerate(g) for j, v in enumerate(row))


def _is_obj(p):
    return isinstance(next(iter(p))[1], tuple)


def toindices(p):
    if len(p) == 0:
        return frozenset()
    return frozenset(ij for _, ij in p) if _is_obj(p) else p


def _pos(p):
    return list(toindices(p))


def uppermost(p):
    return min(i for i, _ in _pos(p))


def leftmost(p):
    return min(j for _, j in _pos(p))


def lowermost(p):
    return max(i for i, _ in _pos(p))


def rightmost(p):
    return max(j for _, j in _pos(p))


def ulcorner(p):
    ps = _pos(p)
    return (min(i for i, _ in ps), min(j for _, j in ps)) if ps else ()


def lrcorner(p):
    ps = _pos(p)
    return (max(i for i, _ in ps), max(j for _, j in ps)) if ps else ()


def urcorner(p):
    ps = _pos(p)
    return (min(i for i, _ in ps), max(j for _, j in ps)) if ps else ()


def llcorner(p):
    ps = _pos(p)
    return (max(i for i, _ in ps), min(j for _, j in ps)) if ps else ()


def height(p):
    if len(p) == 0:
        return 0
    return len(p) if isinstance(p, tuple) else lowermost(p) - uppermost(p) + 1


def width(p):
    if len(p) == 0:
        return 0
    return len(p[0]) if isinstance(p, tuple) else rightmost(p) - leftmost(p) + 1


def shape(p):
    return (height(p), width(p))


def size(c):
    return len(c)


def shift(p, d):
    if len(p) == 0:
        return p
    di, dj = d
    if _is_obj(p):
        return frozenset((c, (i + di, j + dj)) for c, (i, j) in p)
    return frozenset((i + di, j + dj) for i, j in p)


def normalize(p):
    if len(p) == 0:
        return p
    return shift(p, (-uppermost(p), -leftmost(p)))


def dneighbors(l):
    i, j = l[0], l[1]
    return frozenset({(i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)})


def ineighbors(l):
    i, j = l[0], l[1]
    return frozenset({(i - 1, j - 1), (i - 1, j + 1), (i + 1, j - 1), (i + 1, j + 1)})


def neighbors(l):
    return dneighbors(l) | ineighbors(l)


def objects(g, univalued, diagonal, without_bg):
    bg = mostcolor(g) if without_bg else None
    h, w = len(g), len(g[0])
    nbf = neighbors if diagonal else dneighbors
    result, seen = set(), set()
    for loc in asindices(g):
        if loc in seen or g[loc[0]][loc[1]] == bg:
            continue
        val = g[loc[0]][loc[1]]
        obj, cands = {(val, loc)}, {loc}
        while len(cands) > 0:
            nb = set()
            for c in cands:
                v = g[c[0]][c[1]]
                if (v == val) if univalued else (v != bg):
                    obj.add((v, c))
                    seen.add(c)
                    nb |= {(a, b) for a, b in nbf(c) if 0 <= a < h and 0 <= b < w}
            cands = nb - seen
        result.add(frozenset(obj))
    return frozenset(result)


def partition(g):
    return frozenset(frozenset((v, (i, j)) for i, r in enumerate(g) for j, v in enumerate(r) if v == c)
                     for c in palette(g))


def fgpartition(g):
    return frozenset(frozenset((v, (i, j)) for i, r in enumerate(g) for j, v in enumerate(r) if v == c)
                     for c in palette(g) - {mostcolor(g)})


def dmirror(p):
    if isinstance(p, tuple):
        return tuple(zip(*p))
    a, b = ulcorner(p)
    if _is_obj(p):
        return frozenset((c, (j - b + a, i - a + b)) for c, (i, j) in p)
    return frozenset((j - b + a, i - a + b) for i, j in p)


def hmirror(p):
    if isinstance(p, tuple):
        return p[::-1]
    s = ulcorner(p)[0] + lrcorner(p)[0]
    if _is_obj(p):
        return frozenset((c, (s - i, j)) for c, (i, j) in p)
    return frozenset((s - i, j) for i, j in p)


def vmirror(p):
    if isinstance(p, tuple):
        return tuple(r[::-1] for r in p)
    s = ulcorner(p)[1] + lrcorner(p)[1]
    if _is_obj(p):
        return frozenset((c, (i, s - j)) for c, (i, j) in p)
    return frozenset((i, s - j) for i, j in p)


def cmirror(p):
    if isinstance(p, tuple):
        return tuple(zip(*(r[::-1] for r in p[::-1])))
    return vmirror(dmirror(vmirror(p)))


def rot90(g):
    return tuple(zip(*g[::-1]))


def _outline(si, sj, ei, ej):
    left = {(i, sj) for i in range(si, ei + 1)}
    right = {(i, ej) for i in range(si, ei + 1)}
    top = {(si, j) for j in range(sj, ej + 1)}
    bottom = {(ei, j) for j in range(sj, ej + 1)}
    return frozenset((left | right) | (top | bottom))


def box(p):
    if len(p) == 0:
        return p
    (a, b), (c, d) = ulcorner(p), lrcorner(p)
    return _outline(min(a, c), min(b, d), max(a, c), max(b, d))


def _grown(p, k):
    ai, aj, bi, bj = uppermost(p) - k, leftmost(p) - k, lowermost(p) + k, rightmost(p) + k
    return _outline(min(ai, bi), min(aj, bj), max(ai, bi), max(aj, bj))


def inbox(p):
    return _grown(p, -1)


def outbox(p):
    return _grown(p, 1)


def backdrop(p):
    if len(p) == 0:
        return frozenset()
    (a, b), (c, d) = ulcorner(p), lrcorner(p)
    return frozenset((i, j) for i in range(a, c + 1) for j in range(b, d + 1))


def delta(p):
    if len(p) == 0:
        return frozenset()
    return backdrop(p) - toindices(p)


def corners(p):
    return frozenset({ulcorner(p), urcorner(p), llcorner(p), lrcorner(p)})


def upscale(e, f):
    if isinstance(e, tuple):
        out = ()
        for row in e:
            r = tuple(v for v in row for _ in range(f))
            out = out + tuple(r for _ in range(f))
        return out
    if len(e) == 0:
        return frozenset()
    a, b = ulcorner(e)
    o = set()
    for c, (i, j) in normalize(e):
        for u in range(f):
            for v in range(f):
                o.add((c, (i * f + u, j * f + v)))
    return shift(frozenset(o), (a, b))


def occurrences(g, obj):
    n = normalize(obj)
    h, w = len(g), len(g[0])
    oh, ow = shape(obj)
    found = set()
    for i in range(h - oh + 1):
        for j in range(w - ow + 1):
            if all(0 <= a + i < h and 0 <= b + j < w and g[a + i][b + j] == c for c, (a, b) in n):
                found.add((i, j))
    return frozenset(found)


def frontiers(g):
    h, w = len(g), len(g[0])
    rows = [i for i in range(h) if len(set(g[i])) == 1]
    cols = [j for j in range(w) if len(set(g[i][j] for i in range(h))) == 1]
    hf = frozenset({frozenset({(g[i][j], (i, j)) for j in range(w)}) for i in rows})
    vf = frozenset({frozenset({(g[i][j], (i, j)) for i in range(h)}) for j in cols})
    return hf | vf


def _same(c, items):
    return tuple(items) if isinstance(c, tuple) else frozenset(items)


def apply(f, c):
    return _same(c, (f(e) for e in c))


def merge(cs):
    return _same(cs, (e for c in cs for e in c))


def mapply(f, c):
    return merge(apply(f, c))


def sfilter(c, f):
    return _same(c, (e for e in c if f(e)))


def mfilter(c, f):
    return merge(sfilter(c, f))


def first(c):
    return next(iter(c))


def last(c):
    return list(c)[-1]


def totuple(c):
    return tuple(c)


def order(c, f):
    return tuple(sorted(c, key=f))


def argmax(c, f):
    return max(c, key=f)


def argmin(c, f):
    return min(c, key=f)


def insert(v, c):
    return c.union(frozenset({v}))


def initset(v):
    return frozenset({v})


def product(a, b):
    return frozenset((x, y) for y in b for x in a)


def combine(a, b):
    return _same(a, list(a) + list(b))


def difference(a, b):
    return _same(a, (e for e in a if e not in b))


def remove(v, c):
    return _same(c, (e for e in c if e != v))


def other(c, v):
    return first(remove(v, c))


def intersection(a, b):
    return a & b


def recolor(c, p):
    return frozenset((c, ij) for ij in toindices(p))


def toobject(p, g):
    h, w = len(g), len(g[0])
    return frozenset((g[i][j], (i, j)) for i, j in toindices(p) if 0 <= i < h and 0 <= j < w)


def color(o):
    return next(iter(o))[0]


def colorfilter(objs, c):
    return frozenset(o for o in objs if next(iter(o))[0] == c)


def sizefilter(c, n):
    return frozenset(e for e in c if len(e) == n)


def colorcount(e, c):
    return _vals(e).count(c)


def mostcommon(t):
    return max(set(t), key=t.count)


def leastcommon(t):
    return min(set(t), key=t.count)


def connect(a, b):
    (ai, aj), (bi, bj) = a, b
    si, ei, sj, ej = min(ai, bi), max(ai, bi), min(aj, bj), max(aj, bj)
    if ai == bi:
        return frozenset((ai, j) for j in range(sj, ej + 1))
    if aj == bj:
        return frozenset((i, aj) for i in range(si, ei + 1))
    if bi - ai == bj - aj:
        return frozenset((si + k, sj + k) for k in range(ei - si + 1))
    if bi - ai == aj - bj:
        return frozenset((si + k, ej - k) for k in range(ei - si + 1))
    return frozenset()


def shoot(s, d):
    return connect(s, (s[0] + 42 * d[0], s[1] + 42 * d[1]))


def vfrontier(l):
    return frozenset((i, l[1]) for i in range(30))


def hfrontier(l):
    return frozenset((l[0], j) for j in range(30))


def center(p):
    return (uppermost(p) + height(p) // 2, leftmost(p) + width(p) // 2)


def fill(g, c, p):
    h, w = len(g), len(g[0])
    rows = [list(r) for r in g]
    for i, j in toindices(p):
        if 0 <= i < h and 0 <= j < w:
            rows[i][j] = c
    return tuple(tuple(r) for r in rows)


def paint(g, o):
    h, w = len(g), len(g[0])
    rows = [list(r) for r in g]
    for c, (i, j) in o:
        if 0 <= i < h and 0 <= j < w:
            rows[i][j] = c
    return tuple(tuple(r) for r in rows)


def underpaint(g, o):
    bg = mostcolor(g)
    h, w = len(g), len(g[0])
    rows = [list(r) for r in g]
    for c, (i, j) in o:
        if 0 <= i < h and 0 <= j < w and rows[i][j] == bg:
            rows[i][j] = c
    return tuple(tuple(r) for r in rows)


def cover(g, p):
    return fill(g, mostcolor(g), toindices(p))


def subgrid(p, g):
    (a, b), (h, w) = ulcorner(p), shape(p)
    return tuple(r[b:b + w] for r in g[a:a + h])


def compress(g):
    rows = {i for i, r in enumerate(g) if len(set(r)) == 1}
    cols = {j for j, c in enumerate(zip(*g)) if len(set(c)) == 1}
    return tuple(tuple(v for j, v in enumerate(r) if j not in cols) for i, r in enumerate(g) if i not in rows)


def compose(f, g):
    return lambda x: f(g(x))


def fork(o, a, b):
    return lambda x: o(a(x), b(x))


def lbind(f, v):
    return lambda x: f(v, x)


def rbind(f, v):
    return lambda x: f(x, v)


def matcher(f, t):
    return lambda x: f(x) == t


def equality(a, b):
    return a == b


def flip(b):
    return not b


def greater(a, b):
    return a > b


CONSTANTS = {"T": True, "F": False, "ZERO": 0, "ONE": 1, "TWO": 2, "THREE": 3, "FOUR": 4, "FIVE": 5, "EIGHT": 8,
             "DOWN": (1, 0), "RIGHT": (0, 1), "UNITY": (1, 1), "ORIGIN": (0, 0), "NEG_UNITY": (-1, -1),
             "UP_RIGHT": (-1, 1), "TWO_BY_TWO": (2, 2)}

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
]


def run_python(lines, grid):
    env = {"I": grid}
    env.update(CONSTANTS)
    g = globals()
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
    p.add_argument("--grids", type=int, default=150)
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

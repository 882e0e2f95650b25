#!/usr/bin/env python3
"""Regenerates the case lists of the ARC unit tests (tests/unit/test_arc_<family>.c) from tests/arc/cases/<family>.cases.

Each case line is `primitive arg ; arg ; ...` with Python literals (a set display {a, b} means the frozenset
built by inserting a, b in that order), or `P grid | line | line ...` for a short program. The expected repr
comes from CPython 3.11 running the Python model of the spec in tests/oracle/test_arc_oracle.py (extended
here with the primitives the oracle does not need); "ERROR" marks a call that raises. Usage:
    python3 tests/arc/gen_unit_cases.py tests/arc/cases/geom.cases   # prints the TA_CHECK/TA_PROG lines
tests/arc/make_unit_test.sh writes a whole test file from one or more case files.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
CASES = sys.argv[1]
sys.argv = ['x']
import test_arc_oracle as R

def num2(op):
    def f(a, b):
        if isinstance(a, int) and isinstance(b, int): return op(a, b)
        if isinstance(a, tuple) and isinstance(b, tuple): return (op(a[0], b[0]), op(a[1], b[1]))
        if isinstance(a, int) and isinstance(b, tuple): return (op(a, b[0]), op(a, b[1]))
        return (op(a[0], b), op(a[1], b))
    return f
def un(op):
    return lambda n: op(n) if isinstance(n, int) else (op(n[0]), op(n[1]))
E = dict(vars(R))
E.update(
 add=num2(lambda a,b:a+b), subtract=num2(lambda a,b:a-b), multiply=num2(lambda a,b:a*b), divide=num2(lambda a,b:a//b),
 invert=un(lambda x:-x), double=un(lambda x:x*2), halve=un(lambda x:x//2), increment=un(lambda x:x+1), decrement=un(lambda x:x-1),
 crement=un(lambda x: 0 if x == 0 else (x+1 if x > 0 else x-1)), sign=un(lambda x: 0 if x == 0 else (1 if x > 0 else -1)),
 even=lambda n: n % 2 == 0, positive=lambda x: x > 0, toivec=lambda i:(i,0), tojvec=lambda j:(0,j), astuple=lambda a,b:(a,b),
 identity=lambda x:x, both=lambda a,b: a and b, either=lambda a,b: a or b, contained=lambda v,c: v in c,
 dedupe=lambda t: tuple(e for i,e in enumerate(t) if t.index(e)==i), repeat=lambda x,n: tuple(x for _ in range(n)),
 maximum=lambda c: max(c, default=0), minimum=lambda c: min(c, default=0),
 valmax=lambda c,f: f(max(c, key=f, default=0)), valmin=lambda c,f: f(min(c, key=f, default=0)),
 extract=lambda c,f: next(e for e in c if f(e)), interval=lambda a,b,s: tuple(range(a,b,s)), pair=lambda a,b: tuple(zip(a,b)),
 branch=lambda c,a,b: a if c else b, chain=lambda h,g,f: (lambda x: h(g(f(x)))),
 rapply=lambda fs,v: R._same(fs, (f(v) for f in fs)), papply=lambda f,a,b: tuple(f(i,j) for i,j in zip(a,b)),
 mpapply=lambda f,a,b: R.merge(tuple(f(i,j) for i,j in zip(a,b))), prapply=lambda f,a,b: frozenset(f(i,j) for j in b for i in a),
 numcolors=lambda e: len(R.palette(e)),
 portrait=lambda p: R.height(p) > R.width(p),
 square=lambda p: len(p) == len(p[0]) if isinstance(p, tuple) else R.height(p)*R.width(p) == len(p) and R.height(p) == R.width(p),
 vline=lambda p: R.height(p) == len(p) and R.width(p) == 1, hline=lambda p: R.width(p) == len(p) and R.height(p) == 1,
 hmatching=lambda a,b: len(set(i for i,j in R.toindices(a)) & set(i for i,j in R.toindices(b))) > 0,
 vmatching=lambda a,b: len(set(j for i,j in R.toindices(a)) & set(j for i,j in R.toindices(b))) > 0,
 manhattan=lambda a,b: min(abs(ai-bi)+abs(aj-bj) for ai,aj in R.toindices(a) for bi,bj in R.toindices(b)),
)
E['adjacent'] = lambda a,b: E['manhattan'](a,b) == 1
E['bordering'] = lambda p,g: R.uppermost(p) == 0 or R.leftmost(p) == 0 or R.lowermost(p) == len(g)-1 or R.rightmost(p) == len(g[0])-1
E['centerofmass'] = lambda p: tuple(map(lambda x: sum(x) // len(p), zip(*R.toindices(p))))
def position(a, b):
    ia, ja = R.center(R.toindices(a)); ib, jb = R.center(R.toindices(b))
    if ia == ib: return (0, 1 if ja < jb else -1)
    if ja == jb: return (1 if ia < ib else -1, 0)
    return (1 if ia < ib else -1, 1 if ja < jb else -1)
E['position'] = position
def gravitate(s, d):
    si, sj = R.center(s); di, dj = R.center(d); i = j = 0
    if E['vmatching'](s, d): i = 1 if si < di else -1
    else: j = 1 if sj < dj else -1
    c = 0
    while not E['adjacent'](s, d) and c < 42:
        c += 1; s = R.shift(s, (i, j))
    return (c*i, c*j)
E['gravitate'] = gravitate
def period(obj, vert):
    n = R.normalize(obj); w = R.height(n) if vert else R.width(n)
    for p in range(1, w):
        o = R.shift(n, (-p, 0) if vert else (0, -p))
        pr = frozenset({(c, (i, j)) for c, (i, j) in o if (i if vert else j) >= 0})
        if pr.issubset(n): return p
    return w
E['hperiod'] = lambda o: period(o, 0); E['vperiod'] = lambda o: period(o, 1)
E['rot180'] = lambda g: tuple(tuple(r[::-1]) for r in g[::-1])
E['rot270'] = lambda g: tuple(tuple(r[::-1]) for r in zip(*g[::-1]))[::-1]
E['crop'] = lambda g, s, d: tuple(r[s[1]:s[1]+d[1]] for r in g[s[0]:s[0]+d[0]])
E['trim'] = lambda g: tuple(r[1:-1] for r in g[1:-1])
E['tophalf'] = lambda g: g[:len(g)//2]; E['bottomhalf'] = lambda g: g[len(g)//2 + len(g)%2:]
E['lefthalf'] = lambda g: E['rot270'](E['tophalf'](R.rot90(g))); E['righthalf'] = lambda g: E['rot270'](E['bottomhalf'](R.rot90(g)))
def hsplit(g, n):
    h, w = len(g), len(g[0]) // n; off = len(g[0]) % n != 0
    return tuple(E['crop'](g, (0, w*i + i*off), (h, w)) for i in range(n))
def vsplit(g, n):
    h, w = len(g) // n, len(g[0]); off = len(g) % n != 0
    return tuple(E['crop'](g, (h*i + i*off, 0), (h, w)) for i in range(n))
E['hsplit'] = hsplit; E['vsplit'] = vsplit
E['hconcat'] = lambda a,b: tuple(i+j for i,j in zip(a,b)); E['vconcat'] = lambda a,b: a+b
E['hupscale'] = lambda g,f: tuple(tuple(v for v in r for _ in range(f)) for r in g)
E['vupscale'] = lambda g,f: tuple(r for r in g for _ in range(f))
def downscale(g, f):
    h, w = len(g), len(g[0])
    rows = tuple(tuple(g[i][j] for j in range(w) if j % f == 0) for i in range(h))
    return tuple(rows[i] for i in range(len(rows)) if i % f == 0)
E['downscale'] = downscale
def index(g, l):
    i, j = l; h, w = len(g), len(g[0])
    return g[i][j] if 0 <= i < h and 0 <= j < w else None
E['index'] = index
E['canvas'] = lambda v, d: tuple(tuple(v for j in range(d[1])) for i in range(d[0]))
def underfill(g, v, p):
    bg = R.mostcolor(g); h, w = len(g), len(g[0]); rows = [list(r) for r in g]
    for i, j in R.toindices(p):
        if 0 <= i < h and 0 <= j < w and rows[i][j] == bg: rows[i][j] = v
    return tuple(tuple(r) for r in rows)
E['underfill'] = underfill
E['move'] = lambda g, o, d: R.paint(R.cover(g, o), R.shift(o, d))
E['replace'] = lambda g, a, b: tuple(tuple(b if v == a else v for v in r) for r in g)
E['switch'] = lambda g, a, b: tuple(tuple(v if (v != a and v != b) else {a: b, b: a}[v] for v in r) for r in g)
def cellwise(a, b, f):
    h, w = len(a), len(a[0])
    return tuple(tuple(a[i][j] if a[i][j] == b[i][j] else f for j in range(w)) for i in range(h))
E['cellwise'] = cellwise
E['power'] = lambda f, n: f if n == 1 else R.compose(f, E['power'](f, n - 1))

def rbind(f, v):
    n = f.__code__.co_argcount
    if n == 2: return lambda x: f(x, v)
    if n == 3: return lambda x, y: f(x, y, v)
    return lambda x, y, z: f(x, y, z, v)
def lbind(f, v):
    n = f.__code__.co_argcount
    if n == 2: return lambda y: f(v, y)
    if n == 3: return lambda y, z: f(v, y, z)
    return lambda y, z, a: f(v, y, z, a)
E['rbind'] = rbind; E['lbind'] = lbind; R.rbind = rbind; R.lbind = lbind
def conv(s):
    return s.replace('{', 'frozenset(iter([').replace('}', ']))')

out = []
for line in open(CASES):
    line = line.rstrip('\n')
    if not line.strip() or line.startswith('#'):
        out.append(line); continue
    if line.startswith('P '):
        parts = [x.strip() for x in line[2:].split(' | ')]
        grid = eval(parts[0])
        for k, v in E.items():
            if k in R.__dict__ and callable(v) and not k.startswith('_'): pass
        R.__dict__.update({k: v for k, v in E.items() if callable(v) and k not in R.__dict__})
        kind, want = R.run_python(parts[1:], grid)
        if kind == 'error': want = 'ERROR'
        out.append('    TA_PROG("%s", "%s", "%s");' % (want.replace('"', '\\"'), parts[0], '\\n'.join(parts[1:])))
        continue
    name, rest = line.split(' ', 1)
    args = [a.strip() for a in rest.split(' ; ')]
    try:
        v = E[name](*[eval(conv(a), E) for a in args])
        want = repr(v)
    except (StopIteration, ValueError, IndexError, TypeError, KeyError, ZeroDivisionError, AttributeError, RecursionError, RuntimeError):
        want = 'ERROR'
    out.append('    TA_CHECK("%s", "%s", %s);' % (want.replace('"', '\\"'), name, ', '.join('"%s"' % a for a in args)))
print('\n'.join(out))

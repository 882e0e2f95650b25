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
import arc_model as R  # noqa: E402
import test_arc_oracle as O  # noqa: E402

E = dict(vars(R))

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
        kind, want = O.run_python(parts[1:], grid)
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

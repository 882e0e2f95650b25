#!/usr/bin/env python3
"""Peer for bench_arc: times objects() of the Python model of the spec (tests/oracle/arc_model.py, the same
algorithm as the reference DSL's objects(), run by this CPython) on the grids bench_arc dumped.

usage: bench/arc_peer.py GRIDS.jsonl   (from: build/bench/bench_arc 200 GRIDS.jsonl, or any JSON-lines
       file of grids: the 10x10 and 30x30 ones are timed)
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
import arc_model  # noqa: E402

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

#!/usr/bin/env python3
"""Oracle test: the `tandem lattice` command against the closed forms of spec/lattice-and-runtime.md, computed
here in Python.

What:
  1. `lattice analyze --json` on the spec's shapes and seeded random (d, L): vertices L^d, edges
     d L^(d-1) (L-1), avg_degree 2E/V, diameter d(L-1), density 2E/(V(V-1)), clustering 0, connected, the
     degree histogram C(d,j) (L-2)^j 2^(d-j); the contract's keys come first.
  2. `lattice path --json` on random pairs (ids and coordinate lists) against the closed-form path (down
     every axis with t_i < s_i lowest axis first, then up every axis with t_i > s_i highest axis first), the
     spec's 4D/10 examples literally.
  3. `lattice distance --json` equals the L1 distance and reports the scratch buffer restored.
  4. `lattice xor`: the spec's vector, round trips with a hex key, a seed and a random seed (reported, then
     used to undo).
  5. Bad input (d = 33, L = 1, L^d overflow, a vertex out of range, wrong coordinate count) exits non-zero with
     a message naming the value.

Why: the command line is a contract (issue 6): scripts parse these keys, and every number must be the graph's
own, equal to the closed forms. Seeded (--seed, else TANDEM_TEST_SEED, else random; printed for replay).
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        if len(failures) <= 10:
            print("FAIL:", what)


def run(tandem, *args, stdin=None):
    p = subprocess.run([tandem, "lattice", *map(str, args)], input=stdin, capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def run_json(tandem, *args):
    rc, out, err = run(tandem, *args)
    if rc != 0:
        failures.append(f"{' '.join(map(str, args))}: exit {rc}: {err.strip()}")
        return None
    return json.loads(out)


def coords(v, d, L):
    return [(v // L ** (d - 1 - i)) % L for i in range(d)]


def oracle_path(s, t, d, L):
    cs, ct = coords(s, d, L), coords(t, d, L)
    stride = [L ** (d - 1 - i) for i in range(d)]
    v, out = s, [s]
    for i in range(d):
        while cs[i] > ct[i]:
            cs[i] -= 1
            v -= stride[i]
            out.append(v)
    for i in reversed(range(d)):
        while cs[i] < ct[i]:
            cs[i] += 1
            v += stride[i]
            out.append(v)
    return out


def check_analyze(tandem, d, L):
    a = run_json(tandem, "analyze", "--dims", d, "--size", L, "--json")
    if a is None:
        return
    V, E = L ** d, d * L ** (d - 1) * (L - 1)
    tag = f"analyze {d}D/{L}"
    check(list(a)[:7] == ["vertices", "edges", "avg_degree", "diameter", "density", "clustering", "connected"],
          f"{tag}: key order {list(a)[:7]}")
    check(a["vertices"] == V and a["edges"] == E, f"{tag}: V {a['vertices']} E {a['edges']}")
    check(math.isclose(a["avg_degree"], 2 * E / V, rel_tol=1e-15), f"{tag}: avg_degree {a['avg_degree']}")
    check(math.isclose(a["density"], 2 * E / (V * (V - 1)), rel_tol=1e-15), f"{tag}: density {a['density']}")
    check(a["diameter"] == d * (L - 1) and a["diameter_exact"] is True, f"{tag}: diameter {a['diameter']}")
    check(a["clustering"] == 0 and a["triangles"] == 0 and a["connected"] is True and a["bipartite"] is True,
          f"{tag}: clustering/connectivity")
    if L >= 3:
        want = {str(d + j): math.comb(d, j) * (L - 2) ** j * 2 ** (d - j) for j in range(d + 1)}
    else:
        want = {str(d): V}
    check(a["degree_histogram"] == want, f"{tag}: histogram {a['degree_histogram']} want {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(os.environ.get("TANDEM_TEST_SEED", random.randrange(2**32)))
    print(f"test_lattice_cli: seed {seed} (replay with --seed {seed})")
    rng = random.Random(seed)
    t = args.tandem

    # 1. analyze
    for d, L in [(2, 3), (3, 10), (4, 10), (5, 10), (1, 2), (6, 2)]:
        check_analyze(t, d, L)
    for _ in range(12):
        d = rng.randint(1, 6)
        Lmax = 2
        while (Lmax + 1) ** d <= 30000 and Lmax < 3000:
            Lmax += 1
        check_analyze(t, d, rng.randint(2, Lmax))

    # 2. path
    for s, tt, want in [(0, 9999, None), (9, 90, None), (1234, 4321, [1234, 1224, 1223, 1222, 1221, 1321, 2321, 3321, 4321])]:
        p = run_json(t, "path", "--dims", 4, "--size", 10, "--from", s, "--to", tt, "--json")
        if p:
            ref = oracle_path(s, tt, 4, 10)
            check(p["path"] == ref and p["hops"] == len(ref) - 1, f"path 4D/10 {s}->{tt}: {p['path']}")
            if want:
                check(p["path"] == want, f"path 4D/10 {s}->{tt}: spec example")
    for _ in range(25):
        d = rng.randint(1, 5)
        L = rng.randint(2, max(2, int(20000 ** (1 / d))))
        V = L ** d
        s, tt = rng.randrange(V), rng.randrange(V)
        use_coords = rng.random() < 0.5
        fs = ",".join(map(str, coords(s, d, L))) if use_coords and d > 1 else s
        ts = ",".join(map(str, coords(tt, d, L))) if use_coords and d > 1 else tt
        p = run_json(t, "path", "--dims", d, "--size", L, "--from", fs, "--to", ts, "--backend", rng.choice(["auto", "cpu", "cuda"]), "--json")
        if p:
            ref = oracle_path(s, tt, d, L)
            check(p["path"] == ref and p["hops"] == sum(abs(a - b) for a, b in zip(coords(s, d, L), coords(tt, d, L))),
                  f"path {d}D/{L} {s}->{tt}: {p['path']} want {ref}")

    # 3. catalytic distance
    for _ in range(6):
        d = rng.randint(1, 4)
        L = rng.randint(2, max(2, int(3000 ** (1 / d))))
        V = L ** d
        s, tt = rng.randrange(V), rng.randrange(V)
        r = run_json(t, "distance", "--dims", d, "--size", L, "--from", s, "--to", tt, "--seed", rng.randrange(2**64), "--json")
        if r:
            l1 = sum(abs(a - b) for a, b in zip(coords(s, d, L), coords(tt, d, L)))
            check(r["distance"] == l1 and r["aux_restored"] is True and r["aux_hash_before"] == r["aux_hash_after"],
                  f"distance {d}D/{L} {s}->{tt}: {r}")

    # 4. xor
    with tempfile.TemporaryDirectory() as tmp:
        src, mid, back = (os.path.join(tmp, n) for n in ("src", "mid", "back"))
        with open(src, "wb") as f:
            f.write(bytes([0x05, 0x0A, 0x0F, 0x14, 0x19]))
        rc, _, err = run(t, "xor", "--in", src, "--out", mid, "--key", "ff00")
        check(rc == 0 and open(mid, "rb").read() == bytes.fromhex("fa0af014e6"), f"xor spec vector: {err}")
        rc, _, err = run(t, "xor", "--in", src, "--out", mid, "--key", "ff00", "--offset", "1")
        check(rc == 0 and open(mid, "rb").read() == bytes.fromhex("05f50feb19"), f"xor spec vector, offset 1: {err}")
        data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5000)))
        with open(src, "wb") as f:
            f.write(data)
        key = bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))).hex()
        off = rng.randrange(100)
        run(t, "xor", "--in", src, "--out", mid, "--key", key, "--offset", off)
        run(t, "xor", "--in", mid, "--out", back, "--key", key, "--offset", off)
        check(open(back, "rb").read() == data and open(mid, "rb").read() != data, "xor key round trip")
        r = run_json(t, "xor", "--in", src, "--out", mid, "--random-seed", "--json")
        if r:
            run(t, "xor", "--in", mid, "--out", back, "--seed", r["seed"])
            check(open(back, "rb").read() == data and r["bytes"] == len(data), "xor random seed round trip")
        rc, out, _ = run(t, "xor", "--in", "-", "--out", "-", "--seed", "0", stdin=bytes(16))
        check(out == bytes.fromhex("afcd1d7b39a820e2f465b9a16a9e786e"), f"xor seed 0 stream: {out.hex()}")

    # 5. bad input
    for cmd, text in [(["analyze", "--dims", 33, "--size", 2], "--dims"),
                      (["analyze", "--dims", 2, "--size", 1], "--size"),
                      (["analyze", "--dims", 2, "--size", 65536], "overflow"),
                      (["path", "--dims", 2, "--size", 3, "--from", 0, "--to", 9], "--to \"9\""),
                      (["path", "--dims", 2, "--size", 3, "--from", "1,2,0", "--to", 0], "3 coordinates"),
                      (["path", "--dims", 2, "--size", 3, "--from", "1,3", "--to", 0], "coordinate 1 = 3"),
                      (["xor", "--in", "-", "--out", "-", "--key", "abc"], "--key")]:
        rc, _, err = run(t, *cmd)
        check(rc != 0 and text in err, f"{' '.join(map(str, cmd))}: exit {rc}, stderr {err.strip()!r} lacks {text!r}")

    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

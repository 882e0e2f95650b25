#!/usr/bin/env python3
"""Oracle test: `tandem seq score --metric lcs` against a plain dynamic-programming LCS in Python.

What: ~20,000 seeded random symbol-list pairs plus every (L, |a|, |b|) combination with |a|+|b| <= 40 and
the worked examples of spec/kato.md 2.5 (E1-E5) are scored by the CLI on two whole files, (a,b) and
(b,a); each ratio must be exactly the double ((2.0*L/T)*100.0)/100.0 (0.0 when T = 0) with L computed by a
textbook O(|a|*|b|) DP over symbol identity (exact float equality and identical repr()).

Why: the engine computes L with a bit-parallel algorithm (64 symbols per machine word, any length) and must
reproduce KATO's token similarity bit for bit, including the x100/100 round trip that moves 71 of the
fractions 2L/T with T <= 40 by one ulp (2/3 -> 0.6666666666666665, spec 2.3). Lengths go up to 300 with
many at the word boundaries (63/64/65, 127/128/129, ...) so the multi-word carry paths run; alphabets go
from 1-4 symbols (long runs of equal symbols) to thousands; edited copies give long LCSs; empty lists on
either or both sides hit the T = 0 guard; Unicode, NUL, empty-string and look-alike symbols check that
symbols are compared by their exact strings. Running both orders checks the measure is symmetric.
Replay a run with --seed.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_common as oc  # noqa: E402

N_RANDOM = 20000

# spec/kato.md 2.5: (name, P, S, KATO token similarity)
EXAMPLES = [
    ("E1", "login browse checkout".split(), "browse search checkout login".split(), 0.5714285714285714),
    ("E2", "A B A".split(), "B C A".split(), 0.6666666666666665),
    ("E3", "start tick tick".split(), ["tick"] * 200, 0.019704433497536946),
    ("E4", "m1 m2 m3 m4 m5 m6 m7".split(), "m1 m2 m3".split(), 0.6),
    ("E4b", "hello world".split(), "help word".split(), 0.0),
    ("E4c", "token1 token2 token3 token4".split(), "token1 token2 token3".split(), 0.8571428571428571),
    ("E5", ["a", "b"] * 100, ["c", "a"], 0.009900990099009901),
]

BOUNDARY_LENS = [63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257, 299, 300]


lcs_dp, lcs_table = oc.lcs_dp, oc.lcs_table


def lcs_ratio(lcs, na, nb):
    t = na + nb
    if t == 0:
        return 0.0
    r = (2.0 * lcs / t) * 100.0
    return r / 100.0


def expect(pair):
    a, b = pair
    return lcs_ratio(lcs_dp(a, b), len(a), len(b)), None


def mutate(rng, seq, alpha, edits):
    return oc.mutate(rng, seq, alpha, edits, max_len=300)


def gen_pair(rng):
    cat = rng.choices(["tiny", "short", "boundary", "long", "large", "derived", "empty", "uni"],
                      [20, 27, 15, 5, 8, 14, 3, 8])[0]
    if cat == "tiny":
        alpha = oc.pick_alphabet(rng, rng.randint(1, 4))
        return cat, (oc.draw(rng, alpha, rng.randint(0, 10)), oc.draw(rng, alpha, rng.randint(0, 10)))
    if cat == "short":
        alpha = oc.pick_alphabet(rng, rng.choice([2, 3, 4, 8, 20]))
        w = oc.zipf_weights(len(alpha), rng.uniform(0, 1.5))
        return cat, (oc.draw(rng, alpha, rng.randint(0, 70), w), oc.draw(rng, alpha, rng.randint(0, 70), w))
    if cat == "boundary":  # one side at a 64-bit word boundary, the other anything
        size = rng.choice([1, 2, 3, 4, 10, 100, 1000])
        alpha = oc.alphabet(rng, "names", size)
        la = rng.choice(BOUNDARY_LENS)
        lb = rng.choice([rng.randint(0, 20), rng.randint(0, 300), rng.choice(BOUNDARY_LENS)])
        a = oc.draw(rng, alpha, la)
        b = oc.draw(rng, alpha, lb) if rng.random() < 0.6 else mutate(rng, a, alpha, rng.randint(0, 30))
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "long":
        alpha = oc.alphabet(rng, "names", rng.choice([2, 4, 16, 64]))
        return cat, (oc.draw(rng, alpha, rng.randint(100, 300)), oc.draw(rng, alpha, rng.randint(100, 300)))
    if cat == "large":
        alpha = oc.alphabet(rng, "names", rng.choice([500, 5000]))
        a = oc.draw(rng, alpha, rng.randint(0, 300))
        b = oc.draw(rng, alpha, rng.randint(0, 300)) if rng.random() < 0.5 else mutate(rng, a, alpha, 20)
        return cat, (a, b)
    if cat == "derived":
        alpha = oc.pick_alphabet(rng, rng.choice([2, 5, 20])) if rng.random() < 0.5 else \
            oc.alphabet(rng, "names", rng.choice([50, 1000]))
        a = oc.draw(rng, alpha, rng.randint(0, 300))
        b = mutate(rng, a, alpha, rng.randint(0, 50))
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "empty":
        alpha = oc.pick_alphabet(rng, rng.randint(1, 10))
        other = oc.draw(rng, alpha, rng.choice([0, 1, rng.randint(0, 300)]))
        return cat, rng.choice([([], other), (other, []), ([], [])])
    if cat == "uni":
        alpha = oc.alphabet(rng, rng.choice(["lookalike", "unicode"]), rng.randint(2, 20))
        if rng.random() < 0.3:
            alpha.append("")
        a = oc.draw(rng, alpha, rng.randint(0, 80))
        b = oc.draw(rng, alpha, rng.randint(0, 80)) if rng.random() < 0.5 else mutate(rng, a, alpha, 10)
        return cat, (a, b)
    raise AssertionError(cat)


def fraction_pairs():
    """Every (L, |a|, |b|) with |a|+|b| <= 40 and L <= min(|a|, |b|): a and b share L symbols."""
    out = []
    for na in range(0, 41):
        for nb in range(0, 41 - na):
            for L in range(0, min(na, nb) + 1):
                a = ["c%d" % i for i in range(L)] + ["x%d" % i for i in range(na - L)]
                b = ["y%d" % i for i in range(nb - L)] + ["c%d" % i for i in range(L)]
                out.append((a, b))
    return out


def main():
    args = oc.parse_args(__doc__)
    rng = oc.random.Random(args.seed)
    checker = oc.Checker()
    t0 = time.monotonic()

    # self-checks of the reference formula against the spec's statements
    moved = sum(1 for t in range(1, 41) for L in range(0, t // 2 + 1) if lcs_ratio(L, t, 0) != 2.0 * L / t)
    for name, p, s, want in EXAMPLES:
        got = lcs_ratio(lcs_dp(p, s), len(p), len(s))
        if got != want or repr(got) != repr(want):
            print("reference disagrees with the spec on %s: %r != %r" % (name, got, want))
            return 2
    if moved != 71:
        print("reference: %d fractions moved by the round trip, spec says 71" % moved)
        return 2

    n = max(1, int(N_RANDOM * args.scale))
    pairs, cats = [], {}
    for _ in range(n):
        cat, p = gen_pair(rng)
        pairs.append(p)
        cats[cat] = cats.get(cat, 0) + 1
    fr = fraction_pairs()
    names = ["random"] * n + ["fraction"] * len(fr) + [e[0] for e in EXAMPLES]
    pairs += fr + [(p, s) for _, p, s, _ in EXAMPLES]
    expected = [expect(p) for p in pairs]
    for k, (name, _, _, want) in enumerate(EXAMPLES):
        assert expected[n + len(fr) + k][0] == want
    t_py = time.monotonic() - t0
    print("%d random pairs (%s), %d fraction pairs, %d spec examples; longest side >= 65 in %d; "
          "python reference %.1f s" % (n, dict(sorted(cats.items())), len(fr), len(EXAMPLES),
                                       sum(1 for a, b in pairs if max(len(a), len(b)) >= 65), t_py), flush=True)

    if args.python_only:
        for k in range(0, len(pairs), 7):  # self-check: row DP against the full table
            a, b = pairs[k]
            if len(a) * len(b) <= 20000:
                if lcs_dp(a, b) == lcs_table(a, b) and lcs_dp(a, b) == lcs_dp(b, a):
                    checker.ok()
                else:
                    checker.fail("self-check", oc.dumps_line(pairs[k]), lcs_table(a, b), lcs_dp(a, b), "DP")
        return checker.summary()

    oc.run_both_orders(args, checker, "lcs", pairs, expected, expect, rng)
    print("total %.1f s" % (time.monotonic() - t0))
    return checker.summary()


if __name__ == "__main__":
    sys.exit(main())

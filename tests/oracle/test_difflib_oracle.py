#!/usr/bin/env python3
"""Oracle test: `tandem seq score --metric difflib [--autojunk]` against CPython's own difflib.

What: tens of thousands of seeded random symbol-list pairs are scored by CPython's
difflib.SequenceMatcher(None, a, b, autojunk=False) and autojunk=True, in both argument orders, and by the
CLI on four whole files ((a,b) and (b,a), each with and without --autojunk). The matching blocks
(get_matching_blocks() without the final sentinel) must be identical and the ratio must be the same double
(exact float equality and identical repr()).

Why: the engine's Ratcliff/Obershelp matcher claims to be CPython's difflib bit for bit (spec/kato.md 2.1,
2.4): the tie-break of find_longest_match (earliest i, then earliest j), the left/right recursion
conditions, sorting and merging of adjacent blocks, the autojunk popular-element purge of seq2 (|b| >= 200,
elements seen more than 1 + |b|//100 times), the extension loops that re-grow a match over purged (popular)
elements on both sides, and ratio() = 2.0*M/T with 1.0 for two empty lists. The pairs are built to hit all
of those: small alphabets (2-4 symbols, heavy repeats, many ties), large alphabets, Zipf-skewed symbols,
edited copies (long matches and many blocks), empty lists on either or both sides, lengths 0..400 with a
large share of |b| >= 200 and popular elements next to matches, purge-threshold boundaries (|b| = 199/200,
counts exactly 1+|b|//100 and one more), Unicode (multi-byte, astral, combining marks, NUL), the empty-string
symbol, and look-alike symbols ("a", "a ", "A", NFC vs NFD, Cyrillic a) that must stay distinct.
Inputs are written half with raw UTF-8 and half with \\u escapes. Replay a run with --seed.
"""

import difflib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_common as oc  # noqa: E402

N_PAIRS = 24000

def long_len(rng):
    """A length with a good share at and above 200 (where autojunk acts)."""
    return rng.choice([rng.randint(0, 400), rng.randint(200, 400), rng.randint(195, 210)])


def gen_pair(rng):
    cat = rng.choices(
        ["tiny", "small_mid", "small_long", "large", "zipf", "derived", "autojunk", "boundary", "empty", "uni"],
        [26, 12, 4, 7, 9, 10, 16, 7, 3, 6])[0]
    if cat == "tiny":  # 2-4 symbols, short: ties everywhere
        alpha = oc.pick_alphabet(rng, rng.randint(2, 4))
        return cat, (oc.draw(rng, alpha, rng.randint(0, 12)), oc.draw(rng, alpha, rng.randint(0, 12)))
    if cat == "small_mid":
        alpha = oc.pick_alphabet(rng, rng.randint(2, 4))
        w = oc.zipf_weights(len(alpha), rng.uniform(0, 2))
        return cat, (oc.draw(rng, alpha, rng.randint(0, 60), w), oc.draw(rng, alpha, rng.randint(0, 60), w))
    if cat == "small_long":  # heavy repeats, long b: every symbol is popular under autojunk
        alpha = oc.pick_alphabet(rng, rng.randint(2, 4))
        a = oc.draw(rng, alpha, rng.randint(0, 120))
        b = oc.draw(rng, alpha, rng.randint(150, 400))
        return cat, (a, b) if rng.random() < 0.7 else (b[:rng.randint(0, 400)], a + b[:50])
    if cat == "large":  # mostly distinct symbols
        alpha = oc.alphabet(rng, "names", rng.choice([500, 2000, 20000]))
        a = oc.draw(rng, alpha, long_len(rng))
        b = oc.draw(rng, alpha, long_len(rng)) if rng.random() < 0.5 else oc.mutate(rng, a, alpha, rng.randint(0, 60))
        return cat, (a, b)
    if cat == "zipf":
        size = rng.choice([5, 10, 20, 50, 200, 1000])
        alpha = oc.pick_alphabet(rng, size) if size <= 20 else oc.alphabet(rng, "names", size)
        w = oc.zipf_weights(len(alpha), rng.uniform(0.8, 1.6))
        la = long_len(rng) if size > 20 else rng.randint(0, 100)  # small alphabets: keep CPython's cost down
        a, b = oc.draw(rng, alpha, la, w), oc.draw(rng, alpha, long_len(rng), w)
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "derived":  # b an edited copy of a: long matches, many blocks, merges
        size = rng.choice([3, 8, 30, 300])
        alpha = oc.pick_alphabet(rng, size) if size <= 30 else oc.alphabet(rng, "names", size)
        la = rng.randint(0, 400 if size > 8 else 200)
        a = oc.draw(rng, alpha, la, oc.zipf_weights(len(alpha), rng.uniform(0, 1.5)))
        b = oc.mutate(rng, a, alpha, rng.randint(0, 40))
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "autojunk":  # long b with a few popular symbols interleaved with rare ones; a copies of slices
        n = rng.randint(200, 400)
        rare = oc.alphabet(rng, "names", rng.choice([50, 200, 1000]))
        npop = rng.randint(1, 4)
        pop = oc.pick_alphabet(rng, npop)
        ptot = rng.uniform(0.05, 0.5)
        b = [rng.choice(pop) if rng.random() < ptot else rng.choice(rare) for _ in range(n)]
        a = []
        for _ in range(rng.randint(0, 6)):  # slices of b, with popular symbols around them
            i = rng.randrange(n)
            j = min(n, i + rng.randint(1, 40))
            if rng.random() < 0.5:
                a.extend(oc.draw(rng, pop, rng.randint(0, 3)))
            a.extend(b[i:j])
            if rng.random() < 0.5:
                a.extend(oc.draw(rng, pop, rng.randint(0, 3)))
            a.extend(oc.draw(rng, rare, rng.randint(0, 3)))
        if rng.random() < 0.3:
            a = oc.mutate(rng, a, pop + rare[:10], rng.randint(0, 10))
        if rng.random() < 0.25 and a and b:  # same first / last element so the extension from (alo,blo) fires
            a[0] = b[0]
        if rng.random() < 0.25 and a and b:
            a[-1] = b[-1]
        return cat, (a, b)
    if cat == "boundary":  # purge threshold: |b| near 200/300/400, a symbol exactly at 1+n//100 or one more
        n = rng.choice([198, 199, 200, 201, 299, 300, 301, 399, 400])
        ntest = n // 100 + 1
        rare = oc.alphabet(rng, "names", 600)
        b = [rng.choice(rare[:rng.choice([20, 600])]) for _ in range(n)]
        syms = oc.pick_alphabet(rng, 3)
        for s in syms:
            for p in rng.sample(range(n), ntest + rng.choice([-1, 0, 0, 1, 1, 2])):
                b[p] = s
        a = oc.mutate(rng, b[rng.randrange(n):][:rng.randint(0, 60)], syms + rare[:20], rng.randint(0, 8))
        if rng.random() < 0.3:
            a = b[:] if rng.random() < 0.5 else oc.mutate(rng, b, syms, 5)
        return cat, (a, b)
    if cat == "empty":
        alpha = oc.pick_alphabet(rng, rng.randint(1, 20))
        other = oc.draw(rng, alpha, rng.choice([0, rng.randint(0, 5), long_len(rng)]))
        return cat, rng.choice([([], other), (other, []), ([], [])])
    if cat == "uni":  # look-alikes, unicode, empty-string symbol
        alpha = oc.alphabet(rng, rng.choice(["lookalike", "unicode"]), rng.randint(2, 20))
        if rng.random() < 0.3:
            alpha.append("")
        la, lb = (rng.randint(0, 40), rng.randint(0, 40)) if rng.random() < 0.8 else (long_len(rng), long_len(rng))
        a = oc.draw(rng, alpha, la)
        b = oc.draw(rng, alpha, lb) if rng.random() < 0.5 else oc.mutate(rng, a, alpha, rng.randint(0, 10))
        return cat, (a, b)
    raise AssertionError(cat)


def expect(a, b, autojunk):
    sm = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
    blocks = [list(x) for x in sm.get_matching_blocks()[:-1]]
    return sm.ratio(), blocks


COMBOS = [("ab", False), ("ab", True), ("ba", False), ("ba", True)]


def label_of(order, aj):
    return "difflib %s%s" % ("(a,b)" if order == "ab" else "(b,a)", " --autojunk" if aj else "")


def main():
    args = oc.parse_args(__doc__)
    rng = oc.random.Random(args.seed)
    n = max(1, int(N_PAIRS * args.scale))
    t0 = time.monotonic()
    pairs, cats = [], {}
    for _ in range(n):
        cat, p = gen_pair(rng)
        pairs.append(p)
        cats[cat] = cats.get(cat, 0) + 1
    long_b = sum(1 for a, b in pairs if len(b) >= 200)
    long_a = sum(1 for a, b in pairs if len(a) >= 200)
    print("%d pairs; categories %s; |b| >= 200 in %d, |a| >= 200 in %d; empty side in %d" % (
        n, dict(sorted(cats.items())), long_b, long_a, sum(1 for a, b in pairs if not a or not b)))

    expected = {}
    for order, aj in COMBOS:
        expected[(order, aj)] = [expect(a, b, aj) if order == "ab" else expect(b, a, aj) for a, b in pairs]
    t_py = time.monotonic() - t0
    purged = sum(1 for k in range(n) if expected[("ab", True)][k] != expected[("ab", False)][k]) + \
        sum(1 for k in range(n) if expected[("ba", True)][k] != expected[("ba", False)][k])
    asym = sum(1 for k in range(n) if expected[("ab", False)][k][0] != expected[("ba", False)][k][0])
    print("python reference: %.1f s; autojunk changes the result in %d of %d (pair, order) cases; "
          "ratio(a,b) != ratio(b,a) in %d pairs" % (t_py, purged, 2 * n, asym), flush=True)

    checker = oc.Checker()
    if args.python_only:
        for order, aj in COMBOS:  # self-check of the reference: ratio = 2*M/T and blocks well formed
            for (a, b), (r, bl) in zip(pairs, expected[(order, aj)]):
                x, y = (a, b) if order == "ab" else (b, a)
                m = sum(k for _, _, k in bl)
                ok = r == (2.0 * m / (len(x) + len(y)) if x or y else 1.0) and all(
                    x[i:i + k] == y[j:j + k] and k > 0 for i, j, k in bl)
                checker.ok() if ok else checker.fail(label_of(order, aj), oc.dumps_line((x, y)), "", "", "self-check")
        return checker.summary()

    lines_ab = [oc.dumps_line(p, rng) for p in pairs]
    lines_ba = [oc.dumps_line((b, a), rng) for a, b in pairs]
    cases_ab = pairs
    cases_ba = [(b, a) for a, b in pairs]
    for order, aj in COMBOS:
        label = label_of(order, aj)
        cli_args = ["--metric", "difflib"] + (["--autojunk"] if aj else [])
        lines = lines_ab if order == "ab" else lines_ba
        run = oc.run_cli(args.tandem, cli_args, lines, args.keep, label.replace(" ", "_").replace("--", ""))
        print("%s: CLI %.2f s" % (label, run.seconds), flush=True)
        checker.check_run(label, run, lines, expected[(order, aj)], True,
                          cases_ab if order == "ab" else cases_ba)

    oc.report_shrunk(
        args, checker,
        cli_args_for=lambda label: ["--metric", "difflib"] + (["--autojunk"] if "autojunk" in label else []),
        expect_for=lambda label: (lambda p, aj=("autojunk" in label): expect(p[0], p[1], aj)))
    print("total %.1f s" % (time.monotonic() - t0))
    return checker.summary()


if __name__ == "__main__":
    sys.exit(main())

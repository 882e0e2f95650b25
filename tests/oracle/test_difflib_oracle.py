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

LOOKALIKE = ["a", "a ", " a", "A", "", " ", "  ", "\u00e1", "a\u0301", "\u0430", "\uff41", "a\u0000",
             "\u0000", "aa", "a\t", "\ufb01", "fi", "a\n", "\"a\"", "\\a", "1", "01", "1.0", "true", "null"]
UNICODE = ["\u00e9t\u00e9", "\u4e2d\u6587", "\U0001F600", "\U0001F600\U0001F601", "\u05e9\u05dc\u05d5\u05dd",
           "\u0915\u094d\u0937", "\U00010348", "\U0010FFFF", "\uFFFD", "\u200b", "e\u0301", "\u00ff\u0100",
           "\u07ff", "\u0800", "\uffff", "\U00010000", "\u2028", "\u00a0", "\x7f", "\x01", "/", "</script>"]


def rand_unicode_symbol(rng):
    """A random string of 0..4 code points from assorted ranges (no surrogates)."""
    n = rng.choice([0, 1, 1, 1, 2, 3, 4])
    out = []
    for _ in range(n):
        lo, hi = rng.choice([(0x20, 0x7e), (0xa0, 0x7ff), (0x800, 0xd7ff), (0xe000, 0xfffd),
                             (0x10000, 0x10ffff), (0x1f300, 0x1f64f), (0x300, 0x36f), (0x1, 0x1f)])
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def alphabet(rng, kind, size):
    if kind == "names":
        return ["s%d" % i for i in rng.sample(range(10 * size + 10), size)]
    if kind == "lookalike":
        return rng.sample(LOOKALIKE, min(size, len(LOOKALIKE)))
    if kind == "unicode":
        pool = set(UNICODE)
        while len(pool) < size + len(UNICODE) // 2:
            pool.add(rand_unicode_symbol(rng))
        return rng.sample(sorted(pool), size)
    raise ValueError(kind)


def pick_alphabet(rng, size):
    return alphabet(rng, rng.choices(["names", "lookalike", "unicode"], [6, 2, 2])[0], size)


def zipf_weights(size, s):
    return [1.0 / (r + 1) ** s for r in range(size)]


def draw(rng, alpha, n, weights=None):
    if weights is None:
        return [rng.choice(alpha) for _ in range(n)]
    return rng.choices(alpha, weights, k=n)


def mutate(rng, seq, alpha, edits):
    """Random inserts, deletes, substitutions and block moves/duplications."""
    s = list(seq)
    for _ in range(edits):
        op = rng.random()
        if op < 0.3 and s:
            del s[rng.randrange(len(s))]
        elif op < 0.6:
            s.insert(rng.randrange(len(s) + 1), rng.choice(alpha))
        elif op < 0.85 and s:
            s[rng.randrange(len(s))] = rng.choice(alpha)
        elif s:
            i = rng.randrange(len(s))
            j = rng.randrange(i, min(len(s), i + 30) + 1)
            chunk = s[i:j]
            if rng.random() < 0.5:
                del s[i:j]
            k = rng.randrange(len(s) + 1)
            s[k:k] = chunk
    return s


def long_len(rng):
    """A length with a good share at and above 200 (where autojunk acts)."""
    return rng.choice([rng.randint(0, 400), rng.randint(200, 400), rng.randint(195, 210)])


def gen_pair(rng):
    cat = rng.choices(
        ["tiny", "small_mid", "small_long", "large", "zipf", "derived", "autojunk", "boundary", "empty", "uni"],
        [24, 10, 4, 7, 13, 14, 14, 6, 3, 5])[0]
    if cat == "tiny":  # 2-4 symbols, short: ties everywhere
        alpha = pick_alphabet(rng, rng.randint(2, 4))
        return cat, (draw(rng, alpha, rng.randint(0, 12)), draw(rng, alpha, rng.randint(0, 12)))
    if cat == "small_mid":
        alpha = pick_alphabet(rng, rng.randint(2, 4))
        w = zipf_weights(len(alpha), rng.uniform(0, 2))
        return cat, (draw(rng, alpha, rng.randint(0, 60), w), draw(rng, alpha, rng.randint(0, 60), w))
    if cat == "small_long":  # heavy repeats, long b: every symbol is popular under autojunk
        alpha = pick_alphabet(rng, rng.randint(2, 4))
        a = draw(rng, alpha, rng.randint(0, 120))
        b = draw(rng, alpha, rng.randint(150, 400))
        return cat, (a, b) if rng.random() < 0.7 else (b[:rng.randint(0, 400)], a + b[:50])
    if cat == "large":  # mostly distinct symbols
        alpha = alphabet(rng, "names", rng.choice([500, 2000, 20000]))
        a = draw(rng, alpha, long_len(rng))
        b = draw(rng, alpha, long_len(rng)) if rng.random() < 0.5 else mutate(rng, a, alpha, rng.randint(0, 60))
        return cat, (a, b)
    if cat == "zipf":
        size = rng.choice([5, 10, 20, 50, 200, 1000])
        alpha = pick_alphabet(rng, size) if size <= 20 else alphabet(rng, "names", size)
        w = zipf_weights(len(alpha), rng.uniform(0.8, 1.6))
        la = long_len(rng) if size > 20 else rng.randint(0, 100)  # small alphabets: keep CPython's cost down
        a, b = draw(rng, alpha, la, w), draw(rng, alpha, long_len(rng), w)
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "derived":  # b an edited copy of a: long matches, many blocks, merges
        size = rng.choice([3, 8, 30, 300])
        alpha = pick_alphabet(rng, size) if size <= 30 else alphabet(rng, "names", size)
        la = rng.randint(0, 400 if size > 8 else 200)
        a = draw(rng, alpha, la, zipf_weights(len(alpha), rng.uniform(0, 1.5)))
        b = mutate(rng, a, alpha, rng.randint(0, 40))
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "autojunk":  # long b with a few popular symbols interleaved with rare ones; a copies of slices
        n = rng.randint(200, 400)
        rare = alphabet(rng, "names", rng.choice([50, 200, 1000]))
        npop = rng.randint(1, 4)
        pop = pick_alphabet(rng, npop)
        ptot = rng.uniform(0.05, 0.5)
        b = [rng.choice(pop) if rng.random() < ptot else rng.choice(rare) for _ in range(n)]
        a = []
        for _ in range(rng.randint(0, 6)):  # slices of b, with popular symbols around them
            i = rng.randrange(n)
            j = min(n, i + rng.randint(1, 40))
            if rng.random() < 0.5:
                a.extend(draw(rng, pop, rng.randint(0, 3)))
            a.extend(b[i:j])
            if rng.random() < 0.5:
                a.extend(draw(rng, pop, rng.randint(0, 3)))
            a.extend(draw(rng, rare, rng.randint(0, 3)))
        if rng.random() < 0.3:
            a = mutate(rng, a, pop + rare[:10], rng.randint(0, 10))
        if rng.random() < 0.25 and a and b:  # same first / last element so the extension from (alo,blo) fires
            a[0] = b[0]
        if rng.random() < 0.25 and a and b:
            a[-1] = b[-1]
        return cat, (a, b)
    if cat == "boundary":  # purge threshold: |b| near 200/300/400, a symbol exactly at 1+n//100 or one more
        n = rng.choice([198, 199, 200, 201, 299, 300, 301, 399, 400])
        ntest = n // 100 + 1
        rare = alphabet(rng, "names", 600)
        b = [rng.choice(rare[:rng.choice([20, 600])]) for _ in range(n)]
        syms = pick_alphabet(rng, 3)
        for s in syms:
            for p in rng.sample(range(n), ntest + rng.choice([-1, 0, 0, 1, 1, 2])):
                b[p] = s
        a = mutate(rng, b[rng.randrange(n):][:rng.randint(0, 60)], syms + rare[:20], rng.randint(0, 8))
        if rng.random() < 0.3:
            a = b[:] if rng.random() < 0.5 else mutate(rng, b, syms, 5)
        return cat, (a, b)
    if cat == "empty":
        alpha = pick_alphabet(rng, rng.randint(1, 20))
        other = draw(rng, alpha, rng.choice([0, rng.randint(0, 5), long_len(rng)]))
        return cat, rng.choice([([], other), (other, []), ([], [])])
    if cat == "uni":  # look-alikes, unicode, empty-string symbol
        alpha = alphabet(rng, rng.choice(["lookalike", "unicode"]), rng.randint(2, 20))
        if rng.random() < 0.3:
            alpha.append("")
        la, lb = (rng.randint(0, 40), rng.randint(0, 40)) if rng.random() < 0.8 else (long_len(rng), long_len(rng))
        a = draw(rng, alpha, la)
        b = draw(rng, alpha, lb) if rng.random() < 0.5 else mutate(rng, a, alpha, rng.randint(0, 10))
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

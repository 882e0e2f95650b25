#!/usr/bin/env python3
"""Oracle test: `tandem seq score --metric char` against a Python DP LCS over Unicode code points.

What: ~12,000 seeded random symbol-list pairs plus the worked examples of spec/kato.md 2.5 (E4, E4b, E4c)
and hand-picked edge cases are scored by the CLI on two whole files, (a,b) and (b,a). Each ratio must be
exactly the double ((1.0 - (A+B-2*Lc)/(A+B))*100.0)/100.0 (1.0 when A+B = 0), where A and B are the
lengths in code points of " ".join(a) and " ".join(b) and Lc is their LCS computed by a textbook DP over
Python str (which is a sequence of code points); exact float equality and identical repr().

Why: KATO's character mode is rapidfuzz fuzz.ratio on the space-joined strings, i.e. InDel/LCS over code
points (spec 2.2, 2.4 item 6), not bytes and not UTF-16 units, with no Unicode normalisation. The engine
decodes UTF-8 symbols into code points and joins them with spaces itself, so the pairs cover 1- to 4-byte
UTF-8 (astral characters arrive as JSON surrogate pairs in the \\u-escaped half of the input lines),
combining marks and NFC vs NFD spellings, NUL and control characters, symbols that contain spaces (so
["a b"] and ["a", "b"] join to the same string), the empty-string symbol (["", ""] joins to " "), empty
lists on either or both sides (the A+B = 0 guard), and joined lengths past 64, 128 and 256 code points so
the multi-word bit-parallel LCS runs. Replay a run with --seed.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_common as oc  # noqa: E402

N_RANDOM = 12000

# spec/kato.md 2.5: (name, P, S, KATO char similarity)
EXAMPLES = [
    ("E4", "m1 m2 m3 m4 m5 m6 m7".split(), "m1 m2 m3".split(), 0.5714285714285714),
    ("E4b", "hello world".split(), "help word".split(), 0.8),
    ("E4c", "token1 token2 token3 token4".split(), "token1 token2 token3".split(), 0.851063829787234),
]

# hand-picked edge cases: (a, b)
EDGES = [
    ([], []), ([""], []), ([""], [""]), (["", ""], []), (["", ""], [" "]), ([" "], ["", ""]),
    (["a b"], ["a", "b"]), (["ab"], ["a", "b"]), (["a"], []), ([], ["a"]), (["\u00e9"], ["e\u0301"]),
    (["\U0001F600"], ["\U0001F600"]), (["\U0001F600"], ["\U0001F601"]), (["\U0001F600x"], ["x"]),
    (["\u0000"], [""]), (["a\u0000b"], ["ab"]), (["\uffff", "\U0010FFFF"], ["\U0010FFFF"]),
    (["x" * 63], ["x" * 64]), (["x" * 64], ["x" * 64]), (["x" * 65], ["y", "x" * 63]),
    (["\u4e2d" * 130], ["\u4e2d" * 127, "\u4e2d"]), (["\U0001F600" * 200], ["\U0001F600" * 100] * 2),
    (["ab" * 300], ["ba" * 300]), (["\U0001F600\u00e9x" * 150, ""], ["", "x\u00e9\U0001F600" * 150]),
]


def char_ratio(a, b):
    sa, sb = " ".join(a), " ".join(b)
    A, B = len(sa), len(sb)
    if A + B == 0:
        return 1.0
    lc = oc.lcs_dp(sa, sb)
    r = (1.0 - (A + B - 2 * lc) / (A + B)) * 100.0
    return r / 100.0


def expect(pair):
    return char_ratio(pair[0], pair[1]), None


def rand_symbol(rng, pool):
    k = rng.random()
    if k < 0.5:
        return rng.choice(pool)
    if k < 0.6:
        return ""
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))


def char_mutate(rng, syms, chars):
    """Edits inside symbols: a code point inserted, deleted or replaced."""
    out = []
    for s in syms:
        if s and rng.random() < 0.3:
            i = rng.randrange(len(s))
            op = rng.random()
            s = s[:i] + s[i + 1:] if op < 0.33 else s[:i] + rng.choice(chars) + s[i + (op >= 0.66):]
        out.append(s)
    return out


def gen_pair(rng):
    cat = rng.choices(["ascii", "unicode", "mixed", "long", "derived", "empty", "lookalike"],
                      [25, 20, 15, 10, 18, 4, 8])[0]
    if cat == "ascii":  # few letters: many partial matches across symbol boundaries
        chars = rng.sample("abcdefgh", rng.randint(1, 4)) + ([" "] if rng.random() < 0.2 else [])
        pool = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(1, 8))]
        la, lb = rng.randint(0, 12), rng.randint(0, 12)
        return cat, ([rand_symbol(rng, pool) for _ in range(la)], [rand_symbol(rng, pool) for _ in range(lb)])
    if cat in ("unicode", "mixed"):
        pool = [oc.rand_unicode_symbol(rng) for _ in range(rng.randint(1, 12))]
        if cat == "mixed":
            pool += rng.sample(oc.UNICODE, 5) + ["ab", "a", "b"]
        la, lb = rng.randint(0, 15), rng.randint(0, 15)
        return cat, ([rand_symbol(rng, pool) for _ in range(la)], [rand_symbol(rng, pool) for _ in range(lb)])
    if cat == "long":  # joined strings well past 64 code points
        chars = list("ab\u00e9\u4e2d") + ["\U0001F600", "\u0301"]
        chars = rng.sample(chars, rng.randint(1, len(chars)))
        pool = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 8))) for _ in range(6)]
        a = [rng.choice(pool) for _ in range(rng.randint(10, 45))]
        b = [rng.choice(pool) for _ in range(rng.randint(0, 45))] if rng.random() < 0.5 else \
            char_mutate(rng, oc.mutate(rng, a, pool, rng.randint(0, 10)), chars)
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "derived":
        pool = [oc.rand_unicode_symbol(rng) for _ in range(8)] + ["tok%d" % i for i in range(8)]
        chars = list("tok0123") + ["\u00e9", "\U0001F600"]
        a = [rng.choice(pool) for _ in range(rng.randint(0, 25))]
        b = char_mutate(rng, oc.mutate(rng, a, pool, rng.randint(0, 6)), chars)
        return cat, (a, b) if rng.random() < 0.5 else (b, a)
    if cat == "empty":
        other = [rng.choice(["", "", "a", "\U0001F600", " "]) for _ in range(rng.randint(0, 4))]
        return cat, rng.choice([([], other), (other, []), ([], [])])
    if cat == "lookalike":
        alpha = oc.alphabet(rng, "lookalike", rng.randint(2, 12))
        return cat, (oc.draw(rng, alpha, rng.randint(0, 12)), oc.draw(rng, alpha, rng.randint(0, 12)))
    raise AssertionError(cat)


def main():
    args = oc.parse_args(__doc__)
    rng = oc.random.Random(args.seed)
    checker = oc.Checker()
    t0 = time.monotonic()
    for name, p, s, want in EXAMPLES:
        got = char_ratio(p, s)
        if got != want or repr(got) != repr(want):
            print("reference disagrees with the spec on %s: %r != %r" % (name, got, want))
            return 2

    n = max(1, int(N_RANDOM * args.scale))
    pairs, cats = [], {}
    for _ in range(n):
        cat, p = gen_pair(rng)
        pairs.append(p)
        cats[cat] = cats.get(cat, 0) + 1
    pairs += EDGES + [(p, s) for _, p, s, _ in EXAMPLES]
    expected = [expect(p) for p in pairs]
    joined = [max(len(" ".join(a)), len(" ".join(b))) for a, b in pairs]
    astral = sum(1 for a, b in pairs if any(ord(c) > 0xffff for c in " ".join(a + b)))
    print("%d random pairs (%s), %d edge cases, %d spec examples; longest joined string >= 65 code points "
          "in %d, >= 129 in %d; astral characters in %d; python reference %.1f s" % (
              n, dict(sorted(cats.items())), len(EDGES), len(EXAMPLES), sum(1 for x in joined if x >= 65),
              sum(1 for x in joined if x >= 129), astral, time.monotonic() - t0), flush=True)

    if args.python_only:
        for k in range(0, len(pairs), 5):  # self-check: row DP against the full table, and symmetry
            sa, sb = " ".join(pairs[k][0]), " ".join(pairs[k][1])
            symmetric = char_ratio(*pairs[k]) == char_ratio(pairs[k][1], pairs[k][0])
            if oc.lcs_dp(sa, sb) == oc.lcs_table(sa, sb) and symmetric:
                checker.ok()
            else:
                checker.fail("self-check", oc.dumps_line(pairs[k]), oc.lcs_table(sa, sb), oc.lcs_dp(sa, sb), "DP")
        return checker.summary()

    oc.run_both_orders(args, checker, "char", pairs, expected, expect, rng)
    print("total %.1f s" % (time.monotonic() - t0))
    return checker.summary()


if __name__ == "__main__":
    sys.exit(main())
